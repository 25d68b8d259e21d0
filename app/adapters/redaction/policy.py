"""Which personal data each destination may receive, and the redactors that enforce it.

Secrets are removed for every destination; personal-data kinds are configuration. `memory` is the
base: the redact node applies it to the message before any other node sees it, so the graph state,
the checkpoint and everything built from them carry at most what memory keeps. Every other
destination removes the memory kinds plus its own (names go to a ticket, not to an LLM).

| destination | applied by                                   |
|-------------|----------------------------------------------|
| memory      | nodes/support/redact.py (graph state, session store) |
| llm         | RedactingChatModel, every outgoing message   |
| ticket      | the ticket and feedback paths                |
| trace       | the Langfuse mask                            |
| log         | the logging filter, every record             |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.adapters.redaction.chat_rules import find_secrets
from app.adapters.redaction.engine import PiiDetector, PolicyRedactor, RedactionEngine, SecretDetector
from app.adapters.redaction.kinds import parse_pii_kinds
from app.adapters.redaction.loading import LoadingDetector
from core.ports import Redactor

Destination = Literal["memory", "llm", "ticket", "trace", "log", "documents"]
DESTINATIONS: tuple[Destination, ...] = ("memory", "llm", "ticket", "trace", "log")


@dataclass(frozen=True)
class RedactionPolicy:
    """Personal-data kinds removed per destination (secrets are always removed)."""

    memory: frozenset[str]
    llm: frozenset[str] = frozenset()
    ticket: frozenset[str] = frozenset()
    trace: frozenset[str] = frozenset()
    log: frozenset[str] = frozenset()

    @classmethod
    def from_settings(cls, settings) -> RedactionPolicy:
        return cls(
            memory=parse_pii_kinds(settings.redaction.redact_memory),
            llm=parse_pii_kinds(settings.redaction.redact_llm),
            ticket=parse_pii_kinds(settings.redaction.redact_ticket),
            trace=parse_pii_kinds(settings.redaction.redact_trace),
            log=parse_pii_kinds(settings.redaction.redact_log),
        )

    def kinds_for(self, destination: Destination) -> frozenset[str]:
        if destination == "documents":
            return frozenset()  # company documents shown to the LLM as sources: secrets only
        if destination not in DESTINATIONS:
            raise ValueError(f"unknown redaction destination {destination!r}; use one of {', '.join(DESTINATIONS)}")
        return self.memory | getattr(self, destination)

    def needs_names(self, destinations=DESTINATIONS) -> bool:
        return any("PERSON" in self.kinds_for(d) for d in destinations)


def build_engine(
    policy: RedactionPolicy,
    *,
    max_chars: int = 100_000,
    names_model: str | None = None,
    with_detect_secrets: bool = True,
    destinations=DESTINATIONS,
    load_names_in_background: bool = False,
    start_names_load: bool = True,
) -> RedactionEngine:
    """Detectors for `policy`: the names model (seconds to load) only when one of the `destinations`
    in use removes names; `load_names_in_background`: it loads on a thread of its own and the first text
    that needs it waits for it (the service starts without waiting; app/adapters/redaction/loading.py), from
    now on, or (`start_names_load=False`) from `start_background_loads` or that first text on."""
    from app.adapters.redaction.code_shapes import load_vocabulary
    from app.adapters.redaction.detect_secrets_plugins import DetectSecretsPlugins
    from app.adapters.redaction.pii import DEFAULT_SPACY_MODEL, PersonNames, StructuredPii, load_names_pipeline

    load_vocabulary()  # the word list that tells names from random keys: read here, not on the first message
    secret_detectors: list[SecretDetector] = [find_secrets]
    if with_detect_secrets:
        secret_detectors.append(DetectSecretsPlugins().find)
    pii_detectors: list[PiiDetector] = [StructuredPii()]
    if policy.needs_names(destinations):

        def person_names() -> PersonNames:
            return PersonNames(load_names_pipeline(names_model or DEFAULT_SPACY_MODEL))

        pii_detectors.append(
            LoadingDetector(PersonNames.kinds, person_names, start=start_names_load)
            if load_names_in_background
            else person_names()
        )
    return RedactionEngine(secret_detectors, pii_detectors, max_chars=max_chars)


class UnavailableRedactor:
    """Stands in for a destination that is not in use (no LLM, no tracing configured) and whose policy
    needs a detector that was therefore not loaded: using it is a bug, so it fails loudly."""

    def __init__(self, destination: str, missing: frozenset[str]) -> None:
        self.destination, self.missing = destination, missing

    def redact(self, text: str):
        raise RuntimeError(
            f"the {self.destination} redactor was not built ({', '.join(sorted(self.missing))} "
            f"need a model that is only loaded when {self.destination} is configured)"
        )


def start_background_loads(redactors: dict[str, Redactor]) -> None:
    """Start the loads that building the redactors left for later (`start_names_load=False`); a no-op for the
    others, and for a load already started."""
    for redactor in redactors.values():
        for detector in getattr(getattr(redactor, "engine", None), "pii_detectors", ()):
            if isinstance(detector, LoadingDetector):
                detector.start()


def build_redactors(policy: RedactionPolicy, engine: RedactionEngine) -> dict[str, Redactor]:
    """One redactor per destination (plus `documents`: secrets only), all sharing one engine."""
    redactors: dict[str, Redactor] = {}
    for destination in (*DESTINATIONS, "documents"):
        kinds = policy.kinds_for(destination)
        missing = kinds - engine.pii_kinds
        redactors[destination] = (
            UnavailableRedactor(destination, missing)
            if missing
            else PolicyRedactor(engine, kinds, destination=destination)
        )
    return redactors
