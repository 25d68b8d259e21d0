"""Microsoft Teams: deskmate as a Teams bot, on Microsoft's 365 Agents SDK (its Activity schema and its Bot
Connector client).

- Activities arrive at `POST /api/messages` with the Bot Framework's signed token (app/channels/teams_auth.py:
  issuer, audience = the app id, keys from the OpenID metadata document, expiry, service URL). A bad token gets
  401 and nothing is read further or stored. A valid activity is acknowledged at once; the answer is written on a
  worker thread and posted through the connector, so Teams' 15-second deadline never waits for the support graph.
- deskmate answers a personal chat, a mention in a channel or group chat (in the reply chain it was asked in)
  and a follow-up in a reply chain where it already helps that person; it ignores bots and channel messages that
  do not mention it. An activity Teams retries (same activity id) is answered once.
- Answers are Adaptive Cards: the answer, the sources as links to the public document viewer, and `Action.Submit`
  buttons — It works / Still broken / Next step in a walkthrough, Create ticket / No thanks on a draft, Helpful /
  Not helpful on a cited answer. A press updates its card (the buttons give way to the choice made) and is
  handled once, however often it is clicked.
- A Teams user becomes deskmate's user by their user principal name (the connector's member lookup), else their
  Entra object id; a team's channels map to deskmate audience groups through `DESKMATE_TEAMS_GROUP_MAP`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import aiohttp
import httpx
from microsoft_agents.activity import Activity, Attachment
from microsoft_agents.hosting.core.connector.client import ConnectorClient
from pydantic import ValidationError

from app.channels.conversation import (
    BUTTON_LABELS,
    BUTTON_MESSAGES,
    FAILED_REPLY,
    PRESSED,
    SECRET_SEEN_WARNING,
    VOTES,
    ChannelService,
    ChannelUser,
    ReplyView,
    ThreadKey,
    TimedCache,
    mapped_groups,
    ticket_changes,
)
from app.channels.store import ChannelStore
from app.channels.teams_auth import ActivityTokenValidator, ConnectorTokens, TokenRejected
from core.errors import UnknownMessage

log = logging.getLogger(__name__)

T = TypeVar("T")
CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
CARD_VERSION = "1.4"  # what Teams draws on desktop, web and mobile
TEXT_CHARS = 12_000  # of the ~28 KB a Teams message may carry
FALLBACK_CHARS = 1_000  # the notification text
BUTTON_FIELD = "deskmate"  # the Action.Submit data field naming the button
USER_CACHE_S = 3600
USER_CACHE_SIZE = 10_000
MAX_PENDING = 500  # activities acknowledged and not yet handled; beyond it Teams gets 503 and delivers again later
CARD_WAIT_S = 3.0  # how long a press waits for the card it came from to be kept (a click right after it appeared)
CARD_POLL_S = 0.05
CONNECTOR_ATTEMPTS = 3  # a 429 or 5xx from the connector is tried again, after Retry-After (at most 5 s)
PUBLIC_SECRET_WARNING = f"⚠️ {SECRET_SEEN_WARNING}"


# --- Markdown → what an Adaptive Card TextBlock draws (bold, italics, lists, links; no headings) --------------
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_MENTION = re.compile(r"<at>[^<]*</at>")


def card_text(markdown: str) -> str:
    """deskmate's Markdown as a TextBlock shows it: headings become bold lines; the rest is kept as written."""
    return _HEADING.sub(lambda m: f"**{m.group(1)}**", markdown)[:TEXT_CHARS]


# --- replies as Adaptive Cards --------------------------------------------------------------------------------
def _small(text: str, **extra: Any) -> dict:
    return {"type": "TextBlock", "text": text, "wrap": True, "size": "Small", "isSubtle": True, **extra}


def _submit(key: str, message_id: str, owner: str) -> dict:
    action: dict[str, Any] = {
        "type": "Action.Submit",
        "title": BUTTON_LABELS[key],
        "data": {BUTTON_FIELD: key, "m": message_id, "u": owner},  # the answer, and whose question it answered
    }
    if key in ("works", "ticket_yes"):
        action["style"] = "positive"
    return action


def card_for(view: ReplyView, *, owner: str = "", extra_notices: tuple[str, ...] = ()) -> dict:
    """The reply as an Adaptive Card: the answer, step and notices, sources, buttons (for `owner`, the Teams user
    whose question it answers)."""
    body: list[dict] = [{"type": "TextBlock", "text": card_text(view.text) or "…", "wrap": True}]
    if view.step:
        body.append(_small(f"Step {view.step[0]} of {view.step[1]}"))
    if view.ticket_id:
        body.append(_small(f"Ticket **{view.ticket_id}** — I'll tell you here when its status changes"))
    body += [_small(n, color="Warning") for n in (*view.notices, *extra_notices)]
    if view.sources:
        links = [
            f"[{s.title}{' › ' + s.section if s.section else ''}]({s.url})"
            if s.url
            else f"{s.title}{' › ' + s.section if s.section else ''}"
            for s in view.sources
        ]
        body.append(_small("Sources: " + " · ".join(links)))
    keys = [*view.buttons, *(("helpful", "not_helpful") if view.votes else ())]
    return {
        "type": "AdaptiveCard",
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "version": CARD_VERSION,
        "body": body,
        "actions": [_submit(k, view.message_id, owner) for k in keys],
        "msteams": {"width": "Full"},
    }


