"""decide: choose the next action. The policy in code decides alone offline; with an LLM, the LLM
proposes and the same policy disposes (invalid, unavailable or unsafe choices are overridden).

Order of authority:
1. forced rules — replies to an open question (ticket offer, troubleshooting step), closings that end
   what is open, the turn limit — that no LLM may override;
2. the dialogue acts (nodes/support/dialogue_acts.py: a person, please; my ticket; something new; thanks; what are
   you …) and a message no one can translate: the policy decides these alone, no LLM is asked;
3. the LLM's proposal, when one is configured, kept only if it is one of the actions offered for this
   message (nodes/support/actions.py) and the policy allows it here and now;
4. the policy rules, top to bottom, the first that holds deciding.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from core.errors import LLMError
from core.lexicon import (
    about_speaker,
    asks_for_something_new,
    asks_status,
    asks_ticket_status,
    detect_os,
    is_question,
    is_troubleshooting,
    it_topics,
    looks_like_follow_up,
    wants_ticket,
)
from core.ports import ChatMessage
from nodes.support.actions import builtin_catalogue, builtin_names, offer_actions
from nodes.support.article_answer import found_articles, is_confident, points_into_article
from nodes.support.dialogue_acts import act_spec, normalise
from nodes.support.embed_query import is_follow_up, search_variants
from nodes.support.procedure import asks_all_steps
from nodes.support.replies import LLM_FALLBACK_NOTICE
from nodes.support.retrieve import caller_groups
from nodes.support.ticket_ops import offer_reply
from nodes.support.troubleshoot import (
    continues_walkthrough,
    too_long_to_answer_whole,
    walkthrough,
    walkthrough_steps,
    workflow_reply,
)
from nodes.support.updates import split_update

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

log = logging.getLogger(__name__)

MAX_CLARIFY_STREAK = 2  # never ask more than two clarifying questions in a row


@dataclass(frozen=True)
class Decision:
    action: str
    reasoning: str
    decided_by: str = "policy"


def _untried_variants(state: SupportState) -> list[str]:
    tried = set(state["turn"].get("tried_queries", []))
    return [v for v in search_variants(state) if v not in tried]


def is_topic_switch(state: SupportState) -> bool:
    """A message during troubleshooting that is about something else, not a reply to the step."""
    act = act_spec(state["turn"].get("dialogue_act", ""))
    if act is not None and act.outranks_replies:
        return True  # "stop wasting my time, get me a person" is no reply to the step
    text = state["turn"]["query"]
    if state["turn"].get("reply_kind") or asks_all_steps(text):
        return False
    flow: Mapping[str, Any] = state.get("troubleshooting") or {}
    if names_another_machine(text, flow.get("os") or ""):
        return True  # "I'm on linux", "and on my mac?": the same problem on that machine, not a reply to the step
    if (act is not None and act.switches) or wants_ticket(text) or asks_ticket_status(text) or asks_status(text):
        return True
    new_topics = set(it_topics(text)) - set((flow.get("topic") or "").split(", "))
    # a question, or a different problem ("also my printer won't print"); a plain report of what the
    # user saw ("I opened a website and it loaded") is a reply to the step, whatever words it uses
    return (is_question(text) and len(text.split()) > 3) or (bool(new_topics) and is_troubleshooting(text))


# a procedure that hands something over — reports, requests, submits or forwards it — is followed, not tried: there
# is nothing to ask "did that fix it?" about ("Report a suspicious message in Outlook")
_HANDS_OVER = re.compile(
    r"^\W*(?:how (?:to|do i) )?(?:report|request|submit|order|apply for|register|notify|forward|send)\w*\b", re.I
)


# a section on what to do now that something has happened ("If you clicked a link or entered your password",
# "If you've lost your badge") is a list of things to do, all of them, at once: no step of it is tried to see whether
# it fixed something
_AFTER_THE_FACT = re.compile(
    r"^\W*(?:what to do )?if (?:you|someone)(?:'ve| have)? (?:already |accidentally )?"
    r"(?:\w+ed|lost|sent|gave|got|wrote|left|took|ran|let|shared|made|forwarded)\b",
    re.I,
)


def is_fix_to_try(found: tuple[list[str], Mapping[str, Any] | None, str]) -> bool:
    """A walkthrough's steps (from `walkthrough`) are a fix to try one at a time: at least two of them, from a section
    that neither hands something over nor says what to do now that something has happened."""
    steps, anchor, _ = found
    heading = ((anchor or {}).get("section") or "").rsplit(" > ", 1)[-1]
    return len(steps) >= 2 and not _HANDS_OVER.search(heading) and not _AFTER_THE_FACT.search(heading)


def names_another_machine(text: str, current_os: str) -> bool:
    """A short follow-up that only names an operating system other than the one in use ("and on my mac?")."""
    stated = detect_os(text)
    return bool(stated) and stated != current_os and looks_like_follow_up(text, has_topic_words=False)


def _open_ticket(state: SupportState) -> bool:
    ticket = state.get("ticket")
    return bool(ticket and ticket.get("status") == "open")


def _closes_something(state: SupportState) -> bool:
    """A closing that ends what is open: thanks or goodbye end a step-by-step flow or a ticket offer, "it
    works now" ends an offer or the session's open ticket (during a flow, the flow itself takes "it works")."""
    act = state["turn"].get("dialogue_act")
    flow: Mapping[str, Any] = state.get("troubleshooting") or {}
    if act in ("thanks", "farewell"):
        return flow.get("status") == "in_progress" or bool(state.get("ticket_offer"))
    return (
        act == "resolved"
        and flow.get("status") != "in_progress"
        and (bool(state.get("ticket_offer")) or _open_ticket(state))
    )


