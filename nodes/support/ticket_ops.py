"""Ticket operations shared by the ticket and troubleshoot nodes: identity, drafting, closing."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, Mapping

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from core.lexicon import (
    OS_LABELS,
    content_words,
    eager_yes,
    is_troubleshooting,
    it_topics,
    priority_in,
    reply_kind,
    topic_label,
    wants_ticket,
)
from core.records import Ticket, TicketDraft, TicketRef, TroubleshootingStep
from nodes.support.dialogue_acts import act_spec, asks_for_service, dialogue_act
from nodes.support.tried_fixes import label, tried_fixes

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

log = logging.getLogger(__name__)
ANONYMOUS = "anonymous"
MAX_CONVERSATION_MESSAGES = 20
MAX_SUMMARY_CHARS = 100


def identity(config: RunnableConfig) -> tuple[str, str]:
    """(session_id, user_id) from the run's config — never from the model or the message."""
    configurable = (config or {}).get("configurable", {})
    return str(configurable.get("thread_id") or ""), str(configurable.get("user_id") or ANONYMOUS)


def ticket_ref(ticket: Ticket, kind: str | None = None) -> TicketRef:
    """The session's reference to a ticket; `kind` on the turn that created it (what insights count it as)."""
    ref = TicketRef(
        id=ticket["id"], url=ticket.get("jira_url"), status=ticket["status"], jira_key=ticket.get("jira_key")
    )
    if ticket.get("priority"):
        ref["priority"] = ticket["priority"]
    if kind:
        ref["kind"] = kind
    return ref


def conversation(state: SupportState) -> list[dict]:
    """The session's (already redacted) messages plus this turn's message, bounded."""
    messages = [
        {"role": "user" if isinstance(m, HumanMessage) else "assistant", "content": str(m.content)}
        for m in state.get("messages", [])
        if isinstance(m, (HumanMessage, AIMessage))
    ]
    messages.append({"role": "user", "content": state["turn"]["query"]})
    return messages[-MAX_CONVERSATION_MESSAGES:]


# words of a request for a ticket ("I need to open an incident"), which say nothing about the problem
_TICKET_WORDS = frozenset(
    "open create raise log file submit make start ticket tickets incident incidents case cases "
    "request requests new someone person human agent technician".split()
)


def _states_a_problem(text: str) -> bool:
    """A user message that says what the ticket is about: not "open a ticket", "a person please", "thanks"
    or "yes", which say nothing about the problem."""
    act = dialogue_act(text)
    if act == "handoff" and (it_topics(text) or is_troubleshooting(text)):
        return True  # "my printer is broken, can I talk to a person?" says both
    if (act and act != "service_request") or reply_kind(text):
        return False
    return any(w not in _TICKET_WORDS for w in content_words(text))


def problem_statement(state: SupportState) -> str:
    """What the ticket is about: the troubleshooting issue, else the last user message that stated a problem
    or a request; "" when the conversation never said."""
    flow = state.get("troubleshooting")
    if flow:
        return flow["issue"]
    for message in reversed(conversation(state)):
        if message["role"] == "user" and _states_a_problem(message["content"]):
            return message["content"]
    return ""


def ticket_kind(state: SupportState) -> str:
    """handoff (the user asked for a person), request (something new) or incident (something is broken)."""
    if state["turn"].get("dialogue_act") == "handoff":
        return "handoff"
    stated = problem_statement(state) or state["turn"]["query"]
    if state["turn"].get("dialogue_act") == "service_request" or (
        not state.get("troubleshooting") and asks_for_service(stated)
    ):
        return "request"
    return "incident"


# a request for a ticket in front of the problem is not part of the problem's summary
_TICKET_REQUEST = re.compile(
    r"^\s*(?:(?:please|pls|can you|could you|i need you to|i want to|i'd like to|"
    r"i would like to)\s+)*(?:open|create|raise|file|log|make|submit)\s+(?:me\s+)?"
    r"(?:a|an)\s+(?:new\s+)?(?:ticket|issue|request|case)(?:\s+(?:for|about))?"
    r"\s*(?:please)?\s*[,:;.\-–—]?\s*",
    re.IGNORECASE,
)


HANDOFF_SUMMARY = "Asked to talk to a person"
_KIND_LINES = {
    "request": "Service request: something new is needed (nothing is broken).",
    "handoff": "The user asked to talk to a person at the IT service desk.",
}


TRIED_BEFORE_KEY = "tried_before"  # in a walkthrough's source: the steps of the ways tried before, with their outcome


