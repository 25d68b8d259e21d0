"""Work on untrusted text is bounded: log lines are cut before any recognizer runs, the e-mail recognizer sees
only address-sized pieces, and the line patterns of the Markdown and reStructuredText readers stay linear on
long runs of one character (the inputs that froze the server for minutes).

Linearity is checked as growth, not time: the same input at 8x the size must cost well under 64x (what a
quadratic pattern costs), best of three runs each, so a busy machine slows both sides alike."""

from __future__ import annotations

import logging
import time

import pytest

from app.adapters.markdown_reader import _DELIMITER_ROW
from app.adapters.markup import _FENCE_OPEN, fenced_code_lines, normalise_source
from app.adapters.parsers import _TABLE_RULE
from app.adapters.redaction.pii import StructuredPii, _segments_for
from app.adapters.redactor import PatternRedactor
from app.adapters.rst_reader import _EXPLICIT_TARGET
from app.includes import IncludeResolver
from app.logging_setup import MAX_LOG_FIELD_CHARS, MAX_LOG_LINE_CHARS, RedactingFilter, bounded_field
from core.lexicon import _EAGER_OPENING
from core.ports import Redaction


class RecordingRedactor:
    """Redacts nothing; remembers the longest text it was asked to check."""

    def __init__(self) -> None:
        self.longest = 0

    def redact(self, text: str) -> Redaction:
        self.longest = max(self.longest, len(text))
        return Redaction(text=text)


def test_a_24000_character_url_in_the_access_log_is_cut_before_the_redactor_sees_it():
    redactor = RecordingRedactor()
    path = "/health?q=" + "b." * 12_000 + "@"
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", path, "1.1", 200),
        None,
    )
    RedactingFilter(redactor).filter(record)
    line = record.getMessage()
    assert redactor.longest <= MAX_LOG_LINE_CHARS
    assert len(line) < MAX_LOG_FIELD_CHARS + 200
    assert "more characters not logged, sha256:" in line and line.startswith("127.0.0.1:5000")


def test_a_long_message_without_arguments_is_cut_too_and_secrets_in_what_is_kept_still_go():
    flt = RedactingFilter(PatternRedactor())
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "pw: K9$mLp2q " + "x " * 20_000, None, None)
    flt.filter(record)
    assert "K9$mLp2q" not in record.getMessage() and len(record.getMessage()) < MAX_LOG_LINE_CHARS + 200


def test_a_cut_value_never_shows_half_of_its_last_word():
    cut = bounded_field("token " + "A" * 30 + " " + "Z" * 5000, 100)
    assert "Z" not in cut and cut.startswith("token " + "A" * 30 + " ")
    assert bounded_field("short", 100) == "short"


def test_two_cut_values_are_told_apart_by_their_hash():
    assert bounded_field("a" * 5000 + "1", 100) != bounded_field("a" * 5000 + "2", 100)


def test_the_email_recognizer_sees_only_address_sized_pieces_and_still_finds_the_address():
    structured = StructuredPii()
    email = next(r for r in structured._recognizers if "EMAIL_ADDRESS" in r.supported_entities)
    text = "b." * 8000 + "@ and write to jane.doe@corp.example please"
    pieces = list(_segments_for(email, text))
    assert pieces and max(len(piece) for _, piece in pieces) <= 64 + 1 + 255
    found = structured.find(text, frozenset({"EMAIL"}))
    assert any(text[s.start : s.end] == "jane.doe@corp.example" for s in found)


def _cost(run, text: str) -> float:
    # this thread's CPU time, best of five: other processes on a busy machine do not count towards it
    best = float("inf")
    for _ in range(5):
        started = time.thread_time()
        run(text)
        best = min(best, time.thread_time() - started)
    return max(best, 1e-5)


def _growth(run, make) -> float:
    return _cost(run, make(16_000)) / _cost(run, make(2_000))


@pytest.mark.parametrize(
    "name, run, make",
    [
        ("fence opening on spaces", _FENCE_OPEN.match, lambda n: " " * n + "x"),
        ("fence opening on tabs", _FENCE_OPEN.match, lambda n: "\t" * n + "x"),
        ("fence opening in quotes", _FENCE_OPEN.match, lambda n: "> " * (n // 2) + " " * (n // 2) + "x"),
        ("pipe-table delimiter row", _DELIMITER_ROW.match, lambda n: " " * n + "x"),
        ("text table rule", _TABLE_RULE.match, lambda n: " " * n + "x"),
        ("reStructuredText role target", _EXPLICIT_TARGET.match, lambda n: "a" + "\t" * n + "x"),
        ("eager yes opening a chat reply", _EAGER_OPENING.match, lambda n: "`" * n),
        ("fenced code lines of a spaces file", lambda t: fenced_code_lines(t.split("\n")), lambda n: " " * n + "x"),
        ("Markdown clean-up of a spaces file", normalise_source, lambda n: "# Spaces\n\nwombat\n" + " " * n + "x\n"),
        (
            "tabs with headings, one group of thousands",
            normalise_source,
            lambda n: "## A\n{start_tabs}\n" + "{tab|a}\n# h\n" * (n // 12) + "{end_tabs}\n",
        ),
        (
            "content tabs with headings side by side",
            normalise_source,
            lambda n: '=== "a"\n    # h\n' * (n // 16),
        ),
        (
            "include scan of an indented list",
            lambda t: IncludeResolver.from_bytes({"a.md": t.encode()}).expand("a.md", t.encode()),
            lambda n: "# List\n\n- top\n" + " " * n + "- nested item\n",
        ),
    ],
)
def test_line_patterns_stay_linear_on_long_runs_of_one_character(name, run, make):
    assert _growth(run, make) < 24, f"{name}: cost grows quadratically"
