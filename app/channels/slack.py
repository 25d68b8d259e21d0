"""Slack: deskmate as a Slack app, on Slack's own Bolt framework.

- Events arrive at `POST /slack/events` (or over Socket Mode, `deskmate slack --socket`). Bolt checks the
  signing secret and the timestamp window (a forged, unsigned or replayed request gets 401 and nothing is read
  further), acknowledges at once, and the answer is written on a worker thread, so Slack's 3-second
  deadline never waits for the support graph.
- deskmate answers a direct message, a mention in a channel (always in a thread) and a follow-up in a thread
  where it already helps that person; it ignores its own messages, other bots and channel chatter that does
  not mention it. A delivery Slack retries is answered once (the event id is kept in the relational store).
- Answers are Block Kit: the answer in mrkdwn, the sources as links to the public document viewer, and
  buttons — It works / Still broken / Next step in a walkthrough, Create ticket / No thanks on a draft,
  Helpful / Not helpful on a cited answer. A press updates its message (`chat.update`: the buttons give way to
  the choice made) and is handled once, however often it is clicked.
- A Slack user becomes deskmate's user through `users.info` (the e-mail address; `users:read.email`), and
  their user groups become audience groups through `DESKMATE_SLACK_GROUP_MAP`.
- Web API calls that get `429` are retried after `Retry-After`.
"""

from __future__ import annotations

import json
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from slack_bolt import App, BoltRequest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler

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
from core.errors import UnknownMessage

log = logging.getLogger(__name__)

ACTION_PREFIX = "deskmate:"
SECTION_CHARS = 2900  # Slack refuses a section text over 3,000 characters
MAX_BLOCKS = 45  # of Slack's 50 per message
FALLBACK_CHARS = 3000  # the notification text
USER_CACHE_S = 3600
USER_CACHE_SIZE = 10_000
GROUP_CACHE_S = 600
PUBLIC_SECRET_WARNING = f":warning: {SECRET_SEEN_WARNING}"


# --- Markdown → Slack mrkdwn -------------------------------------------------------------------------------
_FENCE = re.compile(r"(```.*?```|`[^`\n]+`)", re.S)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_ITALIC = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+", re.M)
_BOLD_MARK = "\x01"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _plain_to_mrkdwn(text: str) -> str:
    text = _escape(text)
    text = _LINK.sub(lambda m: f"<{m.group(2)}|{m.group(1).replace('|', '/')}>", text)
    text = _HEADING.sub(lambda m: f"{_BOLD_MARK}{m.group(1)}{_BOLD_MARK}", text)
    text = _BOLD.sub(lambda m: f"{_BOLD_MARK}{m.group(1) or m.group(2)}{_BOLD_MARK}", text)
    text = _ITALIC.sub(r"_\1_", text)
    text = _BULLET.sub(lambda m: f"{m.group(1)}• ", text)
    return text.replace(_BOLD_MARK, "*")


def mrkdwn(markdown: str) -> str:
    """deskmate's Markdown as Slack's mrkdwn: bold, italics, headings, links and bullets converted, `&<>`
    escaped, code spans and fences left exactly as written (backslashes and all)."""
    parts = _FENCE.split(markdown)
    return "".join(part if i % 2 else _plain_to_mrkdwn(part) for i, part in enumerate(parts))


def _sections(text: str) -> list[str]:
    """`text` in pieces Slack accepts as section texts, split at paragraph (else line) boundaries."""
    pieces: list[str] = []
    current = ""
    for paragraph in text.split("\n\n"):
        candidate = f"{current}\n\n{paragraph}" if current else paragraph
        if len(candidate) <= SECTION_CHARS:
            current = candidate
            continue
        if current:
            pieces.append(current)
        while len(paragraph) > SECTION_CHARS:
            cut = paragraph.rfind("\n", 0, SECTION_CHARS)
            cut = cut if cut > SECTION_CHARS // 2 else SECTION_CHARS
            pieces.append(paragraph[:cut])
            paragraph = paragraph[cut:].lstrip("\n")
        current = paragraph
    if current:
        pieces.append(current)
    return pieces or [" "]


