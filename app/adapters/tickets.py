"""TicketService: the TicketDesk port — the local SQLite store first and always, Jira best-effort.

A ticket exists as soon as the local store has it. Jira is an enhancement: any JiraError (refused,
rate-limited, down, misconfigured) is logged as a warning and recorded on the ticket as `jira_error`,
and the caller still gets the local ticket. Only a failing local store is a real error.
"""

from __future__ import annotations

import logging
from typing import Iterable

from app.adapters.jira import PRIORITY_LEVELS, JiraClient, JiraIssue
from app.adapters.ticket_store import TicketStore
from app.settings import Settings
from app.storage import Database
from core.errors import JiraError
from core.records import Ticket, TicketDraft
from core.text import COMPLAINT_WORDS, CONVERSATION_WORDS, STOP_WORDS, topic_terms

log = logging.getLogger(__name__)

SAME_TOPIC_SIMILARITY = 0.5  # Jaccard overlap of content words at which two topics count as one issue
MAX_DEDUPE_CANDIDATES = 50
MAX_JIRA_REFRESH = 50  # linked issues refreshed per listing, in one search call
MAX_STORED_MESSAGES = 100  # drafts carry the bounded session history; this only guards the store
MAX_STORED_STEPS = 20
MAX_FIELD_CHARS = 8_000

# the user id the chat runs under when nobody is signed in (nodes/support/ticket_ops.py: ANONYMOUS); it names no
# one, so it never groups tickets of different people
ANONYMOUS_USER_IDS = frozenset({"", "anonymous"})

# words that glue a sentence together or say "something is wrong", but not *what* is wrong
_NOT_TOPICAL = STOP_WORDS | CONVERSATION_WORDS | COMPLAINT_WORDS


def topic_words(text: str) -> frozenset[str]:
    """The content words of a topic, stemmed for comparison ('connecting', 'connection' → 'connect')."""
    return topic_terms(text, _NOT_TOPICAL)


def is_anonymous(user_id: str) -> bool:
    return user_id.strip().lower() in ANONYMOUS_USER_IDS


def topic_similarity(first: str, second: str) -> float:
    """Jaccard overlap of the two topics' content words (0 when either has none)."""
    a, b = topic_words(first), topic_words(second)
    return len(a & b) / len(a | b) if a and b else 0.0


class TicketService:
    """Implements core.ports.TicketDesk over a TicketStore and an optional JiraClient."""

    def __init__(self, store: TicketStore, jira: JiraClient | None = None) -> None:
        self.store = store
        self.jira = jira

    @property
    def jira_enabled(self) -> bool:
        return self.jira is not None

    # --- de-duplication -------------------------------------------------------------------
    def find_open(self, *, session_id: str, user_id: str, topic: str) -> Ticket | None:
        """An open ticket of this session; else this user's open ticket on the same or a very similar topic."""
        in_session = self.store.list(session_id=session_id, status="open", limit=1)
        if in_session:
            return in_session[0]
        if is_anonymous(user_id):
            return None
        best, best_score = None, 0.0
        for ticket in self.store.list(user_id=user_id, status="open", limit=MAX_DEDUPE_CANDIDATES):
            score = topic_similarity(topic, ticket["topic"])
            if score >= SAME_TOPIC_SIMILARITY and score > best_score:
                best, best_score = ticket, score
        return best

    # --- create / close -------------------------------------------------------------------
    def create(self, draft: TicketDraft, *, session_id: str, user_id: str) -> Ticket:
        """Write the ticket locally (raises TicketStoreError if that fails), then raise it in Jira if configured."""
        ticket = self.store.create(_checked(draft), session_id=session_id, user_id=user_id)
        log.info("ticket %s created locally (session %s, priority %s)", ticket["id"], session_id, ticket["priority"])
        if self.jira is None:
            return ticket
        try:
            issue = self.jira.create_issue(ticket)
        except JiraError as exc:
            log.warning("ticket %s kept local only: %s", ticket["id"], exc.reason)
            return self._set_jira(ticket, jira_error=exc.reason)
        log.info("ticket %s linked to Jira %s", ticket["id"], issue.key)
        return self._set_jira(ticket, jira_key=issue.key, jira_url=issue.url, jira_error=None)

    def close(self, ticket_id: str, comment: str) -> Ticket | None:
        """Close locally with `comment`, then comment on and transition the Jira issue (best-effort).

        Closing a ticket that is already closed changes nothing and returns it as it is.
        """
        current = self.store.get(ticket_id)
        if current is None or current["status"] == "closed":
            return current
        ticket = self.store.close(ticket_id, comment)
        assert ticket is not None
        log.info("ticket %s closed locally", ticket_id)
        if self.jira is None or not ticket["jira_key"]:
            return ticket
        try:
            if comment.strip():
                self.jira.add_comment(ticket["jira_key"], comment.strip())
            status = self.jira.transition_to_done(ticket["jira_key"])
        except JiraError as exc:
            log.warning("ticket %s: closing %s in Jira failed: %s", ticket_id, ticket["jira_key"], exc.reason)
            return self._set_jira(ticket, jira_error=f"Closing the Jira issue failed: {exc.reason}")
        return self._set_jira(ticket, jira_status=status, jira_error=None)

    # --- reading --------------------------------------------------------------------------
    def list_for(
        self, *, user_id: str | None = None, session_id: str | None = None, status: str | None = None, limit: int = 100
    ) -> list[Ticket]:
        """Local tickets of this user and/or session, newest first, with their Jira status when linked."""
        user_id = None if user_id is None or is_anonymous(user_id) else user_id
        if user_id is None and session_id is None:
            raise ValueError("list_for needs a (signed-in) user_id or a session_id")
        tickets = self.store.list(user_id=user_id, session_id=session_id, status=status, limit=limit)
        tickets = self._refresh_from_jira(tickets)
        return [t for t in tickets if status is None or t["status"] == status]

    def get(self, ticket_id: str, *, refresh: bool = False) -> Ticket | None:
        """The local ticket; with `refresh`, its Jira status is fetched first (best-effort)."""
        ticket = self.store.get(ticket_id)
        if ticket is None or not refresh:
            return ticket
        return self._refresh_from_jira([ticket])[0]

    def shutdown(self) -> None:
        if self.jira is not None:
            self.jira.close()
        self.store.close_connection()

    # --- internals ------------------------------------------------------------------------
    def _refresh_from_jira(self, tickets: list[Ticket]) -> list[Ticket]:
        linked = [t["jira_key"] for t in tickets if t["jira_key"]][:MAX_JIRA_REFRESH]
        if self.jira is None or not linked:
            return tickets
        try:
            issues = self.jira.issues_by_key(linked)
        except JiraError as exc:  # listing still works from the local store
            log.warning("Jira status refresh failed, showing local status only: %s", exc.reason)
            return tickets
        return [self._merge(t, issues[t["jira_key"]]) if t["jira_key"] in issues else t for t in tickets]

    def _merge(self, ticket: Ticket, issue: JiraIssue) -> Ticket:
        # IT resolving the issue in Jira closes it here too; a local close is never undone by Jira
        if issue.is_done and ticket["status"] == "open":
            ticket = (
                self.store.close(ticket["id"], f"Resolved in Jira: {issue.key} is {issue.status or 'done'}.") or ticket
            )
            log.info("ticket %s closed: %s is done in Jira", ticket["id"], issue.key)
        if issue.status and issue.status != ticket["jira_status"]:
            return self._set_jira(ticket, jira_status=issue.status)
        return ticket

    def _set_jira(self, ticket: Ticket, **fields: str | None) -> Ticket:
        return self.store.set_jira(ticket["id"], **fields) or ticket


