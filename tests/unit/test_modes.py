"""Response modes: every mode × profile × LLM availability, the notices users read, and the mode prompts."""

from __future__ import annotations

import re
from string import Template

import pytest

import nodes.support.modes as modes_module
import prompts
from core.errors import InvalidDirective
from nodes.support.modes import (
    GENERAL_KNOWLEDGE_HEADING,
    NOTICE_LLM,
    NOTICE_MIXED,
    NOTICE_RAG_ONLY,
    AnswerPlan,
    ResponseMode,
    parse_mode,
    plan_answer,
)

MIN = 0.7
# the three profile columns of the module docstring: (confidence, has_documents)
PROFILES = {"none": (None, False), "weak": (0.55, True), "confident": (0.82, True)}

#                  none          weak             confident
WITH_LLM = {
    "RAG_ONLY": ("refuse", "documents", "documents"),
    "LLM_ONLY": ("llm", "llm", "llm"),
    "HYBRID": ("llm", "documents+llm", "documents+llm"),
    "SMART_FALLBACK": ("llm", "documents+llm", "documents"),
    "RAG_PRIORITY": ("llm", "documents", "documents"),
    "LLM_PRIORITY": ("llm", "llm", "documents+llm"),
}
WITHOUT_LLM = {  # every plan that needed an LLM: documents when there are any, else needs_llm
    "RAG_ONLY": ("refuse", "documents", "documents"),
    "LLM_ONLY": ("needs_llm", "documents", "documents"),
    "HYBRID": ("needs_llm", "documents", "documents"),
    "SMART_FALLBACK": ("needs_llm", "documents", "documents"),
    "RAG_PRIORITY": ("needs_llm", "documents", "documents"),
    "LLM_PRIORITY": ("needs_llm", "documents", "documents"),
}
CASES = [
    (mode, column, llm, table[mode][i])
    for llm, table in ((True, WITH_LLM), (False, WITHOUT_LLM))
    for mode in table
    for i, column in enumerate(PROFILES)
]


def plan(mode, column: str, llm: bool = True, **kwargs) -> AnswerPlan:
    confidence, has_documents = PROFILES[column]
    return plan_answer(
        mode, confidence=confidence, has_documents=has_documents, llm_available=llm, min_confidence=MIN, **kwargs
    )


@pytest.mark.parametrize(
    "mode, column, llm, expected",
    CASES,
    ids=[f"{m}-{c}-{'llm' if with_llm else 'no_llm'}" for m, c, with_llm, _ in CASES],
)
def test_each_mode_answers_each_profile_as_its_definition_says(mode, column, llm, expected):
    result = plan(ResponseMode(mode), column, llm)
    assert result.source == expected
    assert result.mode is ResponseMode(mode)
    wanted = WITH_LLM[mode][list(PROFILES).index(column)]
    assert result.degraded is (not llm and wanted in ("llm", "documents+llm"))


def test_the_docstring_table_is_the_behaviour():
    rows = re.findall(r"^\| (\w+)\*?\s*\| ([\w+]+)\s*\| ([\w+]+)\s*\| ([\w+]+)\s*\|", modes_module.__doc__, re.M)
    documented = {mode: (none, weak, confident) for mode, none, weak, confident in rows if mode != "mode"}
    assert documented == WITH_LLM


def test_six_modes_and_smart_fallback_is_the_default():
    assert [m.value for m in ResponseMode] == list(WITH_LLM)
    assert modes_module.DEFAULT_MODE is ResponseMode.SMART_FALLBACK
    assert modes_module.DEFAULT_MIN_CONFIDENCE == 0.7


def test_confidence_exactly_at_the_threshold_counts_as_confident():
    result = plan_answer("SMART_FALLBACK", confidence=0.7, has_documents=True, llm_available=True, min_confidence=0.7)
    assert result.source == "documents"


def test_documents_of_unknown_confidence_count_as_weak():
    result = plan_answer(
        ResponseMode.SMART_FALLBACK, confidence=None, has_documents=True, llm_available=True, min_confidence=MIN
    )
    assert result.source == "documents+llm"
    assert "unknown confidence" in result.reason


def test_a_confidence_without_documents_is_ignored():
    result = plan_answer(
        ResponseMode.RAG_ONLY, confidence=0.99, has_documents=False, llm_available=True, min_confidence=MIN
    )
    assert result.source == "refuse"


def test_general_knowledge_answers_tell_the_user_they_are_not_from_the_documentation():
    assert plan(ResponseMode.LLM_ONLY, "confident").notice == NOTICE_LLM
    assert plan(ResponseMode.SMART_FALLBACK, "none").notice == NOTICE_LLM
    assert NOTICE_LLM == "This answer comes from general knowledge, not from our documentation."
    assert plan(ResponseMode.HYBRID, "weak").notice == NOTICE_MIXED


def test_documentation_answers_carry_no_notice():
    assert plan(ResponseMode.SMART_FALLBACK, "confident").notice == ""
    assert plan(ResponseMode.RAG_PRIORITY, "weak").notice == ""


def test_rag_only_refusal_says_why():
    result = plan(ResponseMode.RAG_ONLY, "none")
    assert result.notice == NOTICE_RAG_ONLY
    assert "RAG_ONLY" in result.notice


def test_llm_only_without_an_llm_says_so_and_shows_the_documentation():
    result = plan(ResponseMode.LLM_ONLY, "weak", llm=False)
    assert result.source == "documents"
    assert result.notice == (
        "No LLM is configured, so LLM_ONLY mode cannot answer; here is what the documentation says:"
    )


