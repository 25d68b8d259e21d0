"""ticket: offer a drafted ticket, and create it only when the user says yes — never silently.

The lifecycle across turns: offer (draft shown, needs_input) → confirm | edit (re-offer) | decline;
an existing open ticket for the same problem is returned instead of a duplicate. Three kinds of ticket:
an incident (something is broken), a request (something new is needed) and a handoff (the user asked for a
person: the ticket carries the conversation to one, beside the contact configured in `handoff_contact`).
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, cast

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from core.errors import LLMError
from core.lexicon import priority_in
from core.ports import ChatMessage
from core.records import RetrievedChunk, Source, TicketDraft
from nodes.support.answer import knowledge_answer
from nodes.support.article_answer import is_confident, not_found_text
from nodes.support.dialogue_acts import act_spec
from nodes.support.extractive import cite, compose_answer
from nodes.support.language import language_notice, ticket_offer_notice
from nodes.support.replies import LLM_FALLBACK_NOTICE
from nodes.support.ticket_ops import draft_ticket, identity, offer_reply, ticket_kind, ticket_ref
from nodes.support.updates import split_update

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

log = logging.getLogger(__name__)
NO_DESK = (
    "I can't open tickets from here. Please contact the IT service desk directly and mention what we tried so far."
)
HANDOFF_LEAD = "I'll pass this to a person at the IT service desk."
HANDOFF_CONTACT = "To reach them directly: {contact}."
HANDOFF_OFFER = (
    "So they have the details, I can open a ticket with this conversation (passwords and personal data removed):"
)
STILL_OFFERED = "I'm sorry it's still not working.\n\n"
REQUEST_OFFER = "I can open a request with the IT service desk for this:"
INCIDENT_OFFER = "I can open a ticket with the IT service desk for this:"


def offer_text(draft: TicketDraft, *, edited: bool = False) -> str:
    tried = draft["steps_tried"]
    parts = []
    if tried:
        failed = sum(1 for s in tried if s["outcome"] == "failed")
        parts.append(f"the {len(tried)} step{'s' if len(tried) != 1 else ''} you tried ({failed} unsuccessful)")
    if draft["os"] != "unknown":
        parts.append(f"your operating system ({draft['os']})")
    parts.append("this conversation, with passwords and personal data removed")
    kind = draft.get("kind", "incident")
    lead = (
        "Here's the updated ticket:"
        if edited
        else {"request": REQUEST_OFFER, "handoff": HANDOFF_OFFER}.get(kind, INCIDENT_OFFER)
    )
    return (
        f"{lead}\n\n**Summary:** {draft['summary']}\n**Priority:** {draft['priority']}\n"
        f"**It will include:** {', '.join(parts[:-1]) + ' and ' + parts[-1] if len(parts) > 1 else parts[0]}.\n\n"
        'Shall I create it? Reply "yes", "no", or tell me what to change (for example "make it high priority").'
    )


def apply_edit(draft: TicketDraft, text: str) -> TicketDraft:
    """Priority words change the priority; "summary: …"/"call it …" the summary; anything else is added detail."""
    edited = TicketDraft(**draft)
    priority = priority_in(text)
    summary = re.search(r"(?:summary|title)\s*(?:to|:|=|should be)\s*(.+)|\bcall it\s+(.+)", text, re.I)
    if summary:
        edited["summary"] = (summary.group(1) or summary.group(2)).strip().strip('"').rstrip(".")[:100]
    elif priority and len(text.split()) <= 8:
        pass  # a pure priority change ("make it high priority") adds no detail
    else:
        detail = re.sub(r"^(please\s+)?(also\s+)?(add|mention|include|say)( that)?\s*", "", text.strip(), flags=re.I)
        edited["description"] = f"{draft['description']}\n\nAdded by the user: {detail}"
    if priority:
        edited["priority"] = priority
    return TicketDraft(**edited)


def llm_rewrite(draft: TicketDraft, ctx: SupportContext) -> TicketDraft:
    """An LLM writes summary and description from the (redacted) draft; facts stay the draft's."""
    prompt = prompts.render(
        "ticket",
        draft=json.dumps(
            {k: draft[k] for k in ("summary", "description", "os", "steps_tried", "conversation")},
            ensure_ascii=False,
            indent=1,
        ),
    )
    if ctx.llm is None:
        raise LLMError("no LLM is configured")
    reply = ctx.llm.complete(
        [ChatMessage("system", prompts.render("system")), ChatMessage("user", prompt)], max_tokens=500
    )
    match = re.search(r"\{.*\}", reply, re.S)
    try:
        data = json.loads(match.group(0)) if match else {}
    except json.JSONDecodeError as exc:
        raise LLMError(f"ticket text was not valid JSON: {exc}") from exc
    summary, description = str(data.get("summary", "")).strip(), str(data.get("description", "")).strip()
    if not summary or not description or len(summary) > 120:
        raise LLMError("ticket text needs a summary (≤ 120 characters) and a description")
    return TicketDraft(**{**draft, "summary": summary, "description": description})


