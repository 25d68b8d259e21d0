"""The status page: reading Atlassian Statuspage's summary, and the helpers the support graph uses.

`parse_summary` reads Atlassian Statuspage's `/api/v2/summary.json` (the de-facto standard; its
`status.json` subset parses too). `relevant_incidents` picks the incidents a user's message is
about; `format_status` turns a report into the few lines shown in a chat answer.
"""

from __future__ import annotations

import html
import logging
import re
from typing import Any, Iterable

from core.records import StatusComponent, StatusIncident, StatusReport
from core.text import (
    COMPLAINT_WORDS,
    CONTROL,
    CONVERSATION_WORDS,
    INVISIBLE,
    OUTAGE_WORDS,
    STOP_WORDS,
    WORD_ANY_CASE,
    topic_terms,
)

log = logging.getLogger(__name__)

UNREADABLE = "the status page returned something unreadable"
MAX_UPDATE_CHARS = 500  # an incident update is shown as a snippet, never as a wall of text
_CLOSED_INCIDENT = {"resolved", "postmortem", "completed"}
_CLOSED_MAINTENANCE = {"completed", "resolved", "cancelled", "canceled"}


# --- parsing -------------------------------------------------------------------------------------
def unavailable_report(page_url: str, error: str, checked_at: str = "") -> StatusReport:
    """The report for a page that could not be checked: `error` says why."""
    return StatusReport(
        ok=False,
        page_url=page_url,
        indicator="unknown",
        description="",
        components=[],
        incidents=[],
        maintenances=[],
        checked_at=checked_at,
        error=error,
    )


def parse_summary(summary: Any, *, page_url: str, checked_at: str) -> StatusReport:
    """A decoded summary.json → StatusReport; a wrong shape gives ok=False, never an exception."""
    if not isinstance(summary, dict):
        return unavailable_report(page_url, f"{UNREADABLE}: it is not a Statuspage summary", checked_at)
    status = summary.get("status")
    if not isinstance(status, dict) or not isinstance(status.get("indicator"), str):
        return unavailable_report(page_url, f"{UNREADABLE}: it has no overall status", checked_at)
    lists = {key: summary.get(key) or [] for key in ("components", "incidents", "scheduled_maintenances")}
    wrong = [key for key, value in lists.items() if not isinstance(value, list)]
    if wrong:
        return unavailable_report(page_url, f"{UNREADABLE}: its '{wrong[0]}' is not a list", checked_at)

    components = [
        StatusComponent(name=_clean(c["name"]), status=_state(c.get("status")))
        for c in _leaf_components(lists["components"])
    ]
    incidents = [_incident(i) for i in _named(lists["incidents"]) if _state(i.get("status")) not in _CLOSED_INCIDENT]
    maintenances = [
        _incident(m)
        for m in _named(lists["scheduled_maintenances"])
        if _state(m.get("status")) not in _CLOSED_MAINTENANCE
    ]
    return StatusReport(
        ok=True,
        page_url=page_url,
        indicator=status["indicator"].strip().lower() or "unknown",
        description=_clean(status.get("description")),
        components=components,
        incidents=incidents,
        maintenances=maintenances,
        checked_at=checked_at,
        error=None,
    )


def _named(items: Iterable[Any]) -> list[dict]:
    return [
        item for item in items if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"].strip()
    ]


def _leaf_components(items: Iterable[Any]) -> list[dict]:
    """Components without group containers: a group's status only repeats its members' states."""
    return [c for c in _named(items) if c.get("group") is not True]


def _state(value: Any) -> str:
    return value.strip().lower() if isinstance(value, str) and value.strip() else "unknown"


def _clean(value: Any) -> str:
    """One line of text: control and invisible characters out (a U+202E in "E-mail down TXT.exe" would reverse it)."""
    return " ".join(INVISIBLE.sub("", CONTROL.sub(" ", value)).split()) if isinstance(value, str) else ""