def forced_decision(state: SupportState, ctx: SupportContext) -> Decision | None:
    """Rules no LLM may override: they answer a question deskmate itself asked, or enforce a bound."""
    if state.get("ticket_offer") and offer_reply(state):
        return Decision("create_ticket", f"the message answers the pending ticket offer ({offer_reply(state)})")
    if _closes_something(state):
        return Decision("converse", f"a closing ({state['turn']['dialogue_act']}): end what is open and say goodbye")
    flow = state.get("troubleshooting")
    if flow and flow["status"] == "in_progress" and not is_topic_switch(state):
        return Decision(
            "troubleshoot", f"reply to troubleshooting step {flow['current'] + 1}: {workflow_reply(state) or 'unclear'}"
        )
    if flow and flow["status"] == "paused" and state["turn"].get("reply_kind") == "resume":
        return Decision("troubleshoot", "the user asked to resume the paused troubleshooting")
    if flow and flow["status"] == "completed" and continues_walkthrough(flow, state):
        return Decision("troubleshoot", f"a reply after the last step: {workflow_reply(state)}")
    if (
        state.get("turn_count", 0) >= ctx.max_turns
        and not state.get("ticket")
        and not state.get("ticket_offer")
        and ctx.tickets is not None
    ):
        return Decision("create_ticket", f"{ctx.max_turns} turns without a resolution: offer a ticket")
    return None


def policy_decides(state: SupportState, ctx: SupportContext | None) -> bool:
    """A configured answer policy or a response mode asked for this turn owns what happens when the knowledge
    base has nothing: its rules (a "not found" rule, general help from an LLM, RAG_ONLY's refusal) answer, not
    the built-in "this is the IT help desk" reply."""
    return ctx is not None and (
        (ctx.policy is not None and ctx.policy.configured) or bool(state["turn"].get("response_mode"))
    )