# a section whose heading says how something is asked for ("Request software that is not in the catalogue")
_REQUEST_HEADING = re.compile(
    r"\b(?:request\w*|order\w*|apply(?:ing)? for|ask(?:ing)? for|get(?:ting)? access)\b", re.I
)


def _request_section(state: SupportState, cited: Source) -> RetrievedChunk | Source | None:
    """The cited article's own "how to request" section: the cited one, or one of the article's other sections the
    search found; None when the article has none (it only mentions the thing asked for)."""
    if _REQUEST_HEADING.search(cited["section"]):
        return cited
    return next(
        (
            c
            for c in state["turn"].get("retrieved_chunks", [])
            if c.get("doc_id") == cited.get("doc_id") and _REQUEST_HEADING.search(c.get("section") or "")
        ),
        None,
    )


def request_procedure(state: SupportState, ctx: SupportContext, config: RunnableConfig) -> tuple[str, list[Source]]:
    """The knowledge base's own procedure for a request ("I need Acrobat Pro installed" → how software is requested
    here), when the search confidently found an article with a section on asking for things; ("", []) otherwise. It goes
    before the request offer, so the employee sees the self-service route first, and the ticket beside it."""
    act = act_spec(state["turn"].get("dialogue_act", ""))
    if act is None or not act.procedure_beside or not state["turn"].get("search_count") or not is_confident(state, ctx):
        return "", []
    text, sources = knowledge_answer(state, ctx, {}, config)
    section = _request_section(state, sources[0]) if sources else None
    if section is None:
        return "", []
    if section is not sources[0]:  # the article's "request …" section says what to do; the matched one mentions it
        text, sources = compose_answer(state["turn"]["query"], [cast(RetrievedChunk, section)], state.get("user_os"))
    body = text.partition("\n\nSources:\n")[0]
    return body.rstrip(), sources


def with_sources(text: str, sources: list[Source]) -> str:
    """The reply with its Sources block at the end (after the offer that follows the procedure)."""
    return f"{text}\n\nSources:\n" + "\n".join(cite(s["n"], s) for s in sources) if sources else text


def handoff_lead(ctx: SupportContext) -> str:
    """What a user who asked for a person is told first: a person will take over, and how to reach one now."""
    contact = HANDOFF_CONTACT.format(contact=ctx.handoff_contact.strip().rstrip(".")) if ctx.handoff_contact else ""
    return " ".join(part for part in (HANDOFF_LEAD, contact) if part)


def ticket(state: SupportState, runtime: Runtime[SupportContext], config: RunnableConfig) -> dict:
    return split_update(_ticket_step(state, runtime.context, config), SESSION_KEYS)


SESSION_KEYS = ("ticket", "ticket_offer")  # what the ticket step changes of the session


