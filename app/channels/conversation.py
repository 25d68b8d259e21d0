"""The channel layer: what every chat platform shares between its protocol and `ChatService`.

- A **thread** (`ThreadKey`) is the platform's conversation: Slack's team + channel + thread timestamp, Teams'
  conversation id + reply chain. With the asking user it names one deskmate session (a content hash), so a
  follow-up in the thread continues the same walkthrough and ticket draft, and two people in one channel thread
  each keep their own conversation (their tickets and documents are their own).
- A **platform user** (`ChannelUser`) becomes deskmate's user: the e-mail address when the platform gives one,
  else `<platform>:<id>`; the platform's groups map to deskmate's audience groups through `group_map`.
- A **reply** (`ReplyView`) is the turn as any platform draws it: the answer in Markdown, its sources as links
  to the public document viewer, and the buttons the turn calls for (walkthrough, ticket draft, votes).
- A **button** (`ButtonPress`) is either a vote on an answer (the feedback store, as the web UI's votes) or a
  reply typed for the user ("Still not working", "yes" …), answered as the next turn of the same session.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

from app.channels.store import ChannelStore, TicketThread
from app.chat_service import ChatService, ChatTurn, InvalidMessage, SessionNotFound, TurnRequest
from app.feedback_service import record_vote
from app.schemas import ChatResponse
from app.storage import SessionBusy
from core.ports import PERSONAL_DATA_KINDS

log = logging.getLogger(__name__)

Platform = Literal["slack", "teams"]

# What each button says on the user's behalf: the same words the web UI's buttons send.
BUTTON_MESSAGES: dict[str, str] = {
    "works": "It works now",
    "broken": "Still not working",
    "next": "next step",
    "stop": "stop",
    "continue": "continue",
    "ticket_yes": "yes",
    "ticket_no": "no thanks",
}
VOTES: dict[str, Literal["up", "down"]] = {"helpful": "up", "not_helpful": "down"}
BUTTON_LABELS: dict[str, str] = {
    "works": "It works",
    "broken": "Still broken",
    "next": "Next step",
    "continue": "Continue",
    "ticket_yes": "Create ticket",
    "ticket_no": "No thanks",
    "helpful": "Helpful",
    "not_helpful": "Not helpful",
}
# a button's choice as the updated message records it once it was pressed
PRESSED: dict[str, str] = {
    "works": "✓ It works",
    "broken": "✕ Still broken",
    "next": "→ Next step",
    "continue": "→ Continue",
    "ticket_yes": "✓ Create ticket",
    "ticket_no": "No ticket",
    "helpful": "👍 Marked helpful — thank you",
    "not_helpful": "👎 Marked not helpful — thank you, IT will look at this answer",
}
MAX_SOURCES = 5
SECRET_SEEN_WARNING = (
    "Everyone in this channel has seen the message with that secret. deskmate did not keep it, but "
    "change it now (and delete the message)."
)
BUSY_REPLY = "I'm still working on your previous message — send this again in a moment."
FAILED_REPLY = "Sorry — something went wrong on my side while answering. Please try again in a minute."
_CITATION_LINE = re.compile(r"\[\d+\] ")


def without_sources_list(answer: str) -> str:
    """The answer without the plain-text "Sources:" list it ends with for API clients: a platform shows its own,
    with links. Anything after the list other than citation lines keeps the answer as it is."""
    head, marker, tail = answer.rpartition("\nSources:\n")
    if not marker or not all(_CITATION_LINE.match(line.strip() + " ") for line in tail.strip().splitlines()):
        return answer
    return head.rstrip()


@dataclass(frozen=True)
class ThreadKey:
    """A platform conversation thread: its parts in the platform's own order (Slack: team, channel, thread ts)."""

    platform: Platform
    parts: tuple[str, ...]

    def session_id(self, user: ChannelUser) -> str:
        """The deskmate session of this user in this thread: a content hash, the same on every replica."""
        raw = "\x1f".join((self.platform, *self.parts, user.platform_id))
        return f"{self.platform}-{hashlib.sha256(raw.encode()).hexdigest()[:32]}"


