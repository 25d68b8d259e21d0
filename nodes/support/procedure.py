"""A documented procedure as the employee receives it: whole, never cut where it leaves the machine worse.

Pure functions over step texts, shared by the walkthrough (nodes/support/troubleshoot.py) and the whole answer
(nodes/support/compose.py):
- `is_fix_attempt` — a step that changes something (restart, reinstall, clear, turn off …) is an attempt at the
  fix; a preamble ("Exit Outlook", "Open Settings", "Select Start") is not, so a "still broken" after it is no
  failed attempt and never counts toward escalation.
- `safe_end` — where a procedure may stop when it must be bounded: never right after a step that takes
  something away ("leave the domain", "stop the service", "sign out") while the steps that put it back follow.
- `asks_all_steps` / `asks_to_advance` — replies during a walkthrough: "show me all the steps", and "next",
  "done", "ok" (move on without counting a failure).
"""

from __future__ import annotations

import re

# A step that changes the machine or the account: doing it is trying the fix.
_CHANGE = re.compile(
    r"\b(re-?start|re-?boot|re-?install|install|uninstall|repair|reset|clear|delete|remove|disable|enable|"
    r"turn (it |them |this |that )?(on|off)|switch (it |them )?(on|off)|update|upgrade|rename|re-?create|rebuild|"
    r"re-?add|add|re-?enter|re-?join|join|leave|unjoin|change|set|sign (out|back in|in again)|log (out|off)|"
    r"re-?connect|disconnect|connect|try (it |this |that |the \w+ )?again|start (it|them|\w+) again|replace|"
    r"re-?register|register|flush|renew|roll ?back|re-?sync|sync|unplug|plug|move|re-?pair|pair|forget|apply|"
    r"save|stop|kill|end task|empty|free up|re-?create|re-?configure|configure|recover|restore|run(?! as)|"
    r"re-?start|re-?launch|reopen|re-?open|re-?map|map|grant|allow|block|unblock|approve|re-?enrol+|enrol+|"
    r"re-?activate|activate|deactivate|unlock|sign in)\b",
    re.I,
)

# A step that takes something away; the procedure must go on to the step that puts it back (or end there).
_TAKES_AWAY = re.compile(
    r"\b(leave|unjoin|stop|disable|disconnect|uninstall|remove|delete|turn (it |them |this |that )?off|"
    r"switch (it |them )?off|sign out|log (out|off)|unplug|shut ?down|unregister|deactivate|end task|kill|"
    r"rename)\b|/leave\b|\bnet stop\b|\bstop-service\b",
    re.I,
)

_ALL_STEPS = re.compile(
    r"\b(all|every|each|the (whole|full|complete|entire|rest of the|remaining))\s+(of\s+)?(the\s+)?(\w+\s+)?"
    r"(steps?|procedure|instructions|list|thing)\b|\ball (of them |of it )?at once\b|"
    r"\b(rest|remaining)( of the)? steps\b|\b(skip|stop) (the )?(step[- ]by[- ]step|one at a time)\b|"
    r"\bjust (show|give|tell|list) me (the )?(steps|procedure|instructions|everything)\b",
    re.I,
)
_ADVANCE = re.compile(
    r"^\s*(next( step| one| please)?|(ok|okay|k|alright|all right|right|got it|sure)(,? (done|next|then))?|"
    r"done|did (it|that)|tried (it|that)|i did( it| that)?|finished|completed?|go on|continue|carry on|"
    r"and then|then what|what'?s next|what now|what next|moving on|move on|ok,? what'?s next)\s*[.!?]*\s*$",
    re.I,
)
_ENDS_INTRO = re.compile(r":\s*$")  # "Do the following:" introduces the sub-steps under it
# "Stop.", "Do not click anything else": a step that tells the employee to hold back changes nothing
_HOLD_BACK = re.compile(r"^\W*(?:stop\s*[.!]|do not\b|don'?t\b|never\b)", re.I)


def is_fix_attempt(step: str) -> bool:
    """The step changes something (an attempt at the fix), not a preamble that opens, selects or exits."""
    first_line = step.strip().splitlines()[0] if step.strip() else ""
    if (_ENDS_INTRO.search(first_line) and "\n" not in step.strip()) or _HOLD_BACK.match(first_line):
        return False
    return bool(_CHANGE.search(step))


def takes_away(step: str) -> bool:
    """Doing this step leaves the machine worse until a later step puts it back (leave, stop, uninstall …)."""
    return bool(_TAKES_AWAY.search(step))


def safe_end(steps: list[str], limit: int) -> int:
    """How many of `steps` to show when at most `limit` fit: all when they fit; else cut before a step that
    takes something away, so the part shown never ends with the machine worse off than it started."""
    if len(steps) <= limit:
        return len(steps)
    end = limit
    while end > 1 and takes_away(steps[end - 1]):
        end -= 1
    return end


def asks_all_steps(text: str) -> bool:
    """The employee wants the whole procedure at once instead of one step at a time."""
    return len(text.split()) <= 16 and bool(_ALL_STEPS.search(text))


def asks_to_advance(text: str) -> bool:
    """ "next", "done", "ok": the step is done, show the next one (not a report that it failed)."""
    return bool(_ADVANCE.match(text))