def after_press(card: dict, pressed: str, who: str) -> dict:
    """The card once `pressed` was chosen: the walkthrough or ticket buttons (or, for a vote, the vote buttons) give
    way to a line saying what was chosen, by whom."""
    is_vote = pressed in VOTES
    actions = [a for a in card.get("actions") or [] if ((a.get("data") or {}).get(BUTTON_FIELD) in VOTES) != is_vote]
    line = _small(f"{PRESSED[pressed]} ({who})" if who else PRESSED[pressed])
    return {**card, "body": [*(card.get("body") or []), line], "actions": actions}


def card_activity(card: dict, fallback: str) -> Activity:
    return Activity(
        type="message",
        summary=fallback[:FALLBACK_CHARS] or "…",
        attachments=[Attachment(content_type=CARD_CONTENT_TYPE, content=card)],
    )


# --- where an activity belongs ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class TeamsThread:
    """A Teams conversation as deskmate keeps it: a personal or group chat, or one reply chain of a channel."""

    service_url: str
    conversation_id: str  # the chat, or the channel without its reply chain
    reply_chain: str = ""  # a channel's root message id

    @property
    def target(self) -> str:
        """The conversation id that posts into this chat or reply chain."""
        return f"{self.conversation_id};messageid={self.reply_chain}" if self.reply_chain else self.conversation_id

    def key(self, tenant: str) -> ThreadKey:
        return ThreadKey("teams", (tenant, self.conversation_id, self.reply_chain))

    def stored(self) -> dict:
        return {"service_url": self.service_url, "conversation": self.target}


def thread_of(activity: Activity) -> TeamsThread:
    conversation = activity.conversation
    base, _, root = (conversation.id if conversation else "").partition(";messageid=")
    if conversation is not None and conversation.conversation_type == "channel":
        root = root or activity.reply_to_id or activity.id or ""
    return TeamsThread(activity.service_url or "", base, root)


def is_public(activity: Activity) -> bool:
    return bool(activity.conversation and activity.conversation.conversation_type in ("channel", "groupChat"))


def mentions_bot(activity: Activity) -> bool:
    bot = activity.recipient.id if activity.recipient else None
    return any(m.mentioned and m.mentioned.id == bot for m in activity.get_mentions())


def from_a_bot(activity: Activity) -> bool:
    sender = activity.from_property
    if sender is None or not sender.id:
        return True
    recipient = activity.recipient.id if activity.recipient else None
    return sender.role == "bot" or sender.id == recipient or sender.id.startswith("28:")  # 28: = a bot's Teams id


def _tenant(activity: Activity) -> str:
    data = activity.channel_data if isinstance(activity.channel_data, dict) else {}
    return str(
        (data.get("tenant") or {}).get("id") or (activity.conversation and activity.conversation.tenant_id) or ""
    )


def _team(activity: Activity) -> dict:
    data = activity.channel_data if isinstance(activity.channel_data, dict) else {}
    return data.get("team") or {}


# --- the channel ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TeamsConfig:
    app_id: str
    app_password: str
    token_url: str
    openid_metadata_url: str
    group_map: dict[str, str] | None = None
    workers: int = 8  # answers written at once; more wait their turn (already acknowledged)