@dataclass(frozen=True)
class ChannelUser:
    platform: Platform
    platform_id: str
    email: str | None = None
    groups: frozenset[str] = frozenset()

    @property
    def user_id(self) -> str:
        """deskmate's user id: the e-mail address (the same person on the web, in Slack and in Teams), else the
        platform's id."""
        return self.email.lower() if self.email else f"{self.platform}:{self.platform_id}"


def mapped_groups(platform_groups: list[str] | tuple[str, ...], group_map: dict[str, str]) -> frozenset[str]:
    """A platform's groups as deskmate audience groups: mapped where `group_map` names them, else as they are."""
    lowered = {k.lower(): v for k, v in group_map.items()}
    return frozenset(lowered.get(g.lower(), g).lower() for g in platform_groups if g and g.strip())


@dataclass(frozen=True)
class SourceLink:
    title: str
    section: str
    url: str | None  # None: no public URL configured


@dataclass(frozen=True)
class ReplyView:
    """One answer as a chat platform shows it."""

    text: str  # Markdown, as the web UI gets it
    message_id: str  # the trace id: votes and button presses name it
    session_id: str
    sources: tuple[SourceLink, ...] = ()
    buttons: tuple[str, ...] = ()  # keys of BUTTON_LABELS, in the order shown
    step: tuple[int, int] | None = None  # (step, total) of a walkthrough in progress
    ticket_id: str | None = None  # a ticket this turn created
    notices: tuple[str, ...] = ()  # e.g. the redaction notice
    votes: bool = True  # Helpful / Not helpful shown


def source_url(public_url: str | None, doc_id: str, section: str) -> str | None:
    """The public viewer's address of a cited section (`/view/<doc>#section`)."""
    if not public_url or not doc_id:
        return None
    anchor = f"#{quote(section, safe='')}" if section else ""
    return f"{public_url.rstrip('/')}/view/{quote(doc_id, safe='')}{anchor}"


def reply_view(envelope: ChatResponse, public_url: str | None) -> ReplyView:
    """The turn's envelope as a platform reply: text, source links and the buttons its state calls for."""
    buttons: list[str] = []
    step = None
    flow = envelope.troubleshooting
    if flow is not None and flow.status == "in_progress":
        buttons += ["works", "broken", "next"]
        step = (flow.step, flow.total)
    elif flow is not None and flow.status == "paused":
        buttons.append("continue")
    if envelope.ticket_event in ("offered", "edited") and envelope.ticket_offer is not None:
        buttons += ["ticket_yes", "ticket_no"]
    answered = bool(envelope.sources) and envelope.action not in ("create_ticket",)
    sources = tuple(
        SourceLink(s.title, s.section, source_url(public_url, s.doc_id, s.section))
        for s in envelope.sources[:MAX_SOURCES]
    )
    ticket = envelope.ticket.id if envelope.ticket is not None and envelope.ticket_event == "created" else None
    notices = tuple(n for n in (envelope.redaction_notice,) if n)
    return ReplyView(
        text=without_sources_list(envelope.answer) if sources else envelope.answer,
        message_id=envelope.message_id or envelope.trace_id,
        session_id=envelope.session_id,
        sources=sources,
        buttons=tuple(buttons),
        step=step,
        ticket_id=ticket,
        notices=notices,
        votes=answered,
    )


@dataclass(frozen=True)
class Answer:
    """What a platform posts for one message: the reply, or (`view` None) a short plain-text `problem`."""

    view: ReplyView | None
    problem: str = ""
    secret_seen: bool = False  # a secret was redacted from a message others in the channel can read