def dialogue_decision(state: SupportState, ctx: SupportContext | None = None) -> Decision | None:
    """What the message does decides, before any search result: a fixed reply, a person, a ticket lookup or a
    request; and a message in a language no LLM translated gets the notice in that language. A message that
    only sounds off-topic ("weather", "movie mode", "my TV") was searched first: when the knowledge base answers
    it (a TV manual, a weather app's guide), the knowledge base wins."""
    act, text = state["turn"].get("dialogue_act", ""), state["turn"]["query"]
    spec = act_spec(act)  # the act's registry row (nodes/support/dialogue_acts.py) says who answers it
    if state["turn"].get("language") and not state["turn"].get("translated"):
        if ctx is not None and ctx.tickets is not None and not (spec and spec.small_talk):
            return Decision(
                "create_ticket",
                f"the message is in '{state['turn']['language']}' and was not translated: say, in that language, "
                "that only English documents are searched, and offer to pass it to the service desk as a ticket",
            )
        return Decision(
            "converse",
            f"the message is in '{state['turn']['language']}' and was not translated: say, in "
            "that language, that only English documents are searched",
        )
    if spec and spec.searched_first and ctx is not None and (is_confident(state, ctx) or policy_decides(state, ctx)):
        return None
    if spec and spec.handled_by == "converse":
        return Decision("converse", spec.decision_reason())
    if asks_ticket_status(text):  # "any news on INC0012345?" whatever else the message also does
        return Decision("search_tickets", "the user asks about their tickets")
    if spec:
        return Decision(spec.handled_by, spec.decision_reason())
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
    if asks_for_something_new(state["turn"]["query"]) or state["turn"].get("intent") == "troubleshooting":
        return None  # a request, or a problem to fix: the ticket and troubleshooting rules handle those
    try:
        scores = ctx.actions.scores(state["turn"]["query"], state["turn"].get("query_embedding") or None, ctx.embedder)
    except Exception as exc:  # the embedder failed: the other rules still answer
        log.warning("integration choice skipped: %s", exc)
        return None
    best = max(scores, key=lambda name: scores[name])
    if (
        best in ctx.integrations
        and scores[best] >= ctx.integration_min_score
        and (not ctx.integrations[best].needs_user or about_speaker(state["turn"]["query"]))
    ):
        return Decision(best, f"the message matches the {best} lookup's examples (similarity {scores[best]:.2f})")
    return None


def policy_decision(state: SupportState, ctx: SupportContext, groups: frozenset[str] = frozenset()) -> Decision:
    """The rules, in order. Readable top to bottom; the first that holds decides (`groups`: the caller's, which
    decide which documented steps there are to walk through)."""
    forced = forced_decision(state, ctx) or dialogue_decision(state, ctx)
    if forced:
        return forced
    text = state["turn"]["query"]
    lookup = integration_choice(state, ctx)
    if lookup:
        return lookup
    # "and on my mac?" after a problem's walkthrough is the same problem, on that machine
    troubleshooting = state["turn"].get("intent") == "troubleshooting" or (
        is_follow_up(state) and is_troubleshooting(state.get("active_topic") or "")
    )
    if not state["turn"].get("status_checked") and (asks_status(text) or (troubleshooting and ctx.status is not None)):
        return Decision("check_status", "an outage question, or a problem that a known incident may explain")
    if state["turn"].get("incidents") and (troubleshooting or asks_status(text)):
        return Decision(
            "answer", f"{len(state['turn']['incidents'])} known incident(s) match the message: tell the user"
        )
    if asks_status(text):
        return Decision("answer", "status question: report the status page")
    if (
        state["turn"].get("is_vague")
        and not is_follow_up(state)
        and state.get("clarify_streak", 0) < MAX_CLARIFY_STREAK
    ):
        return Decision("clarify", "the message names no system or symptom to search for")
    active = state.get("active_article")
    if active and points_into_article(state):
        return Decision("answer", f"a follow-up about a step or method of '{active['title']}'")
    if is_confident(state, ctx):
        best = found_articles(state, ctx)[0]
        evidence = (
            f"'{best['title']}' answers it with probability {best['answerable']:.2f} (threshold "
            f"{ctx.confidence_threshold():.2f}), confidence {best['confidence']:.2f}"
        )
        if troubleshooting and is_fix_to_try(walkthrough(state, ctx, groups)):
            return Decision("troubleshoot", f"a problem, and the knowledge base has steps for it: {evidence}")
        if too_long_to_answer_whole(state, ctx, groups) and len(walkthrough_steps(state, ctx, groups)) >= 2:
            return Decision(
                "troubleshoot",
                f"a procedure longer than one answer shows: step by step, every step reachable: {evidence}",
            )
        return Decision("answer", f"the knowledge base answers this: {evidence}")
    searches = state["turn"].get("search_count", 0)
    if searches < ctx.max_searches and _untried_variants(state):
        return Decision(
            "search_kb",
            f"no confident answer after {searches} search(es) (confidence "
            f"{state['turn'].get('confidence') or 0:.2f}); trying another wording",
        )
    about_it = troubleshooting or bool(it_topics(text)) or is_follow_up(state)
    if not about_it and ctx.llm is None and not state["turn"].get("is_vague") and not policy_decides(state, ctx):
        # nothing in the knowledge base, and nothing in the message about IT ("how many vacation days do I have
        # left?"): say what the help desk does rather than "rephrase it with the name of the app"
        return Decision(
            "converse",
            f"no answer in the knowledge base after {searches} search(es), and the message "
            "names no IT system or problem: say what the help desk does",
        )
    if about_it and ctx.tickets is not None and not state["turn"].get("is_vague") and not policy_decides(state, ctx):
        return Decision(
            "create_ticket",
            f"no answer in the knowledge base after {searches} search(es) (confidence "
            f"{state['turn'].get('confidence') or 0:.2f}): offer a ticket",
        )
    return Decision(
        "answer",
        f"no confident answer after {searches} search(es) (confidence "
        f"{state['turn'].get('confidence') or 0:.2f}); answer honestly that the knowledge base does not "
        "cover it",
    )


