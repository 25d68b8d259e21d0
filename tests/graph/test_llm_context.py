"""With an LLM configured, the model is given the chosen section whole, its audience and its title path."""

import re
import uuid
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from app.adapters.lexical_index import HybridIndex
from app.adapters.redactor import PatternRedactor
from graphs.support import SupportContext, build_support_graph, turn_input, turn_result
from tests.conftest import index_fixture_kb
from tests.fakes import HashingEmbedder, InMemoryIndex, ScriptedChatModel

KB = Path(__file__).parent.parent / "fixtures" / "procedures_kb"
_SOURCE = re.compile(
    r'<source id="(\d+)" title="([^"]*)" file="([^"]*)" role="([^"]*)" audience="([^"]*)">\n(.*?)\n</source>', re.S
)


@pytest.fixture(scope="module")
def indexed():
    embedder, index = HashingEmbedder(), HybridIndex(InMemoryIndex())
    index_fixture_kb(embedder, index, KB)
    return embedder, index


def ask(indexed, question, *replies):
    embedder, index = indexed
    llm = ScriptedChatModel(list(replies))
    context = SupportContext(
        embedder=embedder, index=index, lexical=index.lexical, redactor=PatternRedactor(), min_score=0.2, llm=llm
    )
    graph = build_support_graph(InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex, "user_id": "alice"}}
    out = turn_result(graph.invoke(turn_input(question), config, context=context, durability="exit"))
    prompts_with_sources = [m[-1].content for m in llm.history if "### SOURCES" in m[-1].content]
    assert prompts_with_sources, "the model was never given sources"
    sources = [
        {"id": int(n), "title": t, "file": f, "role": r, "audience": a, "text": body}
        for n, t, f, r, a, body in _SOURCE.findall(prompts_with_sources[-1])
    ]
    return out, sources


def test_a_walkthrough_gives_the_model_the_whole_procedure_for_the_employee_with_its_title_path(indexed):
    steps = '{"steps": ["Exit Outlook", "Run dsregcmd /leave", "Restart", "Run dsregcmd /join"]}'
    out, sources = ask(
        indexed, "Outlook keeps asking for my password on my work laptop", '{"action": "troubleshoot"}', steps
    )
    assert out["action"] == "troubleshoot"
    first = sources[0]
    assert first["file"] == "kb/device-rejoin.md"
    assert first["title"] == "Outlook keeps asking for your password on a work laptop › Resolution"
    assert first["audience"] == "employee" and first["role"] == "resolution"
    body = first["text"]
    order = [body.index(s) for s in ("Exit Outlook", "dsregcmd /leave", "Restart the laptop", "dsregcmd /join")]
    assert order == sorted(order)  # every step, in the article's order: the leave with the join after it
    assert "Start Outlook and check" in body
    assert "Remove-MgDevice" not in body and "For administrators" in body  # the IT team's part is named, not mixed


def test_an_faq_page_is_given_whole_as_the_answer_to_its_title_question(indexed):
    out, sources = ask(
        indexed,
        "why is the vpn so slow in the evening?",
        '{"action": "answer"}',
        "Backups run across the tunnel in the evening [1].",
    )
    assert out["action"] == "answer"
    first = sources[0]
    assert first["file"] == "kb/vpn-slow-evenings.md" and first["title"].startswith("Why is the VPN slow")
    assert "backups run across the tunnel" in first["text"] and "quicker after 20:00" in first["text"]
    assert first["audience"] == "employee"


def test_an_admin_only_section_reaches_the_model_marked_for_the_it_team(indexed):
    out, sources = ask(
        indexed,
        "how do we store bitlocker recovery keys centrally with group policy?",
        '{"action": "answer"}',
        "Your IT team can turn this on in Group Policy [1].",
    )
    first = sources[0]
    assert first["file"] == "kb/recovery-key-escrow.md" and first["audience"] == "IT team only"
    assert "gpupdate /force" in first["text"]  # the section whole, so the model can tell the IT team what to do
    assert out["action"] == "answer"


def test_a_how_to_longer_than_one_answer_is_guided_so_that_every_step_stays_reachable(indexed):
    embedder, index = indexed
    context = SupportContext(
        embedder=embedder, index=index, lexical=index.lexical, redactor=PatternRedactor(), min_score=0.2
    )
    graph = build_support_graph(InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex, "user_id": "alice"}}
    out = turn_result(
        graph.invoke(turn_input("how do I archive old email to free up mailbox space?"), config, context=context)
    )
    assert out["action"] == "troubleshoot" and "Step 1 of 12:** Open the mail app" in out["answer"]
    for _ in range(2, 13):
        out = turn_result(graph.invoke(turn_input("next"), config, context=context))
    assert "Step 12 of 12:** Restart the mail app" in out["answer"]


def test_the_admin_part_of_an_article_is_named_for_the_it_team_and_goes_into_the_ticket(indexed):
    from tests.fakes import FakeTicketDesk

    embedder, index = indexed
    context = SupportContext(
        embedder=embedder,
        index=index,
        lexical=index.lexical,
        redactor=PatternRedactor(),
        min_score=0.2,
        tickets=FakeTicketDesk(),
    )
    graph = build_support_graph(InMemorySaver())
    config = {"configurable": {"thread_id": uuid.uuid4().hex, "user_id": "alice"}}

    def say(text):
        return turn_result(graph.invoke(turn_input(text), config, context=context))

    first = say("Outlook keeps asking for my password on my work laptop")
    assert first["action"] == "troubleshoot" and "For your IT team" in first["answer"]
    assert "**For administrators**" in first["answer"] and "Remove-MgDevice" not in first["answer"]
    say("show me all the steps")
    offer = say("still broken")
    assert offer["ticket_event"] == "offered"
    assert "For administrators" in offer["ticket_offer"]["description"]


def test_the_model_is_told_when_the_article_says_its_subject_is_retired(indexed):
    out, sources = ask(
        indexed,
        "how do I install the label printer utility",
        '{"action": "answer"}',
        "It was retired [1].",
    )
    first = sources[0]
    assert first["file"] == "kb/label-printer-utility.md"
    assert "retired in June 2025" in first["text"] and "Labels page of the print portal" in first["text"]