def _checked(draft: TicketDraft) -> TicketDraft:
    """The draft as the store keeps it: known keys only, priority one of low|medium|high|critical."""
    if not str(draft.get("summary", "")).strip():
        raise ValueError("a ticket needs a summary")
    priority = str(draft.get("priority") or "medium").strip().lower()
    return TicketDraft(
        summary=_text(draft["summary"]).strip(),
        description=_text(draft.get("description")),
        priority=priority if priority in PRIORITY_LEVELS else "medium",
        topic=_text(draft.get("topic"))[:200],
        os=_text(draft.get("os"))[:20],
        steps_tried=[
            {"step": _text(s.get("step")), "outcome": _text(s.get("outcome"))[:20]}
            for s in _dicts(draft.get("steps_tried"))[:MAX_STORED_STEPS]
        ],
        conversation=[
            {"role": _text(m.get("role"))[:20], "content": _text(m.get("content"))}
            for m in _dicts(draft.get("conversation"))[-MAX_STORED_MESSAGES:]
        ],
    )


def _text(value: object) -> str:
    return str(value or "")[:MAX_FIELD_CHARS]


def _dicts(items: Iterable | None) -> list[dict]:
    return [item for item in (items or []) if isinstance(item, dict)]


def build_ticket_desk(settings: Settings, database: Database | None = None) -> TicketService:
    """The local store (the relational store; without one, its own SQLite file in the data dir), plus Jira
    when JIRA_URL, JIRA_PROJECT_KEY and JIRA_TOKEN are set."""
    store = TicketStore(database if database is not None else settings.storage.tickets_db)
    jira = None
    url, project_key, token = (
        settings.integrations.jira_url,
        settings.integrations.jira_project_key,
        settings.integrations.jira_token,
    )
    if url and project_key and token:  # settings.integrations.jira_enabled, with each value narrowed
        jira = JiraClient(
            url,
            project_key,
            token.get_secret_value(),
            email=settings.integrations.jira_email,
            issue_type=settings.integrations.jira_issue_type,
            timeout_s=settings.integrations.jira_timeout_s,
            priority_names=settings.integrations.jira_priority_names,
        )
    log.info(
        "tickets: %s, Jira %s",
        store.path,
        f"{settings.integrations.jira_url} ({settings.integrations.jira_project_key})"
        if jira
        else "off (local store only)",
    )
    return TicketService(store, jira)
