"""Typed state and context of the status graph: one check of the company status page per run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from graphs.ports import StatusSource
from graphs.records import StatusReport


@dataclass(frozen=True)
class StatusContext:
    """The port the status graph reads from; built by the app, passed as `context=` to every run."""

    source: StatusSource


class StatusInput(TypedDict):
    page_url: str  # the page people can open; carried into the report even when the fetch fails


class StatusState(StatusInput, total=False):
    # --- fetch ---
    checked_at: str  # ISO time of the fetch (UTC)
    summary: Any  # the decoded summary.json, unvalidated until `parse`
    fetch_error: str  # why the page could not be fetched, in words a person understands
    # --- parse (or unavailable) ---
    report: StatusReport
    # --- summarise ---
    summary_text: str


class StatusOutput(TypedDict, total=False):
    report: StatusReport
    summary_text: str
