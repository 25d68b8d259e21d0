"""decide: choose the next action. The policy in code decides alone offline; with an LLM, the LLM
proposes and the same policy disposes (invalid, unavailable or unsafe choices are overridden).

Order of authority:
1. forced rules — replies to an open question (ticket offer, troubleshooting step), closings that end
   what is open, the turn limit — that no LLM may override;
2. the dialogue acts (nodes/dialogue_acts.py: a person, please; my ticket; something new; thanks; what are
   you …) and a message no one can translate: the policy decides these alone, no LLM is asked;
3. the LLM's proposal, when one is configured, kept only if it is one of the actions offered for this
   message (nodes/actions.py) and the policy allows it here and now;
4. the policy rules, top to bottom, the first that holds deciding.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Sequence

from langgraph.runtime import Runtime

import prompts
from graphs.context import SupportContext
from graphs.errors import LLMError
from graphs.ports import ChatMessage
from graphs.state import SupportState
from nodes.actions import BUILTIN_CATALOGUE, offer_actions
from nodes.dialogue_acts import normalise
from nodes.embed_query import is_follow_up, search_variants
from nodes.lexicon import (about_speaker, asks_for_something_new, asks_status, asks_ticket_status, is_question,
                           is_troubleshooting, it_topics, wants_ticket)
from nodes.replies import LLM_FALLBACK_NOTICE
from nodes.article_answer import found_articles, is_confident, points_into_article
from nodes.troubleshoot import walkthrough_steps, workflow_reply

log = logging.getLogger(__name__)

ACTIONS: tuple[str, ...] = ("answer", "clarify", "search_kb", "troubleshoot", "check_status", "create_ticket",
                            "search_tickets")
# acts answered with a fixed reply (nodes/converse.py); the closings among them also end what is open
CONVERSATIONAL_ACTS = ("greeting", "thanks", "farewell", "resolved", "bot_challenge", "capabilities", "out_of_scope")
CLOSING_ACTS = ("thanks", "farewell", "resolved")
# acts that are never a reply to a troubleshooting step: they pause it
SWITCHING_ACTS = ("handoff", "ticket_status", "service_request", "bot_challenge", "capabilities", "out_of_scope")
MAX_CLARIFY_STREAK = 2  # never ask more than two clarifying questions in a row


@dataclass(frozen=True)
class Decision:
    action: str
    reasoning: str
    decided_by: str = "policy"


def _untried_variants(state: SupportState) -> list[str]:
    tried = set(state.get("tried_queries", []))
    return [v for v in search_variants(state) if v not in tried]


# details for the ticket: contact data (often already a redaction placeholder), where the user is, what else to say
_TICKET_DETAIL = re.compile(
    r"\b(change|add|mention|include|summary|title|priority|say that|note that|also)\b|"
    r"\[REDACTED:(EMAIL|PHONE_NUMBER|PERSON)(_\d+)?\]|"
    r"\bmy (e-?mail|email address|phone|phone number|number|mobile|extension|ext|desk|room|floor|office|location|"
    r"name|laptop|computer|asset tag|computer name|hostname|manager|team|department) is\b|"
    r"\b(i'?m|i am) (in|at|on) (building|room|floor|the \w+ floor|site|office|desk)\b", re.I)


def offer_reply(state: SupportState) -> str:
    """How the message answers a pending ticket offer: confirm, decline, edit or '' (not an answer)."""
    from nodes.lexicon import priority_in

    kind = state.get("reply_kind", "")
    text = state["query"].strip()
    if kind in ("deny", "exit") or re.match(r"^(no|nope|nah)\b", text, re.I):
        return "decline"
    if kind == "affirm" or (wants_ticket(text) and state.get("dialogue_act") != "handoff" and not it_topics(text)
                            and not is_troubleshooting(text)):
        return "confirm"  # "yes", or asking for the very ticket on offer ("please open the ticket"), not another
    if state.get("dialogue_act") == "handoff" and not re.fullmatch(r"\W*(please\s+)?escalated?( it)?\W*", text, re.I):
        return ""  # "escalate this to a person": a handoff, not a priority; a bare "escalate" raises the priority
    if priority_in(text) and re.match(r"^(yes|yeah|yep|sure|ok|okay|please do|go ahead)\b", text, re.I):
        return "confirm"  # "yes, and make it urgent": the ticket node sets the priority as it creates it
    if priority_in(text) or _TICKET_DETAIL.search(text):
        return "edit"
    return ""


def is_topic_switch(state: SupportState) -> bool:
    """A message during troubleshooting that is about something else, not a reply to the step."""
    if state.get("reply_kind"):
        return False
    text = state["query"]
    if state.get("dialogue_act") in SWITCHING_ACTS or wants_ticket(text) or asks_ticket_status(text) \
            or asks_status(text):
        return True
    flow = state.get("troubleshooting") or {}
    new_topics = set(it_topics(text)) - set((flow.get("topic") or "").split(", "))
    # a question, or a different problem ("also my printer won't print"); a plain report of what the
    # user saw ("I opened a website and it loaded") is a reply to the step, whatever words it uses
    return (is_question(text) and len(text.split()) > 3) or (bool(new_topics) and is_troubleshooting(text))


def _open_ticket(state: SupportState) -> bool:
    ticket = state.get("ticket")
    return bool(ticket and ticket.get("status") == "open")


def _closes_something(state: SupportState) -> bool:
    """A closing that ends what is open: thanks or goodbye end a step-by-step flow or a ticket offer, "it
    works now" ends an offer or the session's open ticket (during a flow, the flow itself takes "it works")."""
    act = state.get("dialogue_act")
    flow = state.get("troubleshooting") or {}
    if act in ("thanks", "farewell"):
        return flow.get("status") == "in_progress" or bool(state.get("ticket_offer"))
    return act == "resolved" and flow.get("status") != "in_progress" and \
        (bool(state.get("ticket_offer")) or _open_ticket(state))


