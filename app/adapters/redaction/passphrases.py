"""Passwords of more than one word: "my password is correct horse battery staple", "password: Summer24! Winter25!",
'the wifi password is "the quick brown fox"'.

The sentence rules in chat_rules.py take one value after "password is" / "password:" and stop at the first
space, which leaves the rest of a passphrase (or a second password) in the text. Here the value runs on:
- quoted, to its closing quote ("…", '…', “…”, ‘…’), whatever it holds, unless it is a placeholder, a mask,
  or only words that say what the password is like ("not set", "too short");
- unquoted, to the end of the clause — the end of the line, a comma or full stop, or a word that starts a
  new clause ("and", "but", "please", "can") — when every word on the way could be part of a passphrase:
  no function word, verb form, adverb or policy word ("is not working", "must be at least 8 characters",
  "Use your network password", "minimum eight characters" all stay). Three or more words, at least two of
  them neither a status word like "correct" nor a number word; or two tokens that are both password-like
  (digits or symbols in each).
"""

from __future__ import annotations

import re
from typing import Iterator

from app.adapters.redaction.code_shapes import is_participle
from app.adapters.redaction.heuristics import is_masked, is_template
from app.adapters.redaction.spans import PLACEHOLDER, Span
from app.adapters.redaction.values import NOT_A_SECRET, SECRET_WORD, key_name_kind, value_looks_like_secret

SOURCE = "passphrases"

# "my password is", "the wifi key for the guest network was", "passphrase:", "new PIN ="
_LEAD = re.compile(
    rf"\b(?:{SECRET_WORD}|(?:wi-?fi|wireless|wpa2?|network)\s+(?:security\s+)?key)"
    r"(?:\s+for\s+(?:the\s+|my\s+|our\s+)?[\w.@\-]+(?:\s+[\w.@\-]+)?)?\s*"
    r"(?:\b(?:is\s+now|is\s+still|is|was|would\s+be|should\s+be|will\s+be|set\s+to|changed\s+to|reset\s+to)\b\s*:?|[:=])"
    r"[ \t]*",
    re.I,
)
_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»"}
_MAX_QUOTED = 100
_MAX_WORDS = 8
_MAX_TOKEN = 64  # a passphrase's word or a password; a longer run is a key or a paste, for the other rules
_MAX_LINE = 600
_WORD = re.compile(r"[A-Za-z]+")
_TOKEN = re.compile(r"[^\s]+")
_CLAUSE_END_PUNCTUATION = ",.;?!)…"

# Words a passphrase may hold but that also say what a password is like ("is correct", "is weak"): they can be
# part of a run, and do not count towards the two real words a run needs.
_STATUS = frozenset(
    "correct wrong incorrect invalid fine ok okay good bad weak simple easy short long great strong secure insecure "
    "safe unsafe valid new old current same different temporary temp blank empty hidden known unknown stale outdated "
    "obsolete usual secret private default "
    "zero one two three four five six seven eight nine ten eleven twelve sixteen twenty thirty".split()
)
# what a policy or a form says about a password: "Password: minimum eight characters", "alphanumeric only"
_DESCRIPTION = frozenset(
    "minimum maximum min max symbols symbol uppercase lowercase upper lower special alphanumeric numeric numbers "
    "letter character length mixed combination account accounts domain email e-mail mail username user network "
    "windows ad sso vpn system systems least most only enough field fields option optional mandatory "
    "required recommended format above below following attached screenshot".split()
)
# words that start a new clause: the passphrase ended before them
_CLAUSE_STARTERS = frozenset(
    "and but so because please can could which when since though although if it i that then however thanks "
    "thank pls plz cause cos yet or".split()
)


def _is_prose(word: str) -> bool:
    """A word that a sentence about a password uses and a passphrase (almost) never does."""
    lowered = word.lower()
    if lowered in _STATUS:
        return False
    return (
        lowered in NOT_A_SECRET
        or lowered in _DESCRIPTION
        or lowered in _CLAUSE_STARTERS
        or is_participle(lowered)
        or key_name_kind(lowered) is not None
        or "'" in word
        or "’" in word
    )


def _password_like(token: str) -> bool:
    """A token with a digit or a symbol that is a value, not a link, path, address, version or template."""
    if token.isdigit():
        return 1 <= len(token) <= 12
    return (
        any(c.isalnum() for c in token)
        and any(not c.isalpha() for c in token)
        and not PLACEHOLDER.search(token)
        and value_looks_like_secret(token)
    )


def _core(token: str) -> str:
    """The token without the clause's closing punctuation ("staple," -> "staple"; "Winter25!" keeps its '!')."""
    return (token.rstrip(_CLAUSE_END_PUNCTUATION) if not _password_like(token) else token.rstrip(",.;…")) or token


def _quoted(text: str, start: int) -> Span | None:
    close = _QUOTES.get(text[start : start + 1])
    if close is None:
        return None
    end = text.find(close, start + 1, start + 2 + _MAX_QUOTED)
    inner = text[start + 1 : end] if end > 0 else ""
    value = inner.strip()
    if len(value) < 3 or "\n" in inner or is_template(value) or is_masked(value) or PLACEHOLDER.search(value):
        return None
    words = _WORD.findall(value)
    if words and all(_is_prose(w) or w.lower() in _STATUS for w in words) and not any(c.isdigit() for c in value):
        return None  # "not set", "too short", "Enter your password"
    if any(key_name_kind(w) == "PASSWORD" for w in words):
        return None  # 'Password: "Enter password"' is a form's label
    begin = start + 1 + inner.index(value[0])  # after the quote and any space inside it
    return Span(begin, begin + len(value), "PASSWORD", SOURCE)


def _unquoted(text: str, start: int) -> Span | None:
    line_end = text.find("\n", start, start + _MAX_LINE)
    line = text[start : line_end if line_end >= 0 else start + _MAX_LINE]
    run: list[re.Match[str]] = []
    ended = False
    for match in _TOKEN.finditer(line):
        token = match.group(0)
        if len(token) > _MAX_TOKEN:
            return None
        core = _core(token)
        if len(run) == _MAX_WORDS or token in ("-", "–", "—") or core.lower() in _CLAUSE_STARTERS:
            ended = len(run) < _MAX_WORDS
            break
        is_word = core.isalpha()
        if (is_word and _is_prose(core)) or (not is_word and not _password_like(core)):
            return None  # a sentence about the password, a link, a template: not a passphrase
        run.append(match)
        if core != token and token[len(core) :][:1] in _CLAUSE_END_PUNCTUATION:
            ended = True
            break
    else:
        ended = True  # the line ended
    if not ended or not run:
        return None
    cores = [_core(m.group(0)) for m in run]
    content = [c for c in cores if c.lower() not in _STATUS]
    password_like = [c for c in cores if not c.isalpha()]
    if not ((len(run) >= 3 and len(content) >= 2) or (len(run) == 2 and len(password_like) == 2)):
        return None
    last = run[-1]
    return Span(start + run[0].start(), start + last.start() + len(cores[-1]), "PASSWORD", SOURCE)


def passphrases(text: str) -> Iterator[Span]:
    """Multi-word values after a password word and its connector (see the module's docstring)."""
    for lead in _LEAD.finditer(text):
        span = _quoted(text, lead.end()) or _unquoted(text, lead.end())
        if span is not None:
            yield span