def _ticket_step(state: SupportState, ctx: SupportContext, config: RunnableConfig) -> dict:
    """Offer, edit, withdraw or create the ticket, flat: the reply and the session's ticket and offer."""
    session_id, user_id = identity(config)
    # troubleshooting that escalates hands over here with its own sentence already written
    lead = (
        state["turn"].get("answer", "") + "\n\n"
        if (flow := state.get("troubleshooting"))
        and flow["status"] == "escalated"
        and state["turn"].get("action") == "troubleshoot"
        else ""
    )
    update: dict = {"is_clarifying": False}
    offer = state.get("ticket_offer")
    reply = offer_reply(state) if offer else ""
    kind = offer.get("kind", "incident") if offer and reply == "confirm" else ticket_kind(state)
    if kind == "handoff":
        lead += handoff_lead(ctx) + " "
    elif not offer and kind == "request":
        procedure, sources = request_procedure(state, ctx, config)
        if procedure:
            lead, update["sources"] = procedure + "\n\n", sources
    elif (
        not offer
        and kind == "incident"
        and state["turn"].get("search_count")
        and not lead
        and not is_confident(state, ctx)
    ):
        lead = not_found_text(state, ctx) + "\n\n"  # offered because the knowledge base had no answer: say so first
    if ctx.tickets is None:
        text = lead.strip() if ctx.handoff_contact and kind == "handoff" else lead + NO_DESK
        return update | {"answer": text, "needs_input": False, "ticket_offer": None}

    if offer and reply == "decline":
        return update | {
            "ticket_offer": None,
            "ticket_event": "declined",
            "needs_input": False,
            "answer": 'OK, I won\'t open a ticket. If you change your mind, just say "open a ticket".',
        }
    if offer and reply == "remind":
        return update | {"ticket_offer": offer, "needs_input": True, "answer": STILL_OFFERED + offer_text(offer)}
    if offer and reply == "edit":
        edited = apply_edit(offer, state["turn"]["query"])
        return update | {
            "ticket_offer": edited,
            "ticket_event": "edited",
            "needs_input": True,
            "answer": offer_text(edited, edited=True),
        }

    draft = offer if offer and reply == "confirm" else draft_ticket(state, kind)
    existing = ctx.tickets.find_open(session_id=session_id, user_id=user_id, topic=draft["topic"])
    if existing and kind == "request" and existing["topic"] != draft["topic"]:
        existing = None  # a request is something new: an open fault ticket is no duplicate of it
    if existing:
        when = existing["created_at"][:10]
        return update | {
            "ticket": ticket_ref(existing),
            "ticket_offer": None,
            "ticket_event": "existing",
            "needs_input": False,
            "answer": lead
            + (
                f"You already have an open ticket for this: **{existing['id']}** (opened {when}), so I "
                "haven't opened a duplicate. The service desk has the details."
            ),
        }
    if offer and reply == "confirm":
        if priority_in(state["turn"]["query"]):  # "yes, and make it urgent"
            offer = offer | {"priority": priority_in(state["turn"]["query"]) or offer["priority"]}
        created = ctx.tickets.create(offer, session_id=session_id, user_id=user_id)
        noun = "request" if kind == "request" else "ticket"
        jira = (
            f" It's also in Jira as [{created['jira_key']}]({created['jira_url']})." if created.get("jira_key") else ""
        )
        return update | {
            "ticket": ticket_ref(created, kind),
            "ticket_offer": None,
            "ticket_event": "created",
            "needs_input": False,
            "answer": (
                f"Done: I've opened {noun} **{created['id']}** (priority {created['priority']}).{jira} "
                'The service desk will be in touch; you can ask me "what\'s the status of my ticket?" '
                "at any time."
            ),
        }

    if ctx.llm is not None and not state["turn"].get("fallback_notice"):
        try:
            draft = llm_rewrite(draft, ctx)
        except LLMError as exc:
            log.warning("ticket LLM failed, using the template: %s", exc)
            update["fallback_notice"] = LLM_FALLBACK_NOTICE
    language = state["turn"].get("language")
    if language and not state["turn"].get("translated"):  # offline, a message no LLM could translate: its language
        text = f"{language_notice(language)}\n\n{ticket_offer_notice(language)}"
    else:
        text = with_sources(lead + offer_text(draft), update.get("sources") or [])
    return update | {"ticket_offer": draft, "ticket_event": "offered", "needs_input": True, "answer": text}