def forced_decision(state: SupportState, ctx: SupportContext) -> Decision | None:
    """Rules no LLM may override: they answer a question deskmate itself asked, or enforce a bound."""
    if state.get("ticket_offer") and offer_reply(state):
        return Decision("create_ticket", f"the message answers the pending ticket offer ({offer_reply(state)})")
    if _closes_something(state):
        return Decision("converse", f"a closing ({state['dialogue_act']}): end what is open and say goodbye")
    flow = state.get("troubleshooting")
    if flow and flow["status"] == "in_progress" and not is_topic_switch(state):
        return Decision("troubleshoot", f"reply to troubleshooting step {flow['current'] + 1}: "
                                        f"{workflow_reply(state) or 'unclear'}")
    if flow and flow["status"] == "paused" and state.get("reply_kind") == "resume":
        return Decision("troubleshoot", "the user asked to resume the paused troubleshooting")
    if (state.get("turn_count", 0) >= ctx.max_turns and not state.get("ticket")
            and not state.get("ticket_offer") and ctx.tickets is not None):
        return Decision("create_ticket", f"{ctx.max_turns} turns without a resolution: offer a ticket")
    return None


def policy_decides(state: SupportState, ctx: SupportContext | None) -> bool:
    """A configured answer policy or a response mode asked for this turn owns what happens when the knowledge
    base has nothing: its rules (a "not found" rule, general help from an LLM, RAG_ONLY's refusal) answer, not
    the built-in "this is the IT help desk" reply."""
    return ctx is not None and ((ctx.policy is not None and ctx.policy.configured) or bool(state.get("response_mode")))