def draft_ticket(state: SupportState, kind: str = "incident") -> TicketDraft:
    """A template draft; the ticket node lets an LLM rewrite summary and description when one is configured."""
    stated_problem = problem_statement(state)
    issue = stated_problem or state["turn"]["query"]
    flow = state.get("troubleshooting")
    topic = (
        (flow.get("topic") if flow else None) or ", ".join(it_topics(issue) or content_words(issue)[:3]) or "general"
    )
    user_text = " ".join(m["content"] for m in conversation(state) if m["role"] == "user")
    os_label = OS_LABELS.get(state.get("user_os") or "", "unknown")
    # the steps of ways to the same end tried before the one walked now, then this one's
    earlier: list[Mapping[str, Any]] = list((flow.get("source") or {}).get(TRIED_BEFORE_KEY, [])) if flow else []
    walked: list[Mapping[str, Any]] = [*earlier, *(flow.get("steps", []) if flow else [])]
    steps = [TroubleshootingStep(step=s["step"], outcome=s["outcome"]) for s in walked if s["outcome"] != "pending"]
    main_topic = topic.split(",")[0].strip()
    stated = _TICKET_REQUEST.sub("", issue).strip() or issue.strip()  # "please open a ticket, X" → "X"
    sentence = stated[:1].upper() + stated[1:]
    # "My VPN keeps disconnecting" already names its topic; "keeps crashing" gets "Outlook: " in front
    summary = (
        sentence
        if main_topic in it_topics(issue) or main_topic.lower() in issue.lower()
        else f"{topic_label(main_topic)}: {sentence}"
    )
    if kind == "request":
        summary, topic = f"Request: {sentence}", f"request: {topic}"
    elif kind == "handoff" and not stated_problem:
        summary, topic = HANDOFF_SUMMARY, "talk to a person"
    summary = re.sub(r"\s+", " ", summary).strip()
    if len(summary) > MAX_SUMMARY_CHARS:
        summary = summary[: MAX_SUMMARY_CHARS - 1].rsplit(" ", 1)[0] + "…"
    lines = ["Reported through the deskmate chat."]
    if kind in _KIND_LINES:
        lines.append(_KIND_LINES[kind])
    what = "Request" if kind == "request" else "Problem"
    lines += [
        "",
        f"{what}: {stated_problem or '(not described yet; see the conversation)'}",
        f"Operating system: {os_label}",
    ]
    said_tried = tried_fixes(user_text)  # "reinstalling didn't help": what they did before asking, in their words
    if said_tried:
        lines.append("Already tried before asking, as the employee said: " + ", ".join(label(k) for k in said_tried))
    if steps:
        lines += ["", "Troubleshooting steps tried:"]
        lines += [f"{i}. {s['step']} — {s['outcome']}" for i, s in enumerate(steps, start=1)]
    source: Mapping[str, Any] = (flow.get("source") if flow else None) or {}
    if source.get("for_it_team"):  # steps the employee could not carry out: the article has them for IT
        parts = "; ".join(source["for_it_team"])
        lines += [
            "",
            f'For IT: "{source.get("title", "")}" ({source.get("source", "")}) documents admin steps in: {parts}',
        ]
    incidents = state["turn"].get("incidents") or []
    if incidents:
        lines += ["", "Known incidents at the time: " + "; ".join(f"{i['name']} ({i['status']})" for i in incidents)]
    lines += ["", "The conversation is attached; passwords and personal data were removed before it was stored."]
    return TicketDraft(
        summary=summary,
        description="\n".join(lines),
        priority=priority_in(user_text) or "medium",
        topic=topic,
        os=os_label,
        steps_tried=steps,
        conversation=conversation(state),
        kind=kind,
    )


def close_session_ticket(state: SupportState, ctx: SupportContext, config: RunnableConfig, *, reason: str) -> dict:
    """Close this session's open ticket (locally and, best-effort, in Jira); {} when there is none."""
    ref = state.get("ticket")
    if not ref or ref.get("status") != "open" or ctx.tickets is None:
        return {}
    closed = ctx.tickets.close(ref["id"], f"Closed from the deskmate chat: the user reports it works now. {reason}")
    if closed is None:
        return {}
    return {"ticket": ticket_ref(closed), "ticket_event": "closed"}


# details for the ticket: contact data (often already a redaction placeholder), where the user is, what else to say
_TICKET_DETAIL = re.compile(
    r"\b(change|add|mention|include|summary|title|priority|say that|note that|also)\b|"
    r"\[REDACTED:(EMAIL|PHONE_NUMBER|PERSON)(_\d+)?\]|"
    r"\bmy (e-?mail|email address|phone|phone number|number|mobile|extension|ext|desk|room|floor|office|location|"
    r"name|laptop|computer|asset tag|computer name|hostname|manager|team|department) is\b|"
    r"\b(i'?m|i am) (in|at|on) (building|room|floor|the \w+ floor|site|office|desk)\b",
    re.I,
)


def offer_reply(state: SupportState) -> str:
    """How the message answers a pending ticket offer: confirm, decline, edit, remind ("still broken": the problem
    goes on, so the offer stands and is asked again) or '' (not an answer)."""
    kind = state["turn"].get("reply_kind", "")
    text = state["turn"]["query"].strip()
    act = act_spec(state["turn"].get("dialogue_act", ""))
    if act is not None and act.outranks_replies and not re.fullmatch(r"\W*(please\s+)?escalated?( it)?\W*", text, re.I):
        return ""  # "STOP. Get me a person": the act, never a no to the offer (a bare "escalate" raises the priority)
    if eager_yes(text):
        return "confirm"  # "great, go ahead, it's urgent!": the urgency never makes the yes a no or an "it works"
    if kind in ("deny", "exit") or re.match(
        r"^(no|nope|nah)\b(?!\s+(?:luck|joy|change|difference|dice|go)\b)", text, re.I
    ):
        return "decline"  # "no thanks", not "no luck, still the same"
    if kind == "affirm" or (
        wants_ticket(text)
        and state["turn"].get("dialogue_act") != "handoff"
        and not it_topics(text)
        and not is_troubleshooting(text)
    ):
        return "confirm"  # "yes", or asking for the very ticket on offer ("please open the ticket"), not another
    if priority_in(text) and re.match(r"^(yes|yeah|yep|sure|ok|okay|please do|go ahead)\b", text, re.I):
        return "confirm"  # "yes, and make it urgent": the ticket node sets the priority as it creates it
    if priority_in(text) or _TICKET_DETAIL.search(text):
        return "edit"
    if kind == "failed" and not it_topics(text):  # "still broken", "no luck": no yes, no no, and no new problem
        return "remind"
    return ""
