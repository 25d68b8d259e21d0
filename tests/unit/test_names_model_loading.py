"""The names model loads on a thread of its own: the service starts without waiting, and no text that needs the
model is let through before it has been read by it."""

import threading

import pytest

from app.adapters.memory import SessionStore
from app.adapters.redaction.engine import PolicyRedactor, RedactionEngine
from app.adapters.redaction.loading import LoadingDetector
from app.adapters.redaction.spans import Span
from app.adapters.redactor import redactors_from_settings
from app.adapters.traces import RecordingTracer, TraceStore
from app.adapters.tracing import NullTracer
from app.chat_service import ChatService
from app.settings import Settings
from graphs.support import build_support_graph


class NamesOf:
    """A names detector that knows one name, for the unit tests of the loader."""

    kinds = frozenset({"PERSON"})

    def __init__(self, name: str) -> None:
        self.name = name

    def find(self, text, kinds):
        at = text.find(self.name)
        return [] if at < 0 else [Span(at, at + len(self.name), "PERSON", "test")]

    def find_many(self, texts, kinds):
        return [self.find(text, kinds) for text in texts]


def redactor_with(detector) -> PolicyRedactor:
    return PolicyRedactor(RedactionEngine([], [detector]), {"PERSON"}, destination="trace")


def test_a_text_redacted_while_the_names_model_loads_waits_for_it_and_loses_the_name():
    release = threading.Event()

    def slow_load():
        release.wait(10)
        return NamesOf("Naomi Ryan")

    loading = LoadingDetector(frozenset({"PERSON"}), slow_load)
    assert not loading.ready
    result: list[str] = []
    waiting = threading.Thread(target=lambda: result.append(redactor_with(loading).redact("ask Naomi Ryan").text))
    waiting.start()
    waiting.join(0.3)
    assert waiting.is_alive() and not result  # it waits: nothing was passed on unchecked
    release.set()
    waiting.join(10)
    assert loading.ready and result and "Naomi Ryan" not in result[0]


def test_a_names_model_that_failed_to_load_fails_the_redaction_instead_of_passing_the_text():
    def broken():
        raise OSError("model files missing")

    loading = LoadingDetector(frozenset({"PERSON"}), broken)
    with pytest.raises(RuntimeError, match="could not be loaded: model files missing"):
        redactor_with(loading).redact("ask Naomi Ryan")


def test_redactors_are_built_without_waiting_for_the_names_model():
    settings = Settings(_env_file=None, redact_trace="PERSON")
    redactors = redactors_from_settings(settings, in_use=("memory", "trace"))
    assert "PERSON" in redactors["trace"].pii_kinds
    loaders = [d for d in redactors["trace"].engine.pii_detectors if isinstance(d, LoadingDetector)]
    assert len(loaders) == 1
    loaders[0].wait()  # (the next test reuses the process's loaded pipeline)


def test_a_persons_name_in_a_chat_message_does_not_reach_the_trace(tmp_path, fake_kb_context):
    redactors = redactors_from_settings(Settings(_env_file=None), in_use=("memory", "trace"))
    store = TraceStore(
        tmp_path / "traces.sqlite", redactor=redactors["trace"], document_redactor=redactors["documents"]
    )
    sessions = SessionStore(tmp_path / "sessions.sqlite")
    chat = ChatService(
        build_support_graph(sessions.checkpointer), fake_kb_context(), sessions, RecordingTracer(NullTracer(), store)
    )
    try:
        turn = chat.ask("My colleague Naomi Ryan cannot connect to the VPN since this morning")
        assert store.flush(timeout=300)
        record = store.get(turn.trace_id)
        raw = b"".join(p.read_bytes() for p in tmp_path.glob("traces.sqlite*"))
    finally:
        store.close()
        sessions.close()
    assert record is not None and "VPN" in record["input"]["query"]  # the message is there, without the name
    assert "Naomi" not in str(record) and "Ryan" not in str(record)
    assert b"Naomi" not in raw and b"Ryan" not in raw


def test_texts_redacted_as_a_batch_come_out_as_each_redacted_alone():
    redactors = redactors_from_settings(Settings(_env_file=None), in_use=("memory", "trace"))
    texts = [
        "My colleague Naomi Ryan cannot print",
        "pw: K9$mLp2q for the wifi",
        "call me on +44 20 7946 0958 or at 10.2.3.4",
        "",
        "the vpn drops every hour",
        "My colleague Naomi Ryan cannot print",
    ]
    batch = redactors["trace"].redact_many(texts)
    alone = redactors_from_settings(Settings(_env_file=None), in_use=("memory", "trace"))["trace"]
    assert [r.text for r in batch] == [alone.redact(t).text for t in texts]
    assert "Naomi" not in batch[0].text and "K9$mLp2q" not in batch[1].text and "10.2.3.4" not in batch[2].text
