"""The composite redactor: secret detectors + personal-data detectors → resolved spans → placeholders.

`RedactionEngine` holds the detectors (built once); `PolicyRedactor` is the `Redactor` port for one
destination: secrets always, plus the personal-data kinds that destination's policy removes.
Bounded: input beyond `max_chars` is cut (never passed on unchecked), text with nothing that could
be sensitive returns at once, and repeated texts (the same prompt traced by several spans) hit a
small cache keyed by a hash of the text, so no original text is kept in memory.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from typing import Callable, Iterable, Protocol, Sequence

from app.adapters.redaction.kinds import PII_KINDS
from app.adapters.redaction.public_values import public_by_design
from app.adapters.redaction.spans import Span, render, resolve, trimmed
from core.ports import Redaction

# Everything a detector can match contains one of these: a digit (keys, phones, cards, IPs), '@'
# (e-mail, URL credentials), ':' or '=' (assignments, headers), a PEM dash line, a long token, or a
# secret word. Text without any of them ("How do I connect to the VPN?") skips the detectors.
_MAYBE_SECRET = re.compile(
    r"\d|@|[:=]|-----|[A-Za-z0-9_+/\-]{16,}|pass|pw|pin|key|token|secret|auth|bearer|cred|cookie|login|"
    r"pwd|contrase|mdp|[\[({<]\s*(?:at|dot)\s*[\])}>]|＠|﹫",
    re.I,
)
_MAYBE_NAME = re.compile(r"[A-Z][a-z]")
TRUNCATION_NOTICE = " […{n} more characters removed: too long to check for secrets]"
_busy = threading.local()


def redacting_in_this_thread() -> bool:
    """True while this thread is inside a redactor: a library logging from there (spaCy, Presidio,
    tldextract's file lock) must not start a second redaction — the log filter checks this."""
    return getattr(_busy, "depth", 0) > 0


class PiiDetector(Protocol):
    kinds: frozenset[str]

    def find(self, text: str, kinds: frozenset[str]) -> list[Span]: ...


SecretDetector = Callable[[str], list[Span]]


class RedactionEngine:
    """The detectors, built once and shared by every destination's redactor."""

    def __init__(
        self,
        secret_detectors: Iterable[SecretDetector],
        pii_detectors: Iterable[PiiDetector] = (),
        *,
        max_chars: int = 100_000,
    ) -> None:
        self.secret_detectors = list(secret_detectors)
        self.pii_detectors = list(pii_detectors)
        self.max_chars = max_chars
        self.pii_kinds = (
            frozenset().union(*(d.kinds for d in self.pii_detectors)) if self.pii_detectors else frozenset()
        )

    def analyze(self, text: str, pii_kinds: frozenset[str]) -> list[Span]:
        """Resolved, non-overlapping spans to remove from `text` under a policy of `pii_kinds`."""
        return self.analyze_many([text], pii_kinds)[0]

    def analyze_many(self, texts: Sequence[str], pii_kinds: frozenset[str]) -> list[list[Span]]:
        """`analyze` for each of `texts`; a personal-data detector with a batch form (`find_many`: the names
        model reads all the texts as one batch) is called once for all of them."""
        found: list[list[Span]] = []
        for text in texts:
            spans: list[Span] = []
            for detect in self.secret_detectors:
                spans.extend(detect(text))
            if "<" in text or "://" in text:  # a form's anti-forgery token, a signed link's signature: public
                spans = [s for s in spans if not public_by_design(text, s.start, s.end)]
            spans.extend(_repeats(text, spans))
            found.append(spans)
        url_passwords = [[s for s in spans if s.kind == "URL_CREDENTIALS"] for spans in found]
        for detector in self.pii_detectors:
            wanted = pii_kinds & detector.kinds
            if not wanted:
                continue
            find_many = getattr(detector, "find_many", None)
            batch = find_many(list(texts), wanted) if find_many else [detector.find(t, wanted) for t in texts]
            for spans, passwords, more in zip(found, url_passwords, batch):
                # "user:pa55@host" is a URL's password and host, not an e-mail address
                spans.extend(
                    s
                    for s in more
                    if not (s.kind == "EMAIL" and any(u.start < s.end and s.start < u.end for u in passwords))
                )
        return [resolve(text, spans) for text, spans in zip(texts, found)]

    def bounded(self, text: str) -> str:
        if len(text) <= self.max_chars:
            return text
        cut = text.rfind("\n", 0, self.max_chars)
        if cut < self.max_chars // 2:
            cut = text.rfind(" ", 0, self.max_chars)
        if cut < self.max_chars // 2:
            cut = self.max_chars
        return text[:cut] + TRUNCATION_NOTICE.format(n=f"{len(text) - cut:,}")


_MAX_REPEATED = 32


def _repeats(text: str, spans: list[Span]) -> list[Span]:
    """Every other place a found secret's value appears ("Password: S3cret! / Confirm: S3cret!", a
    token pasted twice): found once, removed everywhere. Values of 6+ characters, as whole tokens."""
    found: dict[str, str] = {}
    for span in spans:
        s = trimmed(text, span)
        if s is None:
            continue
        value = text[s.start : s.end]
        if 6 <= len(value) <= 200 and "\n" not in value and s.kind not in PII_KINDS:
            found.setdefault(value, s.kind)
    extra: list[Span] = []
    for value, kind in list(found.items())[:_MAX_REPEATED]:
        at = text.find(value)
        while at >= 0:  # (a substring search: compiling a pattern per value cost more than the rest of this)
            end = at + len(value)
            if not (_is_word_char(text[at - 1 : at]) or _is_word_char(text[end : end + 1])):
                extra.append(Span(at, end, kind, "repeat"))
            at = text.find(value, at + 1)
    return extra


def _is_word_char(ch: str) -> bool:
    return bool(ch) and (ch.isascii() and (ch.isalnum() or ch == "_"))


class PolicyRedactor:
    """The Redactor port for one destination: secrets, plus the personal-data kinds in `pii_kinds`."""

    def __init__(
        self, engine: RedactionEngine, pii_kinds: Iterable[str] = (), *, destination: str = "", cache_size: int = 1024
    ) -> None:
        self.engine = engine
        self.pii_kinds = frozenset(pii_kinds)
        missing = self.pii_kinds - engine.pii_kinds
        if missing:
            raise ValueError(
                f"redaction policy for {destination or 'this destination'} asks for "
                f"{', '.join(sorted(missing))}, which no configured detector finds"
            )
        self.destination = destination
        self._cache: OrderedDict[bytes, Redaction] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def _may_contain(self, text: str) -> bool:
        if _MAYBE_SECRET.search(text):
            return True
        return "PERSON" in self.pii_kinds and bool(_MAYBE_NAME.search(text))

    def spans(self, text: str) -> list[Span]:
        """What would be removed from `text` (benchmarks and tests; the text must already be bounded)."""
        return self.engine.analyze(text, self.pii_kinds) if self._may_contain(text) else []

    def redact(self, text: str, *, pii_exempt: Sequence[tuple[int, int]] = ()) -> Redaction:
        """`text` with secrets and this destination's personal data replaced by placeholders.

        `pii_exempt`: character ranges (company documents quoted in a prompt) where only secrets are
        removed; numbering stays consistent across the whole text."""
        _busy.depth = getattr(_busy, "depth", 0) + 1
        try:
            return self._redact(text, pii_exempt)
        finally:
            _busy.depth -= 1

    def _redact(self, text: str, pii_exempt: Sequence[tuple[int, int]]) -> Redaction:
        if not text:
            return Redaction(text=text)
        if pii_exempt:
            return self._redact_with_exemptions(text, pii_exempt)
        text = self.engine.bounded(text)
        if not self._may_contain(text):
            return Redaction(text=text)
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        result = render(text, self.engine.analyze(text, self.pii_kinds))
        with self._lock:
            self._cache[key] = result
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return result

    def redact_many(self, texts: Sequence[str]) -> list[Redaction]:
        """`redact` for each of `texts`, the ones not cached analysed together (one names-model batch)."""
        _busy.depth = getattr(_busy, "depth", 0) + 1
        try:
            results: list[Redaction | None] = [None] * len(texts)
            todo: dict[bytes, tuple[str, list[int]]] = {}
            for n, text in enumerate(texts):
                bounded = self.engine.bounded(text) if text else text
                if not bounded or not self._may_contain(bounded):
                    results[n] = Redaction(text=bounded)
                    continue
                key = hashlib.blake2b(bounded.encode("utf-8", "surrogatepass"), digest_size=20).digest()
                with self._lock:
                    cached = self._cache.get(key)
                    if cached is not None:
                        self._cache.move_to_end(key)
                if cached is not None:
                    results[n] = cached
                else:
                    todo.setdefault(key, (bounded, []))[1].append(n)
            if todo:
                keys = list(todo)
                analysed = self.engine.analyze_many([todo[k][0] for k in keys], self.pii_kinds)
                for key, spans in zip(keys, analysed):
                    bounded, places = todo[key]
                    result = render(bounded, spans)
                    for n in places:
                        results[n] = result
                    with self._lock:
                        self._cache[key] = result
                        if len(self._cache) > self._cache_size:
                            self._cache.popitem(last=False)
            return [r if r is not None else Redaction(text="") for r in results]
        finally:
            _busy.depth -= 1

    def _redact_with_exemptions(self, text: str, exempt: Sequence[tuple[int, int]]) -> Redaction:
        bounded = self.engine.bounded(text)
        if not self._may_contain(bounded):
            return Redaction(text=bounded)
        spans = [
            s
            for s in self.engine.analyze(bounded, self.pii_kinds)
            if s.kind not in PII_KINDS or not any(a <= s.start and s.end <= b for a, b in exempt)
        ]
        return render(bounded, spans)