_TAG = re.compile(r"<[^>]{0,500}>")


def _plain(body: Any) -> str:
    """An update body as plain text: Statuspage bodies may carry HTML links."""
    text = _clean(html.unescape(_TAG.sub(" ", body))) if isinstance(body, str) else ""
    return text if len(text) <= MAX_UPDATE_CHARS else text[: MAX_UPDATE_CHARS - 1].rstrip() + "…"


def _incident(raw: dict) -> StatusIncident:
    updates = [u for u in raw.get("incident_updates") or [] if isinstance(u, dict)]
    # newest first is Statuspage's order; sort anyway so a reordered feed still shows the latest news
    updates.sort(key=lambda u: str(u.get("display_at") or u.get("created_at") or ""), reverse=True)
    return StatusIncident(
        id=str(raw.get("id") or ""),
        name=_clean(raw["name"]),
        status=_state(raw.get("status")),
        impact=_state(raw.get("impact")) if raw.get("impact") else "none",
        components=[_clean(c["name"]) for c in _leaf_components(raw.get("components") or [])],
        updated_at=str(raw.get("updated_at") or ""),
        shortlink=str(raw.get("shortlink") or ""),
        latest_update=_plain(updates[0].get("body")) if updates else "",
    )


# --- which incidents a message is about ----------------------------------------------------------
# function words and the vocabulary every outage report shares: they say nothing about *which* service
_IGNORED = STOP_WORDS | CONVERSATION_WORDS | COMPLAINT_WORDS | OUTAGE_WORDS
_GENERIC_QUESTION = re.compile(
    r"\b(outages?|incidents?|status( page)?|down|known (issues?|problems?)|(any|current|ongoing) (issues?|problems?)|"
    r"is it just me|(anything|everything|something) (wrong|broken))\b",
    re.I,
)


def _terms(text: str) -> set[str]:
    """Words that can name a service, stemmed (wi-fi = wifi, "printers" = "printer"), numbers left out."""
    return set(topic_terms(text, _IGNORED, numbers=False))


def _named_terms(text: str) -> set[str]:
    """Terms written as names inside prose: acronyms (VPN) and capitalised words past a sentence's start."""
    names = set()
    for sentence in re.split(r"(?<=[.!?:;])\s+|\n+", text):
        for position, raw in enumerate(WORD_ANY_CASE.findall(sentence)):
            if (raw.isupper() and len(raw) > 1) or (position and raw[0].isupper()):
                names |= _terms(raw)
    return names


def relevant_incidents(report: StatusReport, text: str, keywords: list[str]) -> list[StatusIncident]:
    """The open incidents (and maintenance in progress) that the user's message is about.

    A message naming something ("VPN is down") gets the incidents whose name, affected components
    or latest update name it; a generic question ("is there an outage?", "is anything down") with
    nothing specific in it gets all of them. Incidents come first, then maintenance in progress.
    """
    if not report.get("ok"):
        return []
    candidates = list(report["incidents"]) + [m for m in report["maintenances"] if m["status"] != "scheduled"]
    named = _terms(text)
    if not named and _GENERIC_QUESTION.search(text):
        # keywords are not asked for here: classify infers a topic even from "everything is slow"
        return candidates
    wanted = named | {t for keyword in keywords for t in _terms(keyword)}
    matched = []
    for incident in candidates:
        names = _terms(" ".join([incident["name"], *incident["components"]]))
        # an update is prose: only the services it names count, not words like "request" or "run"
        if wanted & names or wanted & _named_terms(incident["latest_update"]):
            matched.append(incident)
    return matched


# --- the words a user sees -----------------------------------------------------------------------
_COMPONENT_ICON = {
    "operational": "✅",
    "degraded_performance": "⚠️",
    "partial_outage": "🟠",
    "major_outage": "🔴",
    "under_maintenance": "🔧",
}
_IMPACT_ICON = {"critical": "🔴", "major": "🔴", "minor": "⚠️", "none": "⚠️", "maintenance": "🔧"}
MAX_LISTED_OPERATIONAL = 3  # more operational components than this are summarised in one line
MAX_LINES = 8  # per kind (components, incidents, maintenance), so a bad day stays readable
MAX_SNIPPET = 160


