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


def test_a_load_left_for_later_begins_when_started_or_when_the_first_text_needs_it():
    loads: list[str] = []

    def load():
        loads.append("loaded")
        return NamesOf("Naomi Ryan")

    started = LoadingDetector(frozenset({"PERSON"}), load, start=False)
    needed = LoadingDetector(frozenset({"PERSON"}), load, start=False)
    threading.Event().wait(0.2)
    assert loads == [] and not (started.started or needed.started)  # nothing loads on its own
    started.start()
    started.start()  # (a second start does nothing)
    started.wait(10)
    assert loads == ["loaded"] and started.ready
    # nobody started this one: the first text that needs it starts the load and waits for it, never passes
    assert "Naomi Ryan" not in redactor_with(needed).redact("ask Naomi Ryan").text
    assert loads == ["loaded", "loaded"]


def test_the_service_starts_the_names_model_and_the_parse_workers_only_once_the_rest_is_ready(
    make_settings, monkeypatch
):
    """The lifespan builds the redactors with the names model's load left for later, and the parse sandbox
    without its workers, and starts both just before the service answers: they do not compete with the start-up."""
    from fastapi.testclient import TestClient

    import app.resources as resources_module
    from app.main import create_app
    from tests.fakes import HashingEmbedder

    built = {}
    build_resources = resources_module.build_resources

    def recording_build(*args, **kwargs):
        resources = build_resources(*args, **kwargs)
        loaders = [d for d in resources.redactors["trace"].engine.pii_detectors if isinstance(d, LoadingDetector)]
        built["loaders"] = loaders
        built["started at build"] = [loader.started for loader in loaders] + [resources.parser.started]
        built["parser"] = resources.parser
        return resources

    monkeypatch.setattr("app.main.build_resources", recording_build)
    application = create_app(make_settings(kb_dir=None), embedder=HashingEmbedder())
    with TestClient(application, base_url="http://localhost") as client:
        assert client.get("/ready").status_code == 200
        assert built["started at build"] == [False, False]  # not while the stores opened and the KB was synced
        assert built["loaders"][0].started and built["parser"].started  # started by the time the service answers
        assert client.get("/ready").json()["redaction"]["names_model"] in ("loading", "loaded")
        built["loaders"][0].wait()
        assert client.get("/ready").json()["redaction"]["names_model"] == "loaded"


def test_ready_tells_whether_the_names_model_is_loading_loaded_failed_or_off():
    from app.readiness import names_model_state

    release = threading.Event()
    loading = LoadingDetector(frozenset({"PERSON"}), lambda: release.wait(10) and NamesOf("Naomi Ryan"))
    assert names_model_state({"trace": redactor_with(loading)}) == "loading"
    release.set()
    loading.wait(10)
    assert names_model_state({"trace": redactor_with(loading), "llm": redactor_with(loading)}) == "loaded"

    def broken():
        raise OSError("model files missing")

    failed = LoadingDetector(frozenset({"PERSON"}), broken)
    with pytest.raises(RuntimeError):
        failed.wait(10)
    assert names_model_state({"trace": redactor_with(loading), "llm": redactor_with(failed)}) == "failed"
    assert names_model_state({"memory": redactor_with(NamesOf("Naomi Ryan"))}) == "off"


def test_the_line_that_says_the_names_model_loaded_is_redacted_with_that_model_not_left_waiting_for_it():
    import logging

    from app.adapters.redaction import loading as loading_module

    loading = LoadingDetector(frozenset({"PERSON"}), lambda: NamesOf("Naomi Ryan"), wait_s=3, start=False)
    seen: list[str] = []

    class NamesPolicy(logging.Filter):  # a log policy that removes names: it needs the model for every line
        def filter(self, record):
            try:
                seen.append(redactor_with(loading).redact(record.getMessage()).text)
            except RuntimeError as exc:
                seen.append(f"failed: {exc}")
            return True

    policy = NamesPolicy()
    logger = logging.getLogger(loading_module.__name__)
    logger.addFilter(policy)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        loading.start()
        loading.wait(10)
        loading._thread.join(10)
    finally:
        logger.removeFilter(policy)
        logger.setLevel(level)
    assert [line for line in seen if "names model loaded" in line] and not [s for s in seen if s.startswith("failed")]