def enforce_policy(
    proposed: Decision,
    state: SupportState,
    ctx: SupportContext,
    offered: Sequence[str] | None = None,
    groups: frozenset[str] = frozenset(),
) -> Decision:
    """Code disposes: keep the LLM's choice only when the policy allows it here and now (and, when the LLM
    was offered a subset of the actions, only when it chose one of them)."""
    fallback = policy_decision(state, ctx, groups)
    forced = forced_decision(state, ctx)
    if forced:
        return (
            forced
            if proposed.action == forced.action
            else Decision(forced.action, f"LLM proposed '{proposed.action}', overridden: {forced.reasoning}")
        )
    veto = None
    if proposed.action not in builtin_names() and proposed.action not in ctx.integrations:
        veto = f"LLM proposed '{proposed.action}', which is not available"
    elif offered is not None and proposed.action not in offered:
        veto = f"LLM proposed '{proposed.action}', which was not offered for this message"
    elif proposed.action == "search_kb" and (
        state["turn"].get("search_count", 0) >= ctx.max_searches or not _untried_variants(state)
    ):
        veto = "LLM asked to search again, but the search budget is spent"
    elif proposed.action == "clarify" and state.get("clarify_streak", 0) >= MAX_CLARIFY_STREAK:
        veto = "LLM asked another clarifying question, but two were already asked"
    elif proposed.action == "check_status" and state["turn"].get("status_checked"):
        veto = "LLM asked to check the status page again in the same turn"
    elif proposed.action == "troubleshoot" and (
        not is_confident(state, ctx) or len(walkthrough_steps(state, ctx, groups)) < 2
    ):
        veto = "LLM chose troubleshooting, but the knowledge base has no steps for this"
    elif proposed.action == "answer" and fallback.action == "troubleshoot":
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
    chunks = state["turn"].get("retrieved_chunks", [])
    if not chunks:
        return "(none found)"
    return "\n".join(f"- {c['title']} > {c['section'] or 'overview'} (score {c['score']:.2f})" for c in chunks)