# --- replies as Block Kit -------------------------------------------------------------------------------------
def _button(key: str, message_id: str, owner: str) -> dict:
    button: dict[str, Any] = {
        "type": "button",
        "action_id": f"{ACTION_PREFIX}{key}",
        "text": {"type": "plain_text", "text": BUTTON_LABELS[key]},
        "value": json.dumps({"m": message_id, "u": owner}),  # the answer, and whose question it answered
    }
    if key in ("works", "ticket_yes"):
        button["style"] = "primary"
    return button


def blocks_for(view: ReplyView, *, owner: str = "", extra_notices: tuple[str, ...] = ()) -> list[dict]:
    """The reply as Block Kit blocks: answer sections, step and notices, sources, buttons (for `owner`, the Slack
    user whose question it answers)."""
    blocks: list[dict] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": s}} for s in _sections(mrkdwn(view.text))
    ]
    blocks = blocks[: MAX_BLOCKS - 4]
    context: list[str] = []
    if view.step:
        context.append(f"Step {view.step[0]} of {view.step[1]}")
    if view.ticket_id:
        context.append(f"Ticket *{view.ticket_id}* — I'll tell you here when its status changes")
    context += [_escape(n) for n in (*view.notices, *extra_notices)]
    if context:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": c[:2900]} for c in context[:10]]})
    if view.sources:
        links = [
            f"<{s.url}|{_escape(s.title)}{' › ' + _escape(s.section) if s.section else ''}>"
            if s.url
            else f"{_escape(s.title)}{' › ' + _escape(s.section) if s.section else ''}"
            for s in view.sources
        ]
        blocks.append(
            {"type": "context", "elements": [{"type": "mrkdwn", "text": ("Sources: " + " · ".join(links))[:2900]}]}
        )
    keys = [*view.buttons, *(("helpful", "not_helpful") if view.votes else ())]
    if keys:
        blocks.append(
            {
                "type": "actions",
                "block_id": "deskmate-buttons",
                "elements": [_button(k, view.message_id, owner) for k in keys],
            }
        )
    return blocks


def fallback_text(view: ReplyView) -> str:
    """The plain text Slack shows in notifications and where blocks cannot be drawn."""
    return view.text[:FALLBACK_CHARS] or "…"


def after_press(blocks: list[dict], pressed: str, user_id: str) -> list[dict]:
    """The message's blocks once `pressed` was chosen: the walkthrough or ticket buttons (or, for a vote, the
    vote buttons) give way to a line saying what was chosen, by whom."""
    is_vote = pressed in VOTES
    kept: list[dict] = []
    for block in blocks:
        if block.get("type") == "actions" and block.get("block_id") == "deskmate-buttons":
            elements = [
                e
                for e in block.get("elements", [])
                if (e.get("action_id", "").removeprefix(ACTION_PREFIX) in VOTES) != is_vote
            ]
            if elements:
                kept.append({**block, "elements": elements})
            continue
        kept.append(block)
    kept.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"{PRESSED[pressed]} (<@{user_id}>)"}]})
    return kept


# --- the app ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SlackConfig:
    bot_token: str
    signing_secret: str
    api_url: str = "https://slack.com/api/"
    group_map: dict[str, str] | None = None
    workers: int = 8  # answers written at once; more wait their turn (already acknowledged)
    app_token: str | None = None  # Socket Mode (xapp-…)


