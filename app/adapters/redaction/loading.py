"""A personal-data detector whose model loads on a thread of its own, so the service is ready before it is.

The names model (spaCy plus the name and word lists) takes most of a start's time, and by default only the
trace writer and the LLM's outgoing messages need it: both run after the first /ready. `LoadingDetector`
says at once which kinds it finds (the policy checks them when the redactors are built) and starts building
the real detector; the first text that needs it waits for it (at most `wait_s`), so no text is ever passed on
unchecked: a load that failed or timed out raises, and the caller's redaction fails instead of leaking.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from app.adapters.redaction.engine import _busy
from app.adapters.redaction.spans import Span

log = logging.getLogger(__name__)

LOAD_WAIT_S = 300.0  # a busy machine loads the names model in a minute; a text waits at most this long for it


class LoadingDetector:
    """A PiiDetector (`kinds`, `find`, `find_many`) built by `build` on a background thread."""

    def __init__(
        self, kinds: frozenset[str], build: Callable[[], object], *, wait_s: float = LOAD_WAIT_S, start: bool = True
    ) -> None:
        self.kinds = kinds
        self._wait_s = wait_s
        self._loaded = threading.Event()
        self._detector: object | None = None
        self._error: BaseException | None = None
        self.load_s: float | None = None
        self._thread = threading.Thread(target=self._load, args=(build,), name="names-model-load", daemon=True)
        self._start_lock = threading.Lock()
        if start:
            self.start()

    def start(self) -> None:
        """Begin the load on its thread (once; a later call does nothing). `start=False` leaves it to this call, or
        to the first text that needs the model: the service starts it once it is ready, so that the load does
        not compete with the start-up for the interpreter."""
        with self._start_lock:
            if not self.started:
                self._thread.start()

    def _load(self, build: Callable[[], object]) -> None:
        started = time.perf_counter()
        # what the libraries log while loading is treated like a log line from inside a redactor (not sent
        # through one: a log policy with names would otherwise wait here for this very load)
        _busy.depth = getattr(_busy, "depth", 0) + 1
        try:
            self._detector = build()
            self.load_s = time.perf_counter() - started
        except BaseException as exc:  # noqa: BLE001 — kept and raised to every caller: redaction must not pass
            self._error = exc
        finally:
            _busy.depth -= 1
            self._loaded.set()
        # logged once the model is there: a log policy with names redacts these lines with it, and a line logged
        # before the event was set would wait for the very load that logs it
        if self._error is not None:
            log.error("the names model could not be loaded: %s", self._error)
        else:
            log.info("names model loaded in %.1f s", self.load_s)

    @property
    def started(self) -> bool:
        """True once the load has begun (at once unless built with `start=False`)."""
        return self._thread.ident is not None

    @property
    def failed(self) -> bool:
        """True once the load has ended without a detector (every text that needs it is refused)."""
        return self._loaded.is_set() and self._detector is None

    @property
    def ready(self) -> bool:
        """True once the model is loaded (False while loading or after a failed load)."""
        return self._loaded.is_set() and self._detector is not None

    def wait(self, timeout_s: float | None = None) -> object:
        """The loaded detector, waiting for it (the load starts now if nothing started it); RuntimeError when it
        failed or is not there within the wait."""
        self.start()
        if not self._loaded.wait(self._wait_s if timeout_s is None else timeout_s):
            raise RuntimeError(f"the names model was not loaded within {self._wait_s:g} s")
        if self._detector is None:
            raise RuntimeError(f"the names model could not be loaded: {self._error}")
        return self._detector

    def find(self, text: str, kinds: frozenset[str]) -> list[Span]:
        return self.wait().find(text, kinds)  # type: ignore[attr-defined]

    def find_many(self, texts: list[str], kinds: frozenset[str]) -> list[list[Span]]:
        return self.wait().find_many(texts, kinds)  # type: ignore[attr-defined]