def dialogue_decision(state: SupportState, ctx: SupportContext | None = None) -> Decision | None:
    """What the message does decides, before any search result: a fixed reply, a person, a ticket lookup or a
    request; and a message in a language no LLM translated gets the notice in that language. A message that
    only sounds off-topic ("weather", "movie mode", "my TV") was searched first: when the knowledge base answers
    it (a TV manual, a weather app's guide), the knowledge base wins."""
    act, text = state.get("dialogue_act", ""), state["query"]
    if state.get("language") and not state.get("translated"):
        return Decision("converse", f"the message is in '{state['language']}' and was not translated: say, in "
                                    "that language, that only English documents are searched")
    if act == "out_of_scope" and ctx is not None and (is_confident(state, ctx) or policy_decides(state, ctx)):
        return None
    if act in CONVERSATIONAL_ACTS:
        return Decision("converse", f"{act}: a reply without the knowledge base")
    if act == "ticket_status" or asks_ticket_status(text):
        return Decision("search_tickets", "the user asks about their tickets")
    if act == "handoff":
        return Decision("create_ticket", "the user asks for a person: hand over with the conversation")
    if act == "service_request":
        return Decision("create_ticket", "a request for something new, not a fault: offer a request")
    if wants_ticket(normalise(text)):  # "open an incidnet" too
        return Decision("create_ticket", "the user asks for a ticket")
    return None


def integration_choice(state: SupportState, ctx: SupportContext) -> Decision | None:
    """Without an LLM: the configured integration whose example queries the message is closest to, when
    that similarity reaches ctx.integration_min_score and beats every built-in action's examples — and the
    message is neither a request for something new ("I need a new laptop" is a ticket, not a lookup) nor a
    problem to troubleshoot, and, for a lookup about the caller, is about the speaker ("laptop warranty
    policy" is a documentation question)."""
    if not ctx.integrations or ctx.actions is None or not ctx.actions.embedded:
        return None
    if asks_for_something_new(state["query"]) or state.get("intent") == "troubleshooting":
        return None  # a request, or a problem to fix: the ticket and troubleshooting rules handle those
    try:
        scores = ctx.actions.scores(state["query"], state.get("query_embedding") or None, ctx.embedder)
    except Exception as exc:  # the embedder failed: the other rules still answer
        log.warning("integration choice skipped: %s", exc)
        return None
    best = max(scores, key=lambda name: scores[name])
    if best in ctx.integrations and scores[best] >= ctx.integration_min_score and \
            (not ctx.integrations[best].needs_user or about_speaker(state["query"])):
        return Decision(best, f"the message matches the {best} lookup's examples (similarity {scores[best]:.2f})")
    return None


