"""Fixes the employee says they already tried, and articles that are about doing exactly that.

"The desktop app shows a blank window since this morning's update, reinstalling didn't help" found the app's
install guide and walked its 20 steps: the one thing the employee had already done. A person at a help desk
would not send them back to it. The knowledge base does not hold a fix beyond what they tried; saying so, with the
closest articles and a ticket that records what they tried, is the honest reply.

A fix counts as tried only when the message says it was tried and did not help, in one of these frames:
"already <did it>", "tried <doing it>", "<doing it> didn't help / didn't work / made no difference",
"even after <doing it>", "<did it> but it's still …". A fix named outside such a frame is the problem itself or
its circumstance ("it logs me out after every reboot", "since this morning's update"), not an attempt. The fixes are
the generic first moves of IT support, each with how an employee says it and how a heading names it:
reinstalling, restarting, signing out and back in, clearing the cache, updating.

An article is about a tried fix when its title names that fix and the section the search found is no
troubleshooting section ("Installing the desktop app" › "Install the latest release", not "… › Troubleshooting");
and not when the rest of the message is about that very act ("I can't install it; reinstalling didn't help" asks
about installing). The answer decision lowers such an article's evidence as it does a question with a foreign word
(nodes/support/confidence.py `foreign_penalty`, by `TRIED_PENALTY`): strong evidence still answers.
Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Fix:
    said: str  # how an employee names doing it (a regex alternative, no groups of its own)
    heading: re.Pattern[str]  # how a title or heading names it
    label: str  # how a reply names it: "You've already tried {label}"
    step: re.Pattern[str]  # a procedure's step that does it ("Restart your computer.")


FIXES: dict[str, Fix] = {
    "reinstall": Fix(
        r"re-?install(?:ed|ing|s)?|a\s+re-?install|(?:un)?install(?:ed|ing)\s+(?:it\s+|the\s+app\s+)?(?:again|fresh)"
        r"|a\s+(?:fresh|clean)\s+install",
        re.compile(r"\b(?:re-?)?(?<!un)install(?:s|ing|ation|ed)?\b", re.I),
        "reinstalling",
        re.compile(r"^\W*(?:re-?install|uninstall\b[^.\n]{0,80}\b(?:re-?)?install)", re.I),
    ),
    "restart": Fix(
        r"restart(?:ed|ing|s)?|reboot(?:ed|ing|s)?|a\s+(?:restart|reboot)|turn(?:ed|ing)\s+it\s+off\s+and\s+(?:back\s+)?on"
        r"|power[- ]?cycl(?:ed|ing)",
        re.compile(r"\b(?:restart|reboot)\w*\b", re.I),
        "restarting",
        re.compile(r"^\W*(?:restart|reboot)\b|^\W*turn\s+(?:\S+\s+){0,3}off\s+and\s+(?:back\s+)?on\b", re.I),
    ),
    "sign_out": Fix(
        r"(?:log(?:ged|ging)?|sign(?:ed|ing)?)\s+(?:out|off)\s+and\s+(?:back\s+)?(?:in|on)(?:\s+again)?"
        r"|(?:log(?:ged|ging)|sign(?:ed|ing))\s+back\s+in|re-?log(?:ged|ging)?(?:\s+in)?",
        re.compile(r"\b(?:sign|log)\s*(?:out|off)\b|\bsign\s+(?:back\s+)?in\s+again\b", re.I),
        "signing out and back in",
        re.compile(r"^\W*(?:sign|log)\s+(?:out|off)\b", re.I),
    ),
    "clear_cache": Fix(
        r"clear(?:ed|ing)?\s+(?:the\s+|my\s+|all\s+)?(?:browser(?:'s)?\s+|app\s+)?(?:cache|cookies|browsing\s+data)"
        r"(?:\s+and\s+(?:the\s+|my\s+)?(?:cache|cookies|browsing\s+data))?",
        re.compile(r"\b(?:cache|cookies|browsing\s+data)\b", re.I),
        "clearing the cache",
        re.compile(r"^\W*(?:clear|delete|empty)\b[^.\n]{0,40}\b(?:cache|cookies|browsing\s+data)\b", re.I),
    ),
    "update": Fix(
        r"updat(?:ed|ing)\s+(?:it|the\s+app|everything)|install(?:ed|ing)\s+(?:the\s+|all\s+)?(?:latest\s+)?updates",
        re.compile(r"\b(?:updat\w*|upgrad\w*)\b", re.I),
        "updating",
        re.compile(r"^\W*(?:update\b|install\s+(?:the\s+|all\s+)?(?:latest\s+)?updates\b)", re.I),
    ),
}

_ANY = "|".join(f"(?P<{key}>{fix.said})" for key, fix in FIXES.items())
_NOT = r"(?:didn'?t|did\s+not|doesn'?t|does\s+not|hasn'?t|has\s+not|haven'?t|won'?t|never)"
_OUTCOME = (
    rf"{_NOT}\s+(?:help|work|fix|change|solve|do\s+anything|do\s+a\s+thing)|made\s+no\s+difference|no\s+luck|no\s+joy"
)
_FILLER = r"(?:[\s,;:.-]+[\w'’]+){0,4}?"  # up to four words between the fix and how it went ("the laptop twice")
_FRAMES = (
    # "already reinstalled", "i've already tried restarting", "already did a reboot"
    re.compile(rf"\balready\s+(?:(?:have|had|did|done)\s+)?(?:tried\s+)?(?:to\s+)?(?:{_ANY})\b", re.I),
    # "tried reinstalling", "tried to restart it", "tried a reboot"
    re.compile(rf"\btried\s+(?:to\s+)?(?:{_ANY})\b", re.I),
    # "reinstalling didn't help", "restarted the laptop twice, no luck"
    re.compile(rf"\b(?:{_ANY})(?={_FILLER}[\s,;:.-]+(?:but\s+|and\s+|it\s+|that\s+|this\s+)?(?:{_OUTCOME})\b)", re.I),
    # "even after reinstalling", "still broken after a restart" is the problem's circumstance; "even after" is not
    re.compile(rf"\b(?:even\s+after|despite)\s+(?:{_ANY})\b", re.I),
    # "reinstalled it twice but it's still blank", "restarted and still the same"
    re.compile(
        rf"\b(?:{_ANY})(?={_FILLER}[\s,;-]+(?:but|and)\s+(?:it'?s\s+|it\s+is\s+|its\s+|it\s+)?"
        r"(?:still|same|keeps|kept|continues)\b)",
        re.I,
    ),
)
_TROUBLESHOOTING = re.compile(
    r"\b(?:troubleshoot\w*|problems?|issues?|errors?|fix\w*|not\s+working|known|fails?|failed|can'?t|cannot|won'?t)\b",
    re.I,
)


def _tried_spans(message: str) -> list[tuple[str, int, int]]:
    spans = []
    for frame in _FRAMES:
        for match in frame.finditer(message):
            for key in FIXES:
                if match.group(key):
                    spans.append((key, match.start(), match.end()))
    return spans


def tried_fixes(message: str) -> list[str]:
    """The fixes (keys of FIXES) the message says were tried without success, in the order written; a fix the rest
    of the message is about (its problem is that very act) is left out."""
    spans = sorted(_tried_spans(message), key=lambda span: span[1])
    if not spans:
        return []
    rest = message
    for _, start, end in spans:
        rest = rest[:start] + " " * (end - start) + rest[end:]
    tried = []
    for key, _, _ in spans:
        if key not in tried and not FIXES[key].heading.search(rest):
            tried.append(key)
    return tried


def about_tried_fix(tried: list[str], title: str, section: str) -> str:
    """The tried fix (a key of FIXES) an article is about: its title names it and `section`, the part the search
    found, is no troubleshooting section; "" when there is none."""
    if not tried or _TROUBLESHOOTING.search(section or ""):
        return ""
    return next((key for key in tried if FIXES[key].heading.search(title or "")), "")


def steps_tried(tried: list[str], steps: list[str]) -> int:
    """How many of a procedure's first steps do a fix the employee already tried ("Restart your computer." after
    "I already restarted"): the walkthrough starts after them. Only the steps before any other count: a procedure is
    never entered in its middle."""
    n = 0
    while n < len(steps) and any(FIXES[key].step.search(steps[n]) for key in tried):
        n += 1
    return n


def done_by(tried: list[str], steps: list[str]) -> list[str]:
    """How a reply names the tried fixes that `steps` do ("restarting"), in the order the employee said them."""
    return [FIXES[key].label for key in tried if any(FIXES[key].step.search(step) for step in steps)]


def label(key: str) -> str:
    """How a reply names a tried fix ("reinstalling")."""
    return FIXES[key].label
