"""A small Jira REST API v2 client: create an issue, search by JQL, comment, transition to done.

Every non-2xx answer, timeout or connection failure becomes a `JiraError` with the HTTP status and a
short reason an operator can act on. A 429 is retried once when Jira asks for at most 2 s of patience;
nothing else is retried (the ticket already exists locally, so waiting helps no one).

How deskmate finds its issues again: every issue it creates carries the labels `deskmate`,
`deskmate-<local id>` and `deskmate-user-<first 16 hex of sha256(user id)>` (a hash, so no user
name or address lands in Jira). Status refreshes look the linked issues up by key (`key in (…)`, one
search); the user label lets IT query one person's tickets (`labels = deskmate-user-…`).
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any, Callable, Sequence

import httpx

from core.errors import JiraError
from core.records import Ticket

log = logging.getLogger(__name__)

PRIORITY_LEVELS = ("low", "medium", "high", "critical")
DEFAULT_PRIORITY_NAMES = ("Low", "Medium", "High", "Highest")
MAX_RETRY_AFTER_S = 2.0
MAX_SEARCH_RESULTS = 50
SEARCH_PATH = "/rest/api/2/search"
SEARCH_JQL_PATH = "/rest/api/2/search/jql"  # Jira Cloud removed GET /search (CHANGE-2046) in 2025
DONE_NAMES = ("done", "closed", "resolved", "resolve issue", "close issue", "close")
_ISSUE_KEY = re.compile(r"^[A-Z][A-Z0-9_]*-[0-9]+$")
_SUMMARY_CHARS = 250  # Jira's limit is 255
_DESCRIPTION_CHARS = 30_000  # Jira's limit is 32,767
_MESSAGE_CHARS = 2_000
_REASON_DETAIL_CHARS = 200


@dataclass(frozen=True)
class JiraIssue:
    key: str
    url: str
    summary: str = ""
    status: str = ""  # the status name, e.g. "In Progress"
    status_category: str = ""  # new | indeterminate | done

    @property
    def is_done(self) -> bool:
        return self.status_category == "done"


def user_label(user_id: str) -> str:
    """The label that marks a user's issues without putting their id into Jira."""
    return "deskmate-user-" + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:16]


def _noformat(text: str) -> str:
    # user text is shown verbatim: no wiki markup, and it cannot close the block early
    return "{noformat}\n" + re.sub(r"\{(noformat)", r"{ \1", text, flags=re.IGNORECASE).strip() + "\n{noformat}"


def issue_summary(ticket: Ticket) -> str:
    summary = " ".join(ticket["summary"].split()) or f"deskmate ticket {ticket['id']}"
    return summary if len(summary) <= _SUMMARY_CHARS else summary[: _SUMMARY_CHARS - 1] + "…"


def issue_description(ticket: Ticket) -> str:
    """Plain text (verbatim blocks) with the problem, the steps tried and the redacted conversation."""
    topic = re.sub(r"[\[\]{}|*_^~!]", " ", ticket["topic"]).strip()  # outside a verbatim block: no markup
    header = (
        f"Raised by deskmate as ticket {ticket['id']}. Priority: {ticket['priority']}. "
        f"OS: {ticket['os'] or 'unknown'}. Topic: {topic or '—'}."
    )
    steps = "\n".join(f"{n}. {s['step']} — {s['outcome']}" for n, s in enumerate(ticket["steps_tried"], 1))
    parts = [
        _noformat(ticket["description"] or ticket["summary"]),
        header,
        "*Troubleshooting steps tried*",
        _noformat(steps or "none"),
    ]
    budget = _DESCRIPTION_CHARS - sum(len(p) + 2 for p in parts) - 100
    lines: list[str] = []
    for message in reversed(ticket["conversation"]):  # newest first, so the end of the story survives
        content = str(message.get("content", ""))
        content = content if len(content) <= _MESSAGE_CHARS else content[:_MESSAGE_CHARS] + " …"
        line = f"{message.get('role', '?')}: {content}"
        if len(line) + 1 > budget:
            break
        lines.insert(0, line)
        budget -= len(line) + 1
    omitted = len(ticket["conversation"]) - len(lines)
    if omitted:
        lines.insert(0, f"({omitted} earlier message{'s' if omitted > 1 else ''} omitted)")
    parts += ["*Conversation (redacted)*", _noformat("\n".join(lines) or "none")]
    return "\n\n".join(parts)