def policy_decision(state: SupportState, ctx: SupportContext) -> Decision:
    """The rules, in order. Readable top to bottom; the first that holds decides."""
    forced = forced_decision(state, ctx) or dialogue_decision(state, ctx)
    if forced:
        return forced
    text = state["query"]
    lookup = integration_choice(state, ctx)
    if lookup:
        return lookup
    troubleshooting = state.get("intent") == "troubleshooting"
    if not state.get("status_checked") and (asks_status(text) or (troubleshooting and ctx.status is not None)):
        return Decision("check_status", "an outage question, or a problem that a known incident may explain")
    if state.get("incidents") and (troubleshooting or asks_status(text)):
        return Decision("answer", f"{len(state['incidents'])} known incident(s) match the message: tell the user")
    if asks_status(text):
        return Decision("answer", "status question: report the status page")
    if state.get("is_vague") and not is_follow_up(state) and state.get("clarify_streak", 0) < MAX_CLARIFY_STREAK:
        return Decision("clarify", "the message names no system or symptom to search for")
    if points_into_article(state):
        return Decision("answer", f"a follow-up about a step or method of '{state['active_article']['title']}'")
    if is_confident(state, ctx):
        best = found_articles(state, ctx)[0]
        evidence = (f"'{best['title']}' answers it with probability {best['answerable']:.2f} (threshold "
                    f"{ctx.confidence_threshold():.2f}), confidence {best['confidence']:.2f}")
        if troubleshooting and len(walkthrough_steps(state, ctx)) >= 2:
            return Decision("troubleshoot", f"a problem, and the knowledge base has steps for it: {evidence}")
        return Decision("answer", f"the knowledge base answers this: {evidence}")
    searches = state.get("search_count", 0)
    if searches < ctx.max_searches and _untried_variants(state):
        return Decision("search_kb", f"no confident answer after {searches} search(es) (confidence "
                                     f"{state.get('confidence') or 0:.2f}); trying another wording")
    about_it = troubleshooting or bool(it_topics(text)) or is_follow_up(state)
    if not about_it and ctx.llm is None and not state.get("is_vague") and not policy_decides(state, ctx):
        # nothing in the knowledge base, and nothing in the message about IT ("how many vacation days do I have
        # left?"): say what the help desk does rather than "rephrase it with the name of the app"
        return Decision("converse", f"no answer in the knowledge base after {searches} search(es), and the message "
                                    "names no IT system or problem: say what the help desk does")
    if about_it and ctx.tickets is not None and not state.get("is_vague") and not policy_decides(state, ctx):
        return Decision("create_ticket", f"no answer in the knowledge base after {searches} search(es) (confidence "
                                         f"{state.get('confidence') or 0:.2f}): offer a ticket")
    return Decision("answer", f"no confident answer after {searches} search(es) (confidence "
                              f"{state.get('confidence') or 0:.2f}); answer honestly that the knowledge base does not "
                              "cover it")


def enforce_policy(proposed: Decision, state: SupportState, ctx: SupportContext,
                   offered: Sequence[str] | None = None) -> Decision:
    """Code disposes: keep the LLM's choice only when the policy allows it here and now (and, when the LLM
    was offered a subset of the actions, only when it chose one of them)."""
    fallback = policy_decision(state, ctx)
    forced = forced_decision(state, ctx)
    if forced:
        return forced if proposed.action == forced.action else Decision(
            forced.action, f"LLM proposed '{proposed.action}', overridden: {forced.reasoning}")
    veto = None
    if proposed.action not in ACTIONS and proposed.action not in ctx.integrations:
        veto = f"LLM proposed '{proposed.action}', which is not available"
    elif offered is not None and proposed.action not in offered:
        veto = f"LLM proposed '{proposed.action}', which was not offered for this message"
    elif proposed.action == "search_kb" and (state.get("search_count", 0) >= ctx.max_searches
                                             or not _untried_variants(state)):
        veto = "LLM asked to search again, but the search budget is spent"
    elif proposed.action == "clarify" and state.get("clarify_streak", 0) >= MAX_CLARIFY_STREAK:
        veto = "LLM asked another clarifying question, but two were already asked"
    elif proposed.action == "check_status" and state.get("status_checked"):
        veto = "LLM asked to check the status page again in the same turn"
    elif proposed.action == "troubleshoot" and (not is_confident(state, ctx)
                                                or len(walkthrough_steps(state, ctx)) < 2):
        veto = "LLM chose troubleshooting, but the knowledge base has no steps for this"
    elif (proposed.action == "answer" and fallback.action == "troubleshoot"):
        veto = "troubleshooting intent and documented steps: guide step by step instead of answering at once"
    if veto:
        return Decision(fallback.action, f"{veto}; policy: {fallback.reasoning}")
    return proposed


_JSON_OBJECT = re.compile(r"\{.*\}", re.S)