def state_label(state: str) -> str:
    """operational → "Operational", partial_outage → "Partial outage"."""
    return state.replace("_", " ").capitalize()


def _words(state: str) -> str:
    return state.replace("_", " ")


def _snippet(text: str) -> str:
    return text if len(text) <= MAX_SNIPPET else text[: MAX_SNIPPET - 1].rstrip() + "…"


def _capped(lines: list[str], what: str) -> list[str]:
    if len(lines) <= MAX_LINES:
        return lines
    return lines[:MAX_LINES] + [f"…and {len(lines) - MAX_LINES} more {what}"]


def _incident_lines(incident: StatusIncident, components: dict[str, str]) -> list[str]:
    impact = incident["impact"]
    detail = _words(incident["status"]) + (f", {impact} impact" if impact not in ("none", "maintenance") else "")
    affected = [
        f"{name} ({state_label(components[name]).lower()})" if name in components else name
        for name in incident["components"]
    ]
    line = f"{_IMPACT_ICON.get(impact, '⚠️')} {incident['name']} ({detail})"
    lines = [line + (f" — affects {', '.join(affected)}" if affected else "")]
    if incident["latest_update"]:
        lines.append(f"   Latest update: {_snippet(incident['latest_update'])}")
    if incident["shortlink"]:
        lines.append(f"   {incident['shortlink']}")
    return lines


def format_status(report: StatusReport, incidents: list[StatusIncident] | None = None) -> str:
    """The status as a few chat lines; with `incidents`, only those (the ones a message is about)."""
    if not report.get("ok"):
        return f"I couldn't check the status page right now ({report.get('error') or 'no reason given'})."
    components = {c["name"]: c["status"] for c in report["components"]}
    if incidents is not None:
        if not incidents:
            return "The status page shows no known incident about this."
        head = (
            "There is a known incident on the status page:"
            if len(incidents) == 1
            else f"There are {len(incidents)} known incidents on the status page:"
        )
        return "\n".join([head, *[line for i in incidents for line in _incident_lines(i, components)]])
    return _overview(report, components)


def _overview(report: StatusReport, components: dict[str, str]) -> str:
    lines = [f"Current status: {report['description']}" if report["description"] else "Current status:"]
    active = {name: i["status"] for i in report["incidents"] + report["maintenances"] for name in i["components"]}
    broken = [
        f"{_COMPONENT_ICON.get(state, '❔')} {name}: {state_label(state)}"
        + (f" ({_words(active[name])})" if name in active else "")
        for name, state in components.items()
        if state != "operational"
    ]
    lines += _capped(broken, "affected components")
    fine = [name for name, state in components.items() if state == "operational"]
    if fine and len(fine) <= MAX_LISTED_OPERATIONAL:
        lines += [f"✅ {name}: Operational" for name in fine]
    elif fine:
        lines.append(f"✅ {'All other' if broken else 'All'} {len(fine)} components operational")
    if report["incidents"]:
        lines.append("Known incidents:")
        lines += [line for i in report["incidents"][:MAX_LINES] for line in _incident_lines(i, components)]
        if len(report["incidents"]) > MAX_LINES:
            lines.append(f"…and {len(report['incidents']) - MAX_LINES} more incidents")
    maintenance = [
        f"🗓️ Scheduled maintenance: {m['name']}"
        if m["status"] == "scheduled"
        else f"🔧 Maintenance in progress: {m['name']}"
        for m in report["maintenances"]
    ]
    lines += _capped(maintenance, "maintenance windows")
    lines.append(f"Status page: {report['page_url']}")
    return "\n".join(lines)