def _situation(state: SupportState) -> str:
    lines = []
    flow = state.get("troubleshooting")
    if flow:
        lines.append(
            f"Troubleshooting '{flow['issue']}': step {flow['current'] + 1} of {len(flow['steps'])}, "
            f"{flow['failed']} failed, status {flow['status']}"
        )
    if state.get("ticket_offer"):
        lines.append("A ticket draft was offered and awaits the user's answer")
    ticket = state.get("ticket")
    if ticket:
        lines.append(f"Ticket {ticket['id']} exists in this conversation ({ticket['status']})")
    if state["turn"].get("status_checked"):
        incidents = state["turn"].get("incidents", [])
        lines.append(
            f"Status page checked: {len(incidents)} relevant incident(s)"
            if state["turn"].get("status_ok")
            else "Status page could not be checked"
        )
    return "\n".join(lines) or "(nothing in progress)"


def _ask_llm(state: SupportState, ctx: SupportContext, offered: Sequence[str] | None = None) -> Decision:
    catalogue = ctx.actions or builtin_catalogue()
    offered = builtin_names() if offered is None else offered
    prompt = prompts.render(
        "decide",
        user_query=state["turn"]["query"],
        intent=state["turn"].get("intent", "informative"),
        user_os=state.get("user_os") or "unknown",
        search_count=state["turn"].get("search_count", 0),
        max_searches=ctx.max_searches,
        doc_summaries=_doc_summaries(state),
        situation=_situation(state),
        actions=catalogue.describe(offered),  # only the offered actions (nodes/support/actions.py)
        rules=catalogue.rules(offered),
    )
    if ctx.llm is None:
        raise LLMError("no LLM is configured")
    reply = ctx.llm.complete(
        [ChatMessage("system", prompts.render("system")), ChatMessage("user", prompt)], max_tokens=300
    )
    return parse_decision(reply)


def decide(state: SupportState, runtime: Runtime[SupportContext], config: RunnableConfig) -> dict:
    ctx = runtime.context
    groups = caller_groups(config)
    update: dict = {}
    forced = forced_decision(state, ctx) or dialogue_decision(state, ctx)
    if forced or ctx.llm is None or state["turn"].get("fallback_notice"):
        decision = forced or policy_decision(state, ctx, groups)
    else:
        update.update(offer_actions(state, ctx))  # {} without a catalogue (every action), or when kept from earlier
        offered = update.get("offered_actions") or state["turn"].get("offered_actions") or list(builtin_names())
        try:
            decision = enforce_policy(_ask_llm(state, ctx, offered), state, ctx, offered, groups)
        except LLMError as exc:
            log.warning("decision LLM failed, using the policy: %s", exc)
            decision = policy_decision(state, ctx, groups)
            decision = Decision(decision.action, f"LLM unavailable ({exc}); policy: {decision.reasoning}")
            update["fallback_notice"] = LLM_FALLBACK_NOTICE
    flow = state.get("troubleshooting")
    act = act_spec(state["turn"].get("dialogue_act", ""))
    closing = decision.action == "converse" and act is not None and act.closes  # converse ends it
    continues = decision.action == "troubleshoot" and forced is not None  # a reply to the step, or "continue"
    if flow and flow["status"] == "in_progress" and not continues and not closing:
        # a topic switch: keep it to resume later (a new walkthrough — the same problem on another machine — starts
        # over instead of reading the message as a reply to this one's step)
        update["troubleshooting"] = {**flow, "status": "paused"}
    if decision.action in ctx.integrations:  # a configured lookup: one node carries out every integration
        update["integration"] = decision.action
        decision = Decision("use_integration", decision.reasoning, decision.decided_by)
    if decision.action == "converse" and not state["turn"].get("dialogue_act") and not state["turn"].get("language"):
        update["dialogue_act"] = "out_of_scope"  # the policy found it is not an IT question: converse says so
    update.update(action=decision.action, decision_reasoning=decision.reasoning, decided_by=decision.decided_by)
    return split_update(update, ("troubleshooting",))  # the rest is this turn's