def parse_decision(reply: str) -> Decision:
    """Read {"action": …, "reasoning": …} from an LLM reply; raise LLMError when there is none."""
    match = _JSON_OBJECT.search(reply)
    if not match:
        raise LLMError("decision reply had no JSON object")
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise LLMError(f"decision reply was not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise LLMError("decision reply was not a JSON object")
    action = str(data.get("action", "")).strip().lower()
    if not action:
        raise LLMError("decision reply named no action")
    return Decision(action, str(data.get("reasoning") or data.get("thinking") or "").strip(), "llm")


def _doc_summaries(state: SupportState) -> str:
    chunks = state.get("retrieved_chunks", [])
    if not chunks:
        return "(none found)"
    return "\n".join(f"- {c['title']} > {c['section'] or 'overview'} (score {c['score']:.2f})" for c in chunks)


def _situation(state: SupportState) -> str:
    lines = []
    flow = state.get("troubleshooting")
    if flow:
        lines.append(f"Troubleshooting '{flow['issue']}': step {flow['current'] + 1} of {len(flow['steps'])}, "
                     f"{flow['failed']} failed, status {flow['status']}")
    if state.get("ticket_offer"):
        lines.append("A ticket draft was offered and awaits the user's answer")
    if state.get("ticket"):
        lines.append(f"Ticket {state['ticket']['id']} exists in this conversation ({state['ticket']['status']})")
    if state.get("status_checked"):
        incidents = state.get("incidents", [])
        lines.append(f"Status page checked: {len(incidents)} relevant incident(s)" if state.get("status_ok")
                     else "Status page could not be checked")
    return "\n".join(lines) or "(nothing in progress)"


def _ask_llm(state: SupportState, ctx: SupportContext, offered: Sequence[str] = ACTIONS) -> Decision:
    catalogue = ctx.actions or BUILTIN_CATALOGUE
    prompt = prompts.render(
        "decide",
        user_query=state["query"],
        intent=state.get("intent", "informative"),
        user_os=state.get("user_os") or "unknown",
        search_count=state.get("search_count", 0),
        max_searches=ctx.max_searches,
        doc_summaries=_doc_summaries(state),
        situation=_situation(state),
        actions=catalogue.describe(offered),  # only the offered actions (nodes/actions.py)
        rules=catalogue.rules(offered),
    )
    reply = ctx.llm.complete([ChatMessage("system", prompts.render("system")), ChatMessage("user", prompt)],
                             max_tokens=300)
    return parse_decision(reply)


def decide(state: SupportState, runtime: Runtime[SupportContext]) -> dict:
    ctx = runtime.context
    update: dict = {}
    forced = forced_decision(state, ctx) or dialogue_decision(state, ctx)
    if forced or ctx.llm is None or state.get("fallback_notice"):
        decision = forced or policy_decision(state, ctx)
    else:
        update.update(offer_actions(state, ctx))  # {} without a catalogue (every action), or when kept from earlier
        offered = update.get("offered_actions") or state.get("offered_actions") or list(ACTIONS)
        try:
            decision = enforce_policy(_ask_llm(state, ctx, offered), state, ctx, offered)
        except LLMError as exc:
            log.warning("decision LLM failed, using the policy: %s", exc)
            decision = policy_decision(state, ctx)
            decision = Decision(decision.action, f"LLM unavailable ({exc}); policy: {decision.reasoning}")
            update["fallback_notice"] = LLM_FALLBACK_NOTICE
    flow = state.get("troubleshooting")
    closing = decision.action == "converse" and state.get("dialogue_act") in CLOSING_ACTS  # converse ends it
    if flow and flow["status"] == "in_progress" and decision.action != "troubleshoot" and not closing:
        update["troubleshooting"] = {**flow, "status": "paused"}  # a topic switch: keep it to resume later
    if decision.action in ctx.integrations:  # a configured lookup: one node carries out every integration
        update["integration"] = decision.action
        decision = Decision("use_integration", decision.reasoning, decision.decided_by)
    if decision.action == "converse" and not state.get("dialogue_act") and not state.get("language"):
        update["dialogue_act"] = "out_of_scope"  # the policy found it is not an IT question: converse says so
    update.update(action=decision.action, decision_reasoning=decision.reasoning, decided_by=decision.decided_by)
    return update
