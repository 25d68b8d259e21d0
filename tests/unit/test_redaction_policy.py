"""The policy per destination and the three places that apply it without the graph: the LLM wrapper,
the logging filter and the trace mask."""

import logging

import pytest
from pydantic import ValidationError

from app.adapters.llm import RedactingChatModel
from app.adapters.redaction import RedactionPolicy, build_engine, build_redactors, parse_pii_kinds
from app.adapters.redaction.engine import PolicyRedactor
from app.adapters.redactor import PatternRedactor
from app.adapters.tracing import MAX_TRACED_CHARS, make_mask
from app.logging_setup import RedactingFilter
from app.settings import Settings
from core.ports import ChatMessage
from tests.fakes import ScriptedChatModel

STRUCTURED = frozenset({"EMAIL", "PHONE", "CREDIT_CARD", "IBAN", "US_SSN", "IP_ADDRESS"})


def test_the_policy_comes_from_settings_and_every_destination_adds_to_memory():
    settings = Settings(_env_file=None, redact_memory="email, phone", redact_llm="IP_ADDRESS", redact_ticket="")
    policy = RedactionPolicy.from_settings(settings)
    assert policy.kinds_for("memory") == {"EMAIL", "PHONE"}
    assert policy.kinds_for("llm") == {"EMAIL", "PHONE", "IP_ADDRESS"}
    assert policy.kinds_for("ticket") == {"EMAIL", "PHONE"}
    assert policy.kinds_for("documents") == frozenset()


def test_an_unknown_kind_in_the_settings_is_refused_with_the_valid_ones_named():
    with pytest.raises(ValidationError, match="unknown personal-data kind.*PASSPORT.*choose from"):
        Settings(_env_file=None, redact_llm="PERSON,PASSPORT")


def test_none_or_empty_means_no_personal_data_is_removed():
    assert parse_pii_kinds("") == frozenset() and parse_pii_kinds("none") == frozenset()


def test_a_policy_asking_for_a_kind_no_detector_finds_is_refused():
    with pytest.raises(ValueError, match="PERSON"):
        PolicyRedactor(PatternRedactor().engine, {"PERSON"}, destination="llm")


def test_the_names_model_is_not_built_when_no_destination_removes_names():
    engine = build_engine(RedactionPolicy(memory=STRUCTURED, llm=frozenset({"IP_ADDRESS"})))
    assert "PERSON" not in engine.pii_kinds


# --- the LLM wrapper ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def structured_redactors():
    policy = RedactionPolicy(memory=frozenset({"EMAIL"}), llm=frozenset({"IP_ADDRESS", "PHONE"}))
    return build_redactors(policy, build_engine(policy))


def test_every_message_to_the_llm_passes_the_llm_policy(structured_redactors):
    inner = ScriptedChatModel(["ok"])
    llm = RedactingChatModel(inner, structured_redactors["llm"])
    llm.complete(
        [
            ChatMessage("system", "be brief"),
            ChatMessage("user", "my laptop 10.20.30.40 and pw: K9$mLp2q, call +44 20 7946 0958"),
        ]
    )
    sent = inner.history[0][1].content
    assert "10.20.30.40" not in sent and "K9$mLp2q" not in sent and "7946" not in sent
    assert "[REDACTED:IP_ADDRESS_1]" in sent and "[REDACTED:PASSWORD]" in sent
    assert llm.name == inner.name


def test_company_documents_quoted_as_sources_keep_their_contacts_but_not_secrets(structured_redactors):
    inner = ScriptedChatModel(["ok"])
    llm = RedactingChatModel(inner, structured_redactors["llm"])
    prompt = (
        '<source id="1" title="Service desk">\nCall +44 20 7946 0000 or mail servicedesk@corp.example; '
        "test key AKIA2E0A8F3B244C9986\n</source>\n\nQUESTION: can you call me on +44 20 7946 0958?"
    )
    llm.complete([ChatMessage("user", prompt)])
    sent = inner.history[0][0].content
    assert "+44 20 7946 0000" in sent and "servicedesk@corp.example" in sent  # the KB's own contacts
    assert "AKIA2E0A8F3B244C9986" not in sent  # but never a secret
    assert "7946 0958" not in sent and "[REDACTED:PHONE_1]" in sent  # the user's own number


# --- the logging filter ------------------------------------------------------------------------------
def test_log_records_are_redacted_in_message_arguments_and_exceptions(caplog):
    logger = logging.getLogger("tests.redaction")
    flt = RedactingFilter(PatternRedactor())
    logger.addFilter(flt)
    try:
        with caplog.at_level(logging.INFO, logger="tests.redaction"):
            logger.info("login for %s with pw: %s", "jane@corp.example", "K9$mLp2q")
            try:
                raise RuntimeError("token ghp_R8mZq2Lk9Xw4Tn7Vb3Hc6Jd1Fs5Gp0Ya2Ue8 refused")
            except RuntimeError:
                logger.exception("call failed")
    finally:
        logger.removeFilter(flt)
    assert "jane@corp.example" not in caplog.text and "K9$mLp2q" not in caplog.text
    assert "ghp_R8mZq2Lk9Xw4Tn7Vb3Hc6Jd1Fs5Gp0Ya2Ue8" not in caplog.text
    assert "login for [REDACTED:EMAIL_1] with pw: [REDACTED:PASSWORD]" in caplog.text
    assert "RuntimeError: token [REDACTED:GITHUB_TOKEN] refused" in caplog.text