class TeamsChannel:
    """Incoming activities → turns of the support graph; replies and card updates through the Bot Connector."""

    def __init__(self, service: ChannelService, store: ChannelStore, config: TeamsConfig) -> None:
        self.service, self.store, self.config = service, store, config
        self.http = httpx.Client()
        self.validator = ActivityTokenValidator(config.app_id, config.openid_metadata_url, self.http)
        self.tokens = ConnectorTokens(config.token_url, config.app_id, config.app_password, self.http)
        self._executor = ThreadPoolExecutor(max_workers=config.workers, thread_name_prefix="teams-answer")
        self._users = TimedCache(USER_CACHE_S, USER_CACHE_SIZE)
        self._pending = threading.BoundedSemaphore(MAX_PENDING)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        self.http.close()

    def receive(self, body: bytes, authorization: str | None) -> int:
        """One activity from the Bot Framework: 401 for a bad token, 400 for a body that is no activity, else 200
        once it is acknowledged (the reply follows through the connector)."""
        try:
            activity = Activity.model_validate_json(body)
        except ValidationError:
            activity = None
        try:
            self.validator.validate(authorization, activity.service_url if activity is not None else None)
        except TokenRejected as exc:
            log.warning("teams: activity refused (%s)", exc)
            return 401
        if activity is None:
            return 400
        if activity.type != "message" or from_a_bot(activity) or not activity.id:
            return 200
        if not self._pending.acquire(blocking=False):
            log.warning("teams: %d activities waiting; asking the Bot Framework to deliver again later", MAX_PENDING)
            return 503
        try:
            self._executor.submit(self._guarded, self._handle, activity)  # the store and the answer, after the ack
        except RuntimeError:  # shutting down: Teams delivers it again (to this replica once restarted, or another)
            self._pending.release()
            return 503
        return 200

    def _handle(self, activity: Activity) -> None:
        if not self._first(f"teams:activity:{activity.id}"):
            return  # a retry of an activity already being answered
        value = activity.value if isinstance(activity.value, dict) else {}
        if value.get(BUTTON_FIELD) in BUTTON_MESSAGES or value.get(BUTTON_FIELD) in VOTES:
            self._on_press(activity, value)
        elif self._wants_answer(activity):
            self._on_message(activity)

    def _wants_answer(self, activity: Activity) -> bool:
        if not is_public(activity) or mentions_bot(activity):
            return True
        thread = thread_of(activity)  # a follow-up where deskmate already helps this person (no mention needed)
        user = ChannelUser("teams", _person(activity))
        return (
            bool(thread.reply_chain)
            and self.service.chat.owner(thread.key(_tenant(activity)).session_id(user)) is not None
        )

    def _guarded(self, handler: Callable[..., None], *args: Any) -> None:
        try:
            handler(*args)
        except Exception:  # a worker thread: nothing above it would log this
            log.exception("teams: handling an activity failed")
        finally:
            self._pending.release()

    # --- handlers -------------------------------------------------------------------------------------------
    def _on_message(self, activity: Activity) -> None:
        thread = thread_of(activity)
        text = _MENTION.sub("", activity.text or "").strip()
        user = self._user(activity)
        answer = self.service.answer(thread.key(_tenant(activity)), user, text, public=is_public(activity))
        if answer.view is None:
            self._post(thread, answer.problem)
            return
        self._deliver(thread, answer.view, owner=user.platform_id, public=answer.secret_seen)

    def _on_press(self, activity: Activity, value: dict) -> None:
        key, message_id, owner = str(value[BUTTON_FIELD]), str(value.get("m") or ""), str(value.get("u") or "")
        thread = thread_of(activity)
        user = self._user(activity)
        who = activity.from_property.name if activity.from_property and activity.from_property.name else ""
        if owner and user.platform_id != owner:  # someone else's answer: its buttons stay as they are
            self._post(
                thread,
                f"Those buttons are for another person's question, {who or 'sorry'}. Mention me to ask your own.",
            )
            return
        card_id = activity.reply_to_id or ""
        if key not in VOTES and card_id and not self._first(f"teams:press:{thread.target}:{card_id}"):
            return  # the card's buttons were already used (a double click, a second replica)
        card = self._card(thread, card_id)
        if card is not None:
            self._update(thread, card_id, after_press(card, key, who))
        try:
            view = self.service.press(thread.key(_tenant(activity)), user, key, message_id)
        except UnknownMessage:
            self._post(thread, "That answer belongs to someone else's conversation, so I can't record that.")
            return
        except Exception:
            log.exception("teams: the %s button on %s failed", key, card_id)
            self._post(thread, FAILED_REPLY)
            return
        if view is not None:
            self._deliver(thread, view, owner=user.platform_id, public=False)

    # --- posting --------------------------------------------------------------------------------------------
    def _deliver(self, thread: TeamsThread, view: ReplyView, *, owner: str, public: bool) -> None:
        self.service.link_ticket(self.store, "teams", view, thread.stored())
        card = card_for(view, owner=owner, extra_notices=(PUBLIC_SECRET_WARNING,) if public else ())
        posted = self._connector(
            thread.service_url,
            lambda c: c.conversations.send_to_conversation(thread.target, card_activity(card, view.text)),
        )
        if posted is not None and posted.id:
            self._remember(f"teams:card:{thread.target}:{posted.id}", card)

    def _post(self, thread: TeamsThread, text: str) -> None:
        message = Activity(type="message", text=text, text_format="markdown")
        self._connector(thread.service_url, lambda c: c.conversations.send_to_conversation(thread.target, message))

    def _update(self, thread: TeamsThread, card_id: str, card: dict) -> None:
        update = card_activity(card, "")
        update.id = card_id
        done = self._connector(
            thread.service_url, lambda c: c.conversations.update_activity(thread.target, card_id, update)
        )
        if done is not None:
            self._remember(f"teams:card:{thread.target}:{card_id}", card)

    def _connector(self, service_url: str, call: Callable[[ConnectorClient], Awaitable[T]]) -> T | None:
        """One Bot Connector call with deskmate's token; a 429 or 5xx is tried again. None when it failed (the
        reply is lost for Teams, never for the store)."""

        async def run() -> T:
            client = ConnectorClient(service_url, self.tokens.token())
            try:
                return await call(client)
            finally:
                await client.close()

        for attempt in range(1, CONNECTOR_ATTEMPTS + 1):
            try:
                return asyncio.run(run())
            except aiohttp.ClientResponseError as exc:
                if attempt == CONNECTOR_ATTEMPTS or (exc.status != 429 and exc.status < 500):
                    log.warning("teams: the connector refused a call (%s)", exc.status)
                    return None
                time.sleep(_retry_after(exc.headers))
            except (TimeoutError, aiohttp.ClientError, httpx.HTTPError, OSError) as exc:
                log.warning("teams: the connector could not be reached: %s", exc)
                return None
        return None

    # --- the store -----------------------------------------------------------------------------------------
    def _first(self, key: str) -> bool:
        try:
            return self.store.first_delivery(key)
        except Exception as exc:  # the store away: answer (a rare duplicate beats silence)
            log.warning("teams: could not record delivery %s: %s", key, exc)
            return True

    def _remember(self, key: str, card: dict) -> None:
        try:
            self.store.keep_card(key, card)
        except Exception as exc:  # its buttons still answer; the card is just not redrawn
            log.warning("teams: could not keep card %s: %s", key, exc)

    def _card(self, thread: TeamsThread, card_id: str) -> dict | None:
        """The card a press came from. A press can arrive before the delivery that posted the card has kept it
        (a click within moments of the card appearing, another replica): it is waited for, briefly."""
        if not card_id:
            return None
        deadline = time.monotonic() + CARD_WAIT_S
        while True:
            try:
                card = self.store.card(f"teams:card:{thread.target}:{card_id}")
            except Exception as exc:
                log.warning("teams: could not read card %s: %s", card_id, exc)
                return None
            if card is not None or time.monotonic() >= deadline:
                return card
            time.sleep(CARD_POLL_S)

    # --- who is asking -------------------------------------------------------------------------------------
    def _user(self, activity: Activity) -> ChannelUser:
        person = _person(activity)
        groups = self._groups_of(activity)
        cached = self._users.get(person)
        if cached is None:
            cached = self._principal_name(activity) or ""
            self._users.put(person, cached)
        return ChannelUser("teams", person, cached or None, groups)

    def _principal_name(self, activity: Activity) -> str | None:
        """The user's UPN (or e-mail address) as the connector's member lookup gives it."""
        sender = activity.from_property
        if sender is None or not activity.conversation or not sender.id:
            return None
        base = thread_of(activity).conversation_id
        member = self._connector(
            activity.service_url or "", lambda c: c.conversations.get_conversation_member(base, sender.id)
        )
        if member is None:
            return None
        extra = member.model_extra or {}
        found = extra.get("userPrincipalName") or extra.get("email")
        return str(found) if found and "@" in str(found) else None

    def _groups_of(self, activity: Activity) -> frozenset[str]:
        if not self.config.group_map:
            return frozenset()
        team = _team(activity)
        names = [str(team.get(k)) for k in ("id", "aadGroupId", "name") if team.get(k)]
        lowered = {k.lower() for k in self.config.group_map}
        return mapped_groups([n for n in names if n.lower() in lowered], self.config.group_map)

    # --- ticket updates in the conversation ------------------------------------------------------------------
    def tell_ticket_changes(self, tickets) -> int:
        """Post in its conversation every ticket whose status changed since the requester was last told; the
        count."""
        told = 0
        for link, ticket in ticket_changes(self.store, tickets, "teams"):
            jira = f" (Jira {ticket['jira_key']}: {ticket['jira_status']})" if ticket.get("jira_status") else ""
            text = f"Update on your ticket **{ticket['id']}**: it is now **{ticket['status']}**{jira}."
            if ticket["status"] == "closed":
                comments = ticket.get("comments") or []
                text += f"\n\n> {comments[-1]}" if comments else ""
            thread = TeamsThread(link.thread["service_url"], link.thread["conversation"])
            self._post(thread, text)
            told += 1
        return told


def _person(activity: Activity) -> str:
    sender = activity.from_property
    return (sender.aad_object_id or sender.id) if sender is not None else ""


def _retry_after(headers: Any) -> float:
    try:
        return min(max(float((headers or {}).get("Retry-After", 1)), 0.0), 5.0)
    except (TypeError, ValueError):
        return 1.0
