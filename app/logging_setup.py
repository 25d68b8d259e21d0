"""Logging configuration: one line per event, with the logger name; no print() in library code.

Every log record passes the `log` destination's redactor (install_log_redaction): message, arguments,
exception text and stack. It is installed through the record factory rather than on one handler, so
records of every logger reach every handler (uvicorn's own, pytest's capture) already redacted.

Bounded: a log line is written for every request, before any check of who sent it, so its cost must not
grow with what a stranger puts in a URL. Each argument is cut to MAX_LOG_FIELD_CHARS and the message to
MAX_LOG_LINE_CHARS *before* any recognizer sees it; what is cut is replaced by its length and a short hash
(two requests with the same long value can still be matched up, and nothing of it is shown).
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from urllib.parse import unquote_plus

from app.adapters.redaction.engine import redacting_in_this_thread
from core.ports import Redactor

# Third-party warnings a deskmate operator cannot act on: they describe the library's own defaults, not a
# problem with the deployment. Each is dropped at its own logger, by what it says, so a new warning still shows.
NON_ACTIONABLE_WARNINGS: dict[str, tuple[str, ...]] = {
    # the names model labels more entity kinds than the redactor asks for; the extra ones are discarded anyway
    "presidio-analyzer": (
        "is not mapped to a Presidio entity",
        "falling back to CPU",
        "Recognizer not added to registry",
        "language is not supported by registry",
    ),
}


class DropNonActionable(logging.Filter):
    """Drops records whose message contains one of `phrases`; everything else passes."""

    def __init__(self, phrases: tuple[str, ...]) -> None:
        super().__init__()
        self.phrases = phrases

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 — a broken format string: keep the record, the handler shows it
            return True
        return not any(phrase in message for phrase in self.phrases)


def quiet_third_party_loggers() -> None:
    """Third-party start-up chatter off: library INFO below WARNING, non-actionable warnings dropped,
    so a start shows one line per thing started."""
    for noisy in (
        "httpx",
        "chromadb",
        "sentence_transformers",
        "urllib3",
        "opentelemetry",
        "presidio-analyzer",
        "transformers",
        "huggingface_hub",
    ):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    for name, phrases in NON_ACTIONABLE_WARNINGS.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, DropNonActionable) for f in logger.filters):
            logger.addFilter(DropNonActionable(phrases))


def configure_logging(level: str = "INFO") -> None:
    root = logging.getLogger()
    if not any(getattr(h, "_deskmate", False) for h in root.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler._deskmate = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(level.upper())
    quiet_third_party_loggers()


MAX_LOG_FIELD_CHARS = 2_000
MAX_LOG_LINE_CHARS = 8_000
_TOKEN_TAIL = re.compile(r"[^\s&?/=;,]{1,200}$")  # a value cut in its middle is dropped whole, not half-shown


def bounded_field(text: str, limit: int) -> str:
    """`text` if it is at most `limit` characters; else its start, its last partial word dropped, and a note
    with the number of characters left out and a hash of the whole value."""
    if len(text) <= limit:
        return text
    kept = text[:limit]
    tail = _TOKEN_TAIL.search(kept)
    if tail and tail.start() > 0:
        kept = kept[: tail.start()]
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{kept}[…{len(text) - len(kept):,} more characters not logged, sha256:{digest}]"


class RedactingFilter(logging.Filter):
    """Applies a redactor to a record's message and arguments (merged: an argument may be the secret),
    its exception text and its stack; the record then carries only redacted text."""

    REENTRANT_MESSAGE = "[log record emitted while redacting another; not shown]"

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor
        self._busy = threading.local()

    def _clean(self, text: str, limit: int = MAX_LOG_LINE_CHARS) -> str:
        return self.redactor.redact(bounded_field(text, limit)).text

    def _clean_argument(self, value: str) -> str:
        """An argument redacted; a URL-encoded one (`/search?q=my+password+is+…%263`) is read decoded too."""
        value = bounded_field(value, MAX_LOG_FIELD_CHARS)
        if "%" in value or "+" in value:
            decoded = unquote_plus(value)
            redacted = self._clean(decoded, MAX_LOG_FIELD_CHARS)
            if redacted != decoded:
                return redacted
        return self._clean(value, MAX_LOG_FIELD_CHARS)

    def _redacted(self, record: logging.LogRecord, message: str) -> tuple[object, tuple]:
        """(msg, args) that render the redacted message. The arguments are kept, each redacted, when what they
        render holds nothing the redactor would still remove as a whole — formatters that read them (uvicorn's
        access log unpacks client, method, path, version and status) keep working; otherwise the message alone."""
        if not record.args or not isinstance(record.args, tuple):
            return self._clean(message), ()
        args = tuple(self._clean_argument(a) if isinstance(a, str) else a for a in record.args)
        try:
            rendered = str(record.msg) % args
        except Exception:  # noqa: BLE001 — a broken format string: the message alone
            return self._clean(message), ()
        # (the rendered line is built from bounded arguments: a secret split across two of them is still seen)
        cleaned = self._clean(rendered)
        return (record.msg, args) if cleaned == rendered else (cleaned, ())

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "_deskmate_redacted", False):
            return True
        record._deskmate_redacted = True
        if (
            getattr(self._busy, "active", False) or redacting_in_this_thread()
        ):  # a library logging from inside a redactor
            record.msg, record.args, record.exc_info, record.exc_text = self.REENTRANT_MESSAGE, (), None, None
            return True
        self._busy.active = True
        try:
            try:
                message = record.getMessage()
            except Exception:  # a broken format string must not hide the record; show its parts
                message = f"{record.msg} {record.args!r}"
            record.msg, record.args = self._redacted(record, message)
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = self._clean(record.exc_text)
            if record.stack_info:
                record.stack_info = self._clean(record.stack_info)
        finally:
            self._busy.active = False
        return True


_filter: RedactingFilter | None = None
_filter_guard = threading.Lock()


def install_log_redaction(redactor: Redactor) -> RedactingFilter:
    """Redact every log record created from now on with `redactor` (a second call swaps the redactor)."""
    global _filter
    with _filter_guard:
        if _filter is not None:
            _filter.redactor = redactor
            return _filter
        _filter = RedactingFilter(redactor)
        installed = _filter
        make_record = logging.getLogRecordFactory()

        def redacted_record(*args, **kwargs) -> logging.LogRecord:
            record = make_record(*args, **kwargs)
            installed.filter(record)
            return record

        logging.setLogRecordFactory(redacted_record)
        return installed