def test_a_record_is_redacted_once_even_when_several_filters_see_it():
    flt = RedactingFilter(PatternRedactor())
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "pw: %s", ("K9$mLp2q",), None)
    flt.filter(record)
    flt.filter(record)
    assert record.getMessage() == "pw: [REDACTED:PASSWORD]"


# --- the trace mask ----------------------------------------------------------------------------------
def test_the_trace_mask_redacts_nested_strings_and_hides_bytes():
    mask = make_mask(PatternRedactor())
    out = mask(data={"input": {"query": "pw: K9$mLp2q", "history": ["mail jane@corp.example"]}, "raw": b"\x00" * 10})
    assert out == {
        "input": {"query": "pw: [REDACTED:PASSWORD]", "history": ["mail [REDACTED:EMAIL_1]"]},
        "raw": "<10 bytes>",
    }


def test_a_long_traced_string_is_cut_before_redaction_and_a_cut_key_is_still_removed():
    mask = make_mask(PatternRedactor())
    text = "log: " + "word " * (MAX_TRACED_CHARS // 5 - 10) + "-----BEGIN RSA PRIVATE KEY-----\n" + "QUJD" * 3000
    out = mask(data=text)
    assert len(out) < MAX_TRACED_CHARS + 100 and "QUJDQUJD" not in out


def test_the_names_model_is_loaded_only_for_destinations_in_use():
    from app.adapters.redactor import redactors_from_settings

    settings = Settings(_env_file=None, redact_llm="PERSON", redact_trace="PERSON", redact_log="", redact_ticket="")
    redactors = redactors_from_settings(settings, in_use=("memory", "ticket", "log"))  # no LLM, no tracing
    assert "PERSON" not in redactors["memory"].engine.pii_kinds
    assert redactors["memory"].redact("pw: K9$mLp2q").text == "pw: [REDACTED:PASSWORD]"
    with pytest.raises(RuntimeError, match="llm redactor was not built"):
        redactors["llm"].redact("hello")


def test_uvicorn_access_lines_are_still_written_and_a_token_in_the_path_is_redacted():
    from uvicorn.logging import AccessFormatter

    flt = RedactingFilter(PatternRedactor())
    formatter = AccessFormatter('%(client_addr)s - "%(request_line)s" %(status_code)s', use_colors=False)
    lines = []
    for path in ("/chat", "/reset?access_token=Qm8vT3kLm9WxR2pN7cYb4HsD", "/search?q=my+password+is+Tr0ub4dor%263"):
        record = logging.LogRecord(
            "uvicorn.access",
            logging.INFO,
            __file__,
            1,
            '%s - "%s %s HTTP/%s" %d',
            ("127.0.0.1:5000", "GET", path, "1.1", 401),
            None,
        )
        flt.filter(record)
        lines.append(formatter.format(record))
    assert lines[0] == '127.0.0.1:5000 - "GET /chat HTTP/1.1" 401 Unauthorized'
    assert "Qm8vT3kLm9WxR2pN7cYb4HsD" not in lines[1] and lines[1].endswith('HTTP/1.1" 401 Unauthorized')
    assert "Tr0ub4dor" not in lines[2] and "/search?q=my password is [REDACTED:PASSWORD]" in lines[2]


def test_the_trace_mask_redacts_strings_inside_objects_the_sdk_would_serialise_itself():
    import dataclasses

    from langchain_core.messages import HumanMessage

    @dataclasses.dataclass
    class Block:
        text: str

    @dataclasses.dataclass
    class Parsed:
        title: str
        blocks: list
        pages: int

    class Opaque:
        def __str__(self) -> str:
            return "token ghp_Kp9Lm2Qr5St8Uv1Wx4Yz7Ab0Cd3Ef6Gh9Ij"

    mask = make_mask(PatternRedactor())
    out = mask(
        data={
            "document": Parsed("Wi-Fi", [Block("the admin password is Zq7!Lp4#We5x")], 3),
            "message": HumanMessage("pw: K9$mLp2q"),
            "other": Opaque(),
            "tags": {"a"},
            "n": 2,
            "ok": None,
        }
    )
    text = str(out)
    assert "Zq7!Lp4#We5x" not in text and "K9$mLp2q" not in text and "ghp_Kp9" not in text
    assert out["document"] == {
        "title": "Wi-Fi",
        "blocks": [{"text": "the admin password is [REDACTED:PASSWORD]"}],
        "pages": 3,
    }
    assert out["n"] == 2 and out["ok"] is None and out["tags"] == ["a"]