def test_hybrid_without_an_llm_says_it_cannot_add_general_knowledge():
    result = plan(ResponseMode.HYBRID, "confident", llm=False)
    assert result.source == "documents"
    assert "HYBRID mode cannot add general knowledge" in result.notice


def test_no_llm_and_no_documents_is_needs_llm_with_a_notice_naming_the_mode():
    result = plan(ResponseMode.LLM_PRIORITY, "none", llm=False)
    assert result.source == "needs_llm"
    assert result.degraded
    assert result.notice.startswith("No LLM is configured, so LLM_PRIORITY mode cannot answer")


def test_modes_that_need_no_llm_are_not_degraded_without_one():
    for column in PROFILES:
        assert plan(ResponseMode.RAG_ONLY, column, llm=False) == plan(ResponseMode.RAG_ONLY, column, llm=True)


def test_reason_names_the_mode_and_the_confidence_against_the_threshold():
    reason = plan(ResponseMode.SMART_FALLBACK, "weak").reason
    assert reason.startswith("SMART_FALLBACK:")
    assert "0.55 is below 0.70" in reason
    assert "combined with general knowledge" in reason
    assert "0.82 reaches 0.70" in plan(ResponseMode.SMART_FALLBACK, "confident").reason
    assert "no LLM is available" in plan(ResponseMode.HYBRID, "weak", llm=False).reason


@pytest.mark.parametrize(
    "strategy, none, weak, confident",
    [
        ("hybrid", "llm", "documents+llm", "documents"),
        ("llm_knowledge", "llm", "llm", "documents"),
        ("refuse", "refuse", "refuse", "documents"),
    ],
)
def test_fallback_strategy_decides_what_smart_fallback_does_below_the_threshold(strategy, none, weak, confident):
    got = tuple(plan(ResponseMode.SMART_FALLBACK, c, fallback_strategy=strategy).source for c in PROFILES)
    assert got == (none, weak, confident)


def test_fallback_strategy_refuse_explains_itself():
    assert (
        "not to answer from general knowledge"
        in plan(ResponseMode.SMART_FALLBACK, "weak", fallback_strategy="refuse").notice
    )


@pytest.mark.parametrize("mode", [m for m in ResponseMode if m is not ResponseMode.SMART_FALLBACK])
def test_other_modes_ignore_the_fallback_strategy(mode):
    for column in PROFILES:
        assert plan(mode, column, fallback_strategy="refuse").source == plan(mode, column).source


@pytest.mark.parametrize(
    "raw, mode",
    [
        ("hybrid", ResponseMode.HYBRID),
        ("HYBRID", ResponseMode.HYBRID),
        (" rag_only ", ResponseMode.RAG_ONLY),
        ("Smart-Fallback", ResponseMode.SMART_FALLBACK),
        ("llm priority", ResponseMode.LLM_PRIORITY),
    ],
)
def test_mode_names_are_case_and_separator_insensitive(raw, mode):
    assert parse_mode(raw) is mode
    assert plan_answer(raw, confidence=None, has_documents=False, llm_available=True, min_confidence=MIN).mode is mode


@pytest.mark.parametrize("raw", ["turbo", "", "RAG", 3, None])
def test_an_unknown_mode_is_refused_with_the_accepted_names(raw):
    with pytest.raises(InvalidDirective) as caught:
        parse_mode(raw)
    message = str(caught.value)
    assert all(m.value in message for m in ResponseMode)


def test_programming_errors_in_the_threshold_or_strategy_are_loud():
    with pytest.raises(ValueError):
        plan_answer(ResponseMode.HYBRID, confidence=0.5, has_documents=True, llm_available=True, min_confidence=7)
    with pytest.raises(ValueError):
        plan_answer(
            ResponseMode.HYBRID,
            confidence=0.5,
            has_documents=True,
            llm_available=True,
            min_confidence=0.7,
            fallback_strategy="whatever",
        )


# --- the prompts the LLM paths use -------------------------------------------------------------------------


def placeholders(name: str) -> set[str]:
    template = prompts.load(name)
    return {
        m.group("named") or m.group("braced")
        for m in Template.pattern.finditer(template.template)
        if m.group("named") or m.group("braced")
    }


def test_mode_prompts_use_the_answer_prompt_placeholders_plus_persona():
    assert placeholders("answer_llm_only") == {"persona", "history", "user_os", "question"}
    assert placeholders("answer_hybrid") == {"persona", "sources", "history", "user_os", "question"}
    assert placeholders("answer_hybrid") - placeholders("answer") == {"persona"}


def test_llm_only_prompt_renders_and_forbids_citations():
    text = prompts.render(
        "answer_llm_only",
        persona="(none given)",
        history="(this is the first message)",
        user_os="Windows",
        question="How do I clear my browser cache?",
    )
    assert "How do I clear my browser cache?" in text
    assert "not the company's own documentation" in text
    assert "Do not cite sources" in text
    with pytest.raises(KeyError):
        prompts.render("answer_llm_only", history="", user_os="", question="q")  # persona missing


def test_hybrid_prompt_marks_general_knowledge_with_the_agreed_heading():
    text = prompts.render(
        "answer_hybrid",
        persona="Be brief.",
        sources='<source id="1">VPN: vpn.example</source>',
        history="",
        user_os="macOS",
        question="How do I reach the VPN?",
    )
    assert f'"{GENERAL_KNOWLEDGE_HEADING}"' in text
    assert text.index("### SOURCES") < text.index("### QUESTION")
    assert "[1]" in text