class TimedCache:
    """A bounded cache whose entries expire (platform users and groups looked up over the platform's API)."""

    def __init__(self, ttl_s: float, size: int) -> None:
        self.ttl_s, self.size = ttl_s, size
        self._items: OrderedDict[str, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self._lock:
            hit = self._items.get(key)
            if hit is None or hit[0] < time.monotonic():
                return None
            self._items.move_to_end(key)
            return hit[1]

    def put(self, key: str, value: Any) -> None:
        with self._lock:
            self._items[key] = (time.monotonic() + self.ttl_s, value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


def told_status(ticket: dict) -> str:
    """A ticket's status as its thread was told it (local status, and Jira's when linked)."""
    return f"{ticket['status']}|{ticket.get('jira_status') or ''}"


def ticket_changes(store: ChannelStore, tickets, platform: str) -> Iterator[tuple[TicketThread, dict]]:
    """Each ticket of `platform`'s threads whose status changed since its requester was last told, claimed for
    this replica (another replica tells the others)."""
    for link in store.open_threads(platform):
        ticket = tickets.get(link.ticket_id, refresh=True)
        if ticket is None:
            continue
        now = told_status(ticket)
        if now == link.last_status:
            continue
        if store.claim_status(link.ticket_id, link.last_status, now, still_open=ticket["status"] != "closed"):
            yield link, ticket


@dataclass
class ChannelService:
    """Platform messages and button presses → turns of the support graph, and the replies back."""

    chat: ChatService
    resources: Any  # app.resources.Resources: the feedback store, the tracer and the redactors for votes
    public_url: str | None = None
    group_map: dict[str, str] = field(default_factory=dict)

    def ask(self, thread: ThreadKey, user: ChannelUser, text: str) -> tuple[ChatTurn, ReplyView]:
        """One message from the platform, answered in the thread's session."""
        request = TurnRequest(
            message=text,
            session_id=thread.session_id(user),
            user_id=user.user_id,
            groups=user.groups,
            channel=thread.platform,
        )
        turn = self.chat.ask(request)
        return turn, reply_view(turn.envelope(), self.public_url)

    def press(self, thread: ThreadKey, user: ChannelUser, button: str, message_id: str) -> ReplyView | None:
        """A button on an answer: a vote (None: nothing more to say) or the reply it stands for, answered."""
        if button in VOTES:
            record_vote(
                self.resources,
                user_id=user.user_id,
                message_id=message_id,
                session_id=thread.session_id(user),
                rating=VOTES[button],
            )
            return None
        if button not in BUTTON_MESSAGES:
            raise ValueError(f"unknown button {button!r}")
        return self.ask(thread, user, BUTTON_MESSAGES[button])[1]

    def ticket(self, ticket_id: str):
        """A ticket as the store has it now (None: no such ticket)."""
        return self.resources.tickets.get(ticket_id)

    def answer(self, thread: ThreadKey, user: ChannelUser, text: str, *, public: bool) -> Answer:
        """`ask`, with what a platform tells the person when the turn cannot be answered; `public`: others in the
        conversation read the message (a redacted secret is then theirs to know about too)."""
        try:
            turn, view = self.ask(thread, user, text)
        except InvalidMessage as exc:
            return Answer(None, str(exc))
        except SessionNotFound:
            return Answer(None, FAILED_REPLY)
        except SessionBusy:
            return Answer(None, BUSY_REPLY)
        except Exception:
            log.exception("%s: answering in %s failed", thread.platform, thread.session_id(user))
            return Answer(None, FAILED_REPLY)
        secret_seen = public and any(k not in PERSONAL_DATA_KINDS for k in turn.output.get("redacted_kinds") or [])
        return Answer(view, secret_seen=secret_seen)

    def link_ticket(self, store: ChannelStore, platform: Platform, view: ReplyView, thread: dict) -> None:
        """Remember the thread a ticket was created from, before its reply is posted (a status change right after
        the reply must find the thread)."""
        if not view.ticket_id:
            return
        ticket = self.ticket(view.ticket_id)
        store.link_ticket(view.ticket_id, platform, thread, told_status(ticket) if ticket else "open|")