class SlackChannel:
    """The Bolt app and what its listeners do."""

    def __init__(self, service: ChannelService, store: ChannelStore, config: SlackConfig) -> None:
        self.service, self.store, self.config = service, store, config
        self.client = WebClient(token=config.bot_token, base_url=_with_slash(config.api_url))
        self.client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=3))
        self.client.retry_handlers.append(ConnectionErrorRetryHandler(max_retry_count=1))
        self._executor = ThreadPoolExecutor(max_workers=config.workers, thread_name_prefix="slack-answer")
        self.app = App(
            client=self.client,
            signing_secret=config.signing_secret,
            token_verification_enabled=False,  # auth.test on the first event, not at start-up (Slack may be away)
            process_before_response=False,
            listener_executor=self._executor,
            raise_error_for_unhandled_request=False,
        )
        self._users = TimedCache(USER_CACHE_S, USER_CACHE_SIZE)
        self._groups = TimedCache(GROUP_CACHE_S, 1)
        self.app.event("app_mention")(self._on_mention)
        self.app.event("message")(self._on_message)
        self.app.action(re.compile(f"^{re.escape(ACTION_PREFIX)}"))(self._on_press)

    def dispatch(self, body: str, headers: dict[str, Any]) -> tuple[int, str, dict[str, str]]:
        """One HTTP delivery from Slack: (status, body, headers) — 401 for a bad signature, 200 once acknowledged."""
        response = self.app.dispatch(BoltRequest(body=body, headers=headers))
        return response.status, response.body, response.first_headers_without_set_cookie()

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    # --- listeners ------------------------------------------------------------------------------------
    def _on_mention(self, body: dict, event: dict) -> None:
        if not self._first(f"slack:event:{body.get('event_id') or event.get('ts')}"):
            return
        thread_ts = event.get("thread_ts") or event["ts"]
        text = _without_mentions(event.get("text", ""))
        self._answer(body.get("team_id", ""), event["channel"], thread_ts, event["user"], text, public=True)

    def _on_message(self, body: dict, event: dict) -> None:
        if event.get("subtype") or event.get("bot_id") or not event.get("user"):
            return  # edits, joins, other bots and deskmate itself
        direct = event.get("channel_type") == "im"
        thread_ts = event.get("thread_ts")
        if not direct:
            if not thread_ts or _mentions_anyone(event.get("text", "")):
                return  # channel chatter, or a mention (the app_mention event answers that one)
            team = body.get("team_id", "")
            user = ChannelUser("slack", event["user"])
            thread = ThreadKey("slack", (team, event["channel"], thread_ts))
            if self.service.chat.owner(thread.session_id(user)) is None:
                return  # a thread deskmate is not helping this person in
        if not self._first(f"slack:event:{body.get('event_id') or event.get('ts')}"):
            return
        text = _without_mentions(event.get("text", ""))
        self._answer(
            body.get("team_id", ""), event["channel"], thread_ts or event["ts"], event["user"], text, public=not direct
        )

    def _on_press(self, ack, body: dict, action: dict) -> None:
        ack()
        key = action.get("action_id", "").removeprefix(ACTION_PREFIX)
        if key not in BUTTON_MESSAGES and key not in VOTES:
            return
        message = body.get("message") or {}
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id", "")
        message_ts = message.get("ts") or (body.get("container") or {}).get("message_ts", "")
        thread_ts = message.get("thread_ts") or message_ts
        slack_user = (body.get("user") or {}).get("id", "")
        try:
            value = json.loads(action.get("value") or "{}")
        except ValueError:
            return
        message_id, owner = value.get("m", ""), value.get("u", "")
        if owner and slack_user != owner:  # someone else's answer: their buttons stay as they are
            self._call(
                "chat_postEphemeral",
                channel=channel,
                user=slack_user,
                thread_ts=thread_ts,
                text=f"Those buttons are for <@{owner}>'s question. Mention me to ask your own.",
            )
            return
        kind = "vote" if key in VOTES else "press"
        if kind == "press" and not self._first(f"slack:press:{channel}:{message_ts}"):
            return  # the message's buttons were already used (a double click, a second replica)
        team = (body.get("team") or {}).get("id", "")
        user = self._user(slack_user)
        thread = ThreadKey("slack", (team, channel, thread_ts))
        blocks = after_press(message.get("blocks") or [], key, slack_user)
        self._call("chat_update", channel=channel, ts=message_ts, text=message.get("text") or "…", blocks=blocks)
        try:
            view = self.service.press(thread, user, key, message_id)
        except UnknownMessage:
            self._post(
                channel, thread_ts, "That answer belongs to someone else's conversation, so I can't record that."
            )
            return
        except Exception:
            log.exception("slack: the %s button on %s failed", key, message_ts)
            self._post(channel, thread_ts, FAILED_REPLY)
            return
        if view is not None:
            self._deliver(channel, thread_ts, view, owner=slack_user, public=False)

    # --- answering ------------------------------------------------------------------------------------
    def _answer(self, team: str, channel: str, thread_ts: str, slack_user: str, text: str, *, public: bool) -> None:
        user = self._user(slack_user)
        thread = ThreadKey("slack", (team, channel, thread_ts))
        answer = self.service.answer(thread, user, text, public=public)
        if answer.view is None:
            self._post(channel, thread_ts, answer.problem)
            return
        self._deliver(channel, thread_ts, answer.view, owner=slack_user, public=answer.secret_seen)

    def _deliver(self, channel: str, thread_ts: str, view: ReplyView, *, owner: str, public: bool) -> None:
        extra = (PUBLIC_SECRET_WARNING,) if public else ()
        self.service.link_ticket(self.store, "slack", view, {"channel": channel, "thread_ts": thread_ts})
        self._call(
            "chat_postMessage",
            channel=channel,
            thread_ts=thread_ts,
            text=fallback_text(view),
            blocks=blocks_for(view, owner=owner, extra_notices=extra),
            unfurl_links=False,
        )

    def _post(self, channel: str, thread_ts: str, text: str) -> None:
        self._call("chat_postMessage", channel=channel, thread_ts=thread_ts, text=text)

    def _call(self, method: str, **kwargs) -> dict | None:
        try:
            return getattr(self.client, method)(**kwargs).data
        except SlackApiError as exc:
            log.warning("slack %s failed: %s", method, exc.response.get("error") if exc.response else exc)
        except Exception as exc:  # Slack away: the answer is lost for the platform, never for the store
            log.warning("slack %s failed: %s", method, exc)
        return None

    def _first(self, key: str) -> bool:
        try:
            return self.store.first_delivery(key)
        except Exception as exc:  # the store away: answer (a rare duplicate beats silence)
            log.warning("slack: could not record delivery %s: %s", key, exc)
            return True

    # --- who is asking ---------------------------------------------------------------------------------
    def _user(self, slack_user: str) -> ChannelUser:
        cached = self._users.get(slack_user)
        if cached is not None:
            return cached
        email = None
        info = self._call("users_info", user=slack_user)
        if info and info.get("ok"):
            email = ((info.get("user") or {}).get("profile") or {}).get("email") or None
        groups = self._groups_of(slack_user)
        user = ChannelUser("slack", slack_user, email, groups)
        self._users.put(slack_user, user)
        return user

    def _groups_of(self, slack_user: str) -> frozenset[str]:
        if not self.config.group_map:
            return frozenset()
        members = self._groups.get("all")
        if members is None:
            listing = self._call("usergroups_list", include_users=True) or {}
            members = {g.get("handle", ""): set(g.get("users") or []) for g in listing.get("usergroups") or []}
            self._groups.put("all", members)
        mine = [handle for handle, users in members.items() if slack_user in users and handle in self.config.group_map]
        return mapped_groups(mine, self.config.group_map)

    # --- ticket updates in the thread ---------------------------------------------------------------------
    def tell_ticket_changes(self, tickets) -> int:
        """Post in its thread every ticket whose status changed since the requester was last told; the count."""
        told = 0
        for link, ticket in ticket_changes(self.store, tickets, "slack"):
            jira = f" (Jira {ticket['jira_key']}: {ticket['jira_status']})" if ticket.get("jira_status") else ""
            text = f"Update on your ticket *{ticket['id']}*: it is now *{ticket['status']}*{jira}."
            if ticket["status"] == "closed":
                comments = ticket.get("comments") or []
                text += f"\n> {_escape(comments[-1])}" if comments else ""
            self._post(link.thread["channel"], link.thread["thread_ts"], text)
            told += 1
        return told


def _with_slash(url: str) -> str:
    return url if url.endswith("/") else url + "/"


_MENTION = re.compile(r"<@[UW][A-Z0-9]+(?:\|[^>]*)?>")


def _without_mentions(text: str) -> str:
    return _MENTION.sub("", text).strip()


def _mentions_anyone(text: str) -> bool:
    return bool(_MENTION.search(text))