def _retry_after_s(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _jira_detail(response: httpx.Response) -> str:
    """Jira's own words (errorMessages / errors), short; '' when there are none."""
    try:
        body = response.json()
    except ValueError:
        return ""
    if not isinstance(body, dict):
        return ""
    messages = [str(m) for m in body.get("errorMessages") or []]
    errors = body.get("errors") or {}
    if isinstance(errors, dict):
        messages += [f"{field}: {message}" for field, message in errors.items()]
    detail = "; ".join(messages)
    return detail if len(detail) <= _REASON_DETAIL_CHARS else detail[:_REASON_DETAIL_CHARS] + "…"


class JiraClient:
    """Jira REST v2 over httpx. Basic auth (email:API token) for Jira Cloud, Bearer (PAT) for Server/DC."""

    def __init__(
        self,
        base_url: str,
        project_key: str,
        token: str,
        *,
        email: str | None = None,
        issue_type: str = "Task",
        timeout_s: float = 10.0,
        priority_names: Sequence[str] | None = DEFAULT_PRIORITY_NAMES,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,  # how a Retry-After wait is spent
    ) -> None:
        if priority_names and len(priority_names) != len(PRIORITY_LEVELS):
            raise ValueError(f"priority_names needs {len(PRIORITY_LEVELS)} names (low, medium, high, critical)")
        self.base_url = base_url.rstrip("/")
        self.project_key = project_key
        self.issue_type = issue_type
        self._email = email
        self._priorities = dict(zip(PRIORITY_LEVELS, priority_names)) if priority_names else {}
        self._search_path = SEARCH_JQL_PATH if email else SEARCH_PATH
        auth = httpx.BasicAuth(email, token) if email else None
        headers = {"accept": "application/json", "user-agent": "deskmate"}
        if not email:
            headers["authorization"] = f"Bearer {token}"
        self._http = httpx.Client(
            base_url=self.base_url,
            auth=auth,
            headers=headers,
            timeout=timeout_s,
            transport=transport,
            follow_redirects=False,
        )
        self._timeout_s = timeout_s
        self._sleep = sleep

    def browse_url(self, key: str) -> str:
        return f"{self.base_url}/browse/{key}"

    # --- the four things deskmate does in Jira --------------------------------------------
    def create_issue(self, ticket: Ticket) -> JiraIssue:
        fields: dict[str, Any] = {
            "project": {"key": self.project_key},
            "summary": issue_summary(ticket),
            "description": issue_description(ticket),
            "issuetype": {"name": self.issue_type},
            "labels": ["deskmate", f"deskmate-{ticket['id']}", user_label(ticket["user_id"])],
        }
        priority = self._priorities.get(ticket["priority"])
        if priority:
            fields["priority"] = {"name": priority}
        created = self._request("POST", "/rest/api/2/issue", json={"fields": fields})
        key = created.get("key") if isinstance(created, dict) else None
        if not isinstance(key, str) or not _ISSUE_KEY.match(key):
            raise JiraError("Jira accepted the issue but returned no issue key.", status=None)
        return JiraIssue(key=key, url=self.browse_url(key), summary=fields["summary"], status="", status_category="new")

    def search(self, jql: str, *, max_results: int = MAX_SEARCH_RESULTS) -> list[JiraIssue]:
        """Issues matching `jql` (at most MAX_SEARCH_RESULTS, one call)."""
        params = {
            "jql": jql,
            "maxResults": str(max(1, min(max_results, MAX_SEARCH_RESULTS))),
            "fields": "summary,status",
        }
        try:
            body = self._request("GET", self._search_path, params=params)
        except JiraError as exc:
            if exc.status not in (404, 410):
                raise
            # Cloud answers 410 on the old path; Server/DC has no /search/jql: use the other one from now on
            other = SEARCH_PATH if self._search_path == SEARCH_JQL_PATH else SEARCH_JQL_PATH
            body = self._request("GET", other, params=params)
            self._search_path = other
        issues = body.get("issues") if isinstance(body, dict) else None
        if not isinstance(issues, list):
            raise JiraError("Jira's search answer has no issue list.", status=None)
        return [self._issue(raw) for raw in issues if isinstance(raw, dict) and isinstance(raw.get("key"), str)]

    def issues_by_key(self, keys: Sequence[str]) -> dict[str, JiraIssue]:
        """Current state of these issues (the first MAX_SEARCH_RESULTS keys), by key."""
        wanted = [k for k in dict.fromkeys(keys) if _ISSUE_KEY.match(k)][:MAX_SEARCH_RESULTS]
        if not wanted:
            return {}
        found = self.search(f"key in ({', '.join(wanted)})", max_results=len(wanted))
        return {issue.key: issue for issue in found}

    def add_comment(self, key: str, body: str) -> None:
        self._request("POST", f"/rest/api/2/issue/{self._key(key)}/comment", json={"body": body})

    def transition_to_done(self, key: str) -> str:
        """Move the issue to a status of the 'done' category; returns that status's name."""
        path = f"/rest/api/2/issue/{self._key(key)}/transitions"
        listed = self._request("GET", path, params={"expand": "transitions.fields"})
        transitions = [t for t in (listed or {}).get("transitions", []) if isinstance(t, dict)]
        chosen = _done_transition(transitions)
        if chosen is None:
            names = ", ".join(str(t.get("name")) for t in transitions) or "none"
            raise JiraError(f"Jira offers no transition to a done status for {key} (available: {names}).")
        payload: dict[str, Any] = {"transition": {"id": str(chosen["id"])}}
        if "resolution" in (chosen.get("fields") or {}):  # some workflows ask for a resolution on the screen
            payload["fields"] = {"resolution": {"name": "Done"}}
        self._request("POST", path, json=payload)
        return str((chosen.get("to") or {}).get("name") or chosen.get("name") or "Done")

    def close(self) -> None:
        self._http.close()

    # --- plumbing -------------------------------------------------------------------------
    def _issue(self, raw: dict) -> JiraIssue:
        fields = raw.get("fields") or {}
        status = fields.get("status") or {}
        category = (status.get("statusCategory") or {}).get("key", "")
        return JiraIssue(
            key=raw["key"],
            url=self.browse_url(raw["key"]),
            summary=str(fields.get("summary") or ""),
            status=str(status.get("name") or ""),
            status_category=str(category or ""),
        )

    @staticmethod
    def _key(key: str) -> str:
        if not _ISSUE_KEY.match(key):
            raise JiraError(f"'{key}' is not a Jira issue key.")
        return key

    def _request(self, method: str, path: str, *, json: Any = None, params: dict | None = None) -> Any:
        for attempt in (1, 2):
            try:
                response = self._http.request(method, path, json=json, params=params)
            except httpx.TimeoutException as exc:
                raise JiraError(f"Jira did not answer within {self._timeout_s:g} s ({self.base_url}).") from exc
            except httpx.HTTPError as exc:
                raise JiraError(f"Jira is unreachable at {self.base_url} ({type(exc).__name__}).") from exc
            if response.status_code == 429 and attempt == 1:
                wait = _retry_after_s(response.headers.get("retry-after"))
                if wait is not None and wait <= MAX_RETRY_AFTER_S:
                    log.info("Jira asked to retry %s %s after %.1f s", method, path, wait)
                    self._sleep(wait)
                    continue
            if response.is_success:
                if response.status_code == 204 or not response.content:
                    return {}
                try:
                    return response.json()
                except ValueError as exc:
                    raise JiraError(
                        f"Jira answered {method} {path} with something that is not JSON.", status=response.status_code
                    ) from exc
            raise JiraError(self._reason(response), status=response.status_code)
        raise AssertionError("unreachable")  # the loop returns or raises

    def _reason(self, response: httpx.Response) -> str:
        status = response.status_code
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = "error"
        said = f"Jira answered {status} {phrase}"
        detail = _jira_detail(response)
        if status == 401:
            return f"{said} — check JIRA_TOKEN" + (" and JIRA_EMAIL" if self._email else "") + "."
        if status == 403:
            return f"{said} — the token's account may not do this in project {self.project_key}."
        if status == 404:
            return f"{said} — check JIRA_URL and JIRA_PROJECT_KEY" + (f" ({detail})." if detail else ".")
        if status == 429:
            after = response.headers.get("retry-after")
            return f"{said} — rate limited" + (f", retry after {after} s." if after else ".")
        return f"{said}: {detail}" if detail else f"{said}."


def _done_transition(transitions: list[dict]) -> dict | None:
    """The transition leading to a 'done' status: by status category first, then by a well-known name."""

    def category(t: dict) -> str:
        return str(((t.get("to") or {}).get("statusCategory") or {}).get("key", ""))

    def name(t: dict) -> str:
        return str(t.get("name") or (t.get("to") or {}).get("name") or "").strip().lower()

    done = [t for t in transitions if category(t) == "done" and t.get("id") is not None]
    if done:
        return min(done, key=lambda t: DONE_NAMES.index(name(t)) if name(t) in DONE_NAMES else len(DONE_NAMES))
    named = [t for t in transitions if name(t) in DONE_NAMES and t.get("id") is not None]
    return named[0] if named else None
