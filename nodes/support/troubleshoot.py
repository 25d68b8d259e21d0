"""troubleshoot: guide the user one step at a time, across turns, and read each reply.

Steps come from the retrieved documentation (the numbered steps of the best passage offline;
LLM-written from the same passages when one is configured), in the order the docs give them
(simplest first). Each reply advances, closes, exits or escalates the workflow; escalation hands
over to the ticket node.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from core.document_screen import unsafe_instructions
from core.errors import LLMError
from core.filters import AUDIENCE_FIELD, may_read
from core.lexicon import OS_LABELS, content_words, it_topics
from core.ports import ChatMessage
from core.readers import is_admin
from core.records import RetrievedChunk, Source, Troubleshooting, TroubleshootingStep
from nodes.support.article_answer import (
    ABOUT_QUOTED,
    ALSO_FOR_IT_TEAM,
    RETIRED,
    ArticleReading,
    compose_reply,
    composed_context,
    found_articles,
    is_confident,
    read_target,
    target_for_os,
)
from nodes.support.compose import CONTENT_ROLES, are_ways, named_label, render, steps_for, target_steps
from nodes.support.extractive import label, numbered_steps, same_section_run, to_source
from nodes.support.procedure import asks_all_steps, asks_to_advance, is_fix_attempt, safe_end
from nodes.support.replies import LLM_FALLBACK_NOTICE
from nodes.support.retrieve import caller_groups, confident_chunks
from nodes.support.ticket_ops import TRIED_BEFORE_KEY, close_session_ticket
from nodes.support.tried_fixes import done_by, steps_tried, tried_fixes
from nodes.support.updates import split_update

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

log = logging.getLogger(__name__)
FOR_IT_TEAM_KEY = "for_it_team"  # in a walkthrough's source: the article's parts for the IT team (named, not walked)
ON_QUOTED_KEY = "on_quoted"  # in a walkthrough's source: what the section says of the message the employee quoted
RETIRED_KEY = "retired"  # in a walkthrough's source: the article's notice that its subject is retired
LIST_KEY = "lists"  # in a walkthrough's source: the label of the list walked (one per device or browser), the others
OTHER_LISTS_KEY = "other_lists"  # in a walkthrough's source: the other lists' steps, by label ("I'm on Firefox")
WALKED_KEY = "walked_lists"  # in a walkthrough's source: the lists walked before the one walked now
# A bound, not a cap that cuts: a procedure longer than this (rare) stops at a safe step, the rest in the article.
MAX_STEPS = 40
# a fix this short is shown whole, then "did that fix it?": walked one step at a time, its first step is most often
# only the way to a setting ("Go to Preferences"), and each step would cost the employee a reply
SHOWN_WHOLE_STEPS = 2
MAX_STEP_CHARS = 400
REPLY_HINT = (
    'Did that fix it? Reply "it works", "still broken", "next" when you\'ve done it, "all steps" to see them all, '
    'or "stop".'
)
SETUP_HINT = 'Reply "next" when you\'ve done it, "all steps" to see them all, or "stop".'


def steps_source(chunks: list[RetrievedChunk], user_os: str | None = None) -> tuple[list[str], RetrievedChunk | None]:
    """The numbered steps of the best step-bearing passage (its section's continuation included).

    With the user's OS unknown, steps written for one OS are skipped: "after a change on Linux" is no
    first step for someone on a Mac. (Retrieval already dropped other-OS chunks when the OS is known.)
    """
    usable = [c for c in chunks if (user_os or not c["os"]) and not is_admin(c)]
    for chunk in usable[:3]:
        steps = [s for c in same_section_run(chunk, chunks) for s in numbered_steps(c["text"])]
        if len(steps) >= 2:
            return steps[: safe_end(steps, MAX_STEPS)], chunk
    return [], None


def candidate_steps(chunks: list[RetrievedChunk], user_os: str | None = None) -> list[str]:
    return steps_source(chunks, user_os)[0]


def walkthrough(
    state: SupportState, ctx: SupportContext, groups: frozenset[str] = frozenset()
) -> tuple[list[str], RetrievedChunk | None, str]:
    """The steps to walk through, the chunk they are cited from, and a "This matches: …" line: the resolution
    (or procedure) of the best article from its first step, each step with the code or list under it; the
    numbered steps of the best passage when no article can be read whole."""
    reading = read_target(state, ctx, groups=groups) if is_confident(state, ctx) else None
    if reading is not None and reading.target.admin_only:
        return [], None, ""  # steps for the IT team are no walkthrough for the employee
    message, user_os = state["turn"]["query"], state.get("user_os")
    if reading is not None and (whole := _whole_procedure(reading, message, user_os)) is not None:
        return whole
    steps, chunk = steps_source(confident_chunks(state, ctx.min_score), state.get("user_os"))
    if chunk is not None and (reading is None or chunk["doc_id"] != reading.article["doc_id"]):
        if reading is not None and all(s.role in CONTENT_ROLES for s in reading.target.sections):
            # the best article answers in its own words (a manual's plain section, no steps): that is the answer,
            # not another article's steps that merely share words with the problem
            return [], None, ""
        # the steps are in another article than the best one: its procedure whole, not the passage found
        ref = next((a for a in found_articles(state, ctx) if a["doc_id"] == chunk["doc_id"]), None)
        other = read_target(state, ctx, ref, groups=groups) if ref is not None else None
        whole = _whole_procedure(other, message, user_os) if other is not None and not other.target.admin_only else None
        if whole is not None and other is not None and chunk["section"] in {s.name for s in other.target.sections}:
            return whole
    return [s for s in steps if not unsafe_instructions(s)], chunk, ""


def _whole_procedure(
    reading: ArticleReading, message: str, user_os: str | None
) -> tuple[list[str], RetrievedChunk, str] | None:
    """The steps of the part of an article that answers, with its citation and "This matches" line; None when it
    has fewer than two steps. Steps that ask for credentials or to turn security off are never walked through.
    A section with one list per platform, device or browser gives the list the message names ("in Chrome", "on
    my phone"), the others named in the introduction."""
    chosen, list_label, other_lists = steps_for(reading.target, message, user_os)
    if not list_label and reading.other_os:
        # the part for one OS of a page with a part per OS ("Install > macOS", "Install > Windows"), the employee's
        # OS unknown: walked as that OS's list, the others named and kept to switch to ("I'm on Windows")
        walked_os = {c["os"] for s in reading.target.sections for c in s.chunks if c["os"]}
        others = {OS_LABELS[o]: steps_for(target_for_os(reading, o, message), message, o)[0] for o in reading.other_os}
        if len(walked_os) == 1 and any(others.values()):
            list_label = OS_LABELS[walked_os.pop()]
            other_lists = {name: walked for name, walked in others.items() if walked}
    steps = [s for s in chosen if not unsafe_instructions(s)]
    if len(steps) < 2:
        return None
    anchor = dict(reading.target.anchor or reading.target.sections[0].chunks[0])
    anchor["section"] = reading.target.sections[0].name
    if list_label:  # the list for the employee's device or browser: the others are named, and kept to switch to
        anchor[LIST_KEY] = [list_label, *other_lists]
        anchor[OTHER_LISTS_KEY] = {
            label: [s for s in walked if not unsafe_instructions(s)][:MAX_STEPS]
            for label, walked in other_lists.items()
        }
    if reading.target.for_it_team:  # the article's admin-only parts: named to the employee, put in a ticket
        anchor[FOR_IT_TEAM_KEY] = list(reading.target.for_it_team)
    if reading.target.on_quoted:  # a note on their exact message, which no step would show them
        anchor[ON_QUOTED_KEY] = reading.target.on_quoted
    if reading.target.retired:  # what the steps are for is retired: said before the first step
        anchor[RETIRED_KEY] = reading.target.retired
    return steps[: safe_end(steps, MAX_STEPS)], anchor, reading.target.matches  # type: ignore[return-value]


def walkthrough_steps(state: SupportState, ctx: SupportContext, groups: frozenset[str] = frozenset()) -> list[str]:
    return walkthrough(state, ctx, groups)[0]


def too_long_to_answer_whole(state: SupportState, ctx: SupportContext, groups: frozenset[str] = frozenset()) -> bool:
    """The procedure that answers is longer than one answer shows: guided step by step instead, so that every
    step stays reachable ("next", or "all steps") rather than the answer stopping part-way."""
    reading = read_target(state, ctx, groups=groups) if is_confident(state, ctx) else None
    if reading is None or reading.target.admin_only or len(target_steps(reading.target)) < 2:
        return False
    return render(reading.target)[1]


def workflow_reply(state: SupportState) -> str:
    """The reply read in the context of a step: resolved, failed, exit, resume or ask (unclear)."""
    kind = state["turn"].get("reply_kind", "")
    return {
        "resolved": "resolved",
        "affirm": "resolved",
        "failed": "failed",
        "deny": "failed",
        "exit": "exit",
        "resume": "resume",
    }.get(kind, "ask")


def _llm_steps(state: SupportState, ctx: SupportContext, chunks: list[RetrievedChunk]) -> list[str]:
    from nodes.support.answer import format_sources

    prompt = prompts.render(
        "troubleshoot",
        sources=format_sources(chunks[:3]),
        issue=state["turn"]["query"],
        user_os=OS_LABELS.get(state.get("user_os") or "", "unknown"),
    )
    if ctx.llm is None:
        raise LLMError("no LLM is configured")
    reply = ctx.llm.complete(
        [ChatMessage("system", prompts.render("system")), ChatMessage("user", prompt)], max_tokens=1500
    )
    match = re.search(r"\{.*\}", reply, re.S)
    try:
        steps = json.loads(match.group(0))["steps"] if match else None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise LLMError(f"troubleshooting steps were not valid JSON: {exc}") from exc
    if (
        not isinstance(steps, list)
        or not 2 <= len(steps) <= MAX_STEPS
        or not all(isinstance(s, str) and 0 < len(s.strip()) <= MAX_STEP_CHARS for s in steps)
    ):
        raise LLMError(f"troubleshooting steps must be a list of 2-{MAX_STEPS} short strings")
    return [re.sub(r"^\s*(step\s*)?\d+[.):]\s*", "", s.strip(), flags=re.I) for s in steps]


def _step_text(flow: Troubleshooting) -> str:
    index = flow["current"]
    step = flow["steps"][index]["step"]
    hint = REPLY_HINT if is_fix_attempt(step) or index + 1 == len(flow["steps"]) else SETUP_HINT
    return f"**Step {index + 1} of {len(flow['steps'])}:** {step}\n\n{hint}"


def _numbered(flow: Troubleshooting) -> list[str]:
    """Every step in order, numbered, with what sits under it."""
    lines = []
    for n, step in enumerate(flow["steps"], start=1):
        first, _, rest = step["step"].partition("\n")
        lines.append(f"{n}. {first}")
        lines += [line for line in rest.splitlines()]
    return lines


WHOLE_HINT = 'When you\'ve done them, did that fix it? Reply "it works" or "still broken".'


def _all_steps_text(flow: Troubleshooting) -> str:
    """The whole procedure at once, every step in order with what sits under it (and the section's other lists,
    named)."""
    others = [str(name) for name in (flow.get("source") or {}).get(LIST_KEY) or []][1:]
    if are_ways(others):  # a way already tried is no way to go on to
        others = _ways_left(flow)
    lines = [f"Here are all {len(flow['steps'])} steps:", "", *_numbered(flow), "", WHOLE_HINT]
    return "\n".join(lines + (["", _others_note(others)] if others else []))


def _progress(flow: Troubleshooting) -> dict:
    return {"troubleshooting": flow}


def start(state: SupportState, ctx: SupportContext, groups: frozenset[str] = frozenset()) -> dict:
    chunks = confident_chunks(state, ctx.min_score) or list(state["turn"].get("retrieved_chunks", []))
    steps, source_chunk, matches = walkthrough(state, ctx, groups)
    update: dict = {}
    if ctx.llm is not None and not state["turn"].get("fallback_notice"):
        try:
            written = _llm_steps(state, ctx, composed_context(state, ctx, chunks, groups=groups))
            if len(written) < len(steps):  # the procedure is delivered whole: a model that drops steps is not used
                log.warning(
                    "troubleshooting LLM gave %d of %d documented steps; using the documented ones",
                    len(written),
                    len(steps),
                )
            else:
                steps = written
        except LLMError as exc:
            log.warning("troubleshooting LLM failed, using the documented steps: %s", exc)
            update["fallback_notice"] = LLM_FALLBACK_NOTICE
    source_chunk = source_chunk or chunks[0]
    for_it_team = [
        str(name) for name in cast(list, dict(source_chunk).get(FOR_IT_TEAM_KEY) or [])
    ]  # admin sections, for IT
    flow = Troubleshooting(
        issue=state["turn"]["query"],
        topic=", ".join(it_topics(state["turn"]["query"]) or content_words(state["turn"]["query"])[:3]),
        steps=[{"step": s, "outcome": "pending"} for s in steps],
        current=0,
        failed=0,
        asked_outcome=False,
        status="in_progress",
        os=state.get("user_os") or "",
        source={
            "title": source_chunk["title"],
            "source": source_chunk["source"],
            "chunk_id": source_chunk["chunk_id"],
            **({AUDIENCE_FIELD: list(source_chunk[AUDIENCE_FIELD])} if source_chunk.get(AUDIENCE_FIELD) else {}),
            **({FOR_IT_TEAM_KEY: for_it_team} if for_it_team else {}),
            **({OTHER_LISTS_KEY: other} if (other := dict(source_chunk).get(OTHER_LISTS_KEY)) else {}),
            **({LIST_KEY: walked_lists} if (walked_lists := dict(source_chunk).get(LIST_KEY)) else {}),
        },
    )
    lists = [str(name) for name in cast(list, dict(source_chunk).get(LIST_KEY) or [])]
    os_note = f" for {OS_LABELS[flow['os']]}" if flow["os"] else ""
    os_note = f" for **{lists[0]}**" if lists else os_note
    whole = len(steps) <= SHOWN_WHOLE_STEPS
    # the first steps do what the employee says they already tried ("I already restarted"): start after them
    said_tried = tried_fixes(state["turn"]["query"])
    skipped = 0 if whole or not said_tried else steps_tried(said_tried, steps)
    if 0 < skipped < len(steps):
        flow["steps"] = [s | {"outcome": "failed"} if i < skipped else s for i, s in enumerate(flow["steps"])]
        flow["current"] = skipped
    else:
        skipped = 0
    if whole:  # the flow goes on from its last step: "it works" resolves it, "still broken" offers a ticket
        flow.update({"steps": _shown_whole(flow), "current": len(steps) - 1})
        if quoted := _quoted_whole(state, ctx, groups, steps):
            return update | _progress(flow) | {"answer": quoted[0], "sources": quoted[1], "needs_input": True}
    shown = f"Here are the {len(steps)} steps" if whole else f"I'll take you through {len(steps)} steps"
    lead = AFTER_ANSWER if _answered_before(state, source_chunk) else "Let's work through this together."
    intro = f"{lead} {shown}{os_note} from **{label(source_chunk)}** [1], in the order it gives them."
    if skipped:
        intro += " " + ALREADY_TRIED.format(fixes=" and ".join(done_by(said_tried, steps[:skipped])), n=skipped + 1)
    if lists[1:]:
        intro += " " + _others_note(lists[1:])
    if on_quoted := str(dict(source_chunk).get(ON_QUOTED_KEY) or ""):
        intro = f"{ABOUT_QUOTED.format(passage=on_quoted)}\n\n{intro}"
    if retired := str(dict(source_chunk).get(RETIRED_KEY) or ""):
        intro = f"{RETIRED.format(notice=retired)}\n\n{intro}"
    if matches:
        intro = f"This matches: {matches}\n\n{intro}"
    if for_it_team:
        names = ", ".join(f"**{name.split(' > ')[-1]}**" for name in for_it_team[:4])
        intro += " " + ALSO_FOR_IT_TEAM.format(names=names)
    body = "\n".join([*_numbered(flow), "", WHOLE_HINT]) if whole else _step_text(flow)
    text = f"{intro}\n\n{body}\n\nSources:\n[1] {label(source_chunk)} — {source_chunk['source']}"
    return update | _progress(flow) | {"answer": text, "sources": [to_source(1, source_chunk)], "needs_input": True}


AFTER_ANSWER = (
    "I'm sorry those steps didn't fix it. Let's go through them one at a time to find where it goes wrong, or say "
    "\"open a ticket\" and I'll pass it to the IT service desk with what you've tried."
)


def _answered_before(state: SupportState, source: Mapping[str, Any]) -> bool:
    """The employee says it still fails, and deskmate last answered from these very steps (the same section)."""
    active = state.get("active_article") or {}
    return (
        workflow_reply(state) == "failed"
        and bool(active.get("doc_id"))
        and (active.get("doc_id"), active.get("section")) == (source.get("doc_id"), source.get("section"))
    )


def _quoted_whole(
    state: SupportState, ctx: SupportContext, groups: frozenset[str], steps: list[str]
) -> tuple[str, list[Source]] | None:
    """A short fix as a whole answer quotes it (what the section says around its steps: "the default is …", why it
    happens), then asks whether it worked; None when the documented steps are not that section's, or an LLM may have
    written them."""
    if ctx.llm is not None or not is_confident(state, ctx):
        return None
    reading = read_target(state, ctx, groups=groups)
    if reading is None or len(target_steps(reading.target)) != len(steps) or render(reading.target)[1]:
        return None
    return compose_reply(state, ctx, reading, closing=WHOLE_HINT)


def _others_note(others: list[str]) -> str:
    """What the introduction says of the section's other lists: ways to try next, or other devices' steps."""
    if not are_ways(others):
        return OTHER_LISTS.format(names=", ".join(others))
    names = ", ".join(f"**{name}**" for name in others[:4])
    return (OTHER_WAY if len(others) == 1 else OTHER_WAYS).format(names=names)


def _ways_left(flow: Troubleshooting) -> list[str]:
    """The section's other lists not walked yet, in the article's order."""
    source = flow.get("source") or {}
    walked = {*source.get(WALKED_KEY, []), *(source.get(LIST_KEY) or [])[:1]}
    return [str(name) for name in source.get(OTHER_LISTS_KEY) or {} if name not in walked]


def _next_way(flow: Troubleshooting) -> str:
    """The next of the section's ways to the same end not walked yet ("" for none, or when the lists are one per
    device or browser: another device's steps are no next thing to try)."""
    lists = [str(name) for name in (flow.get("source") or {}).get(LIST_KEY) or []]
    return next(iter(_ways_left(flow)), "") if len(lists) > 1 and are_ways(lists) else ""


def _on_to_next_way(flow: Troubleshooting, way: str, lead: str) -> dict:
    """The walkthrough goes on with the section's next way after the last step of one that did not fix it."""
    left = (flow["source"].get(LIST_KEY) or [""])[0]
    tried = [
        {"step": f"{left}: {s['step']}", "outcome": s["outcome"]} for s in flow["steps"] if s["outcome"] != "pending"
    ]
    switched = _switch_list(flow, way)
    switched["source"] = switched["source"] | {TRIED_BEFORE_KEY: [*flow["source"].get(TRIED_BEFORE_KEY, []), *tried]}
    intro = NEXT_WAY.format(left=left, label=way, n=len(switched["steps"]))
    return _progress(switched) | {"answer": f"{lead}{intro}\n\n{_step_text(switched)}", "needs_input": True}


def _switch_list(flow: Troubleshooting, label: str) -> Troubleshooting:
    """The walkthrough started again on another of the section's lists (another browser or device, the next way):
    its steps from the first, the list left behind kept to switch back to."""
    source = dict(flow["source"])
    others = dict(source[OTHER_LISTS_KEY])
    walked = [step["step"] for step in flow["steps"]]
    steps = others.pop(label)
    left = (source.get(LIST_KEY) or [""])[0]
    if left:
        others[left] = walked
        source[WALKED_KEY] = [*source.get(WALKED_KEY, []), left]
    source.update({OTHER_LISTS_KEY: others, LIST_KEY: [label, *others]})
    switched = Troubleshooting(**flow)
    switched.update(
        {
            "steps": [TroubleshootingStep(step=s, outcome="pending") for s in steps],
            "current": 0,
            "failed": 0,
            "asked_outcome": False,
            "status": "in_progress",
            "source": source,
        }
    )
    return switched


def _shown_whole(flow: Troubleshooting) -> list[TroubleshootingStep]:
    """The steps once all are shown at once: every step before the last still pending is done (the outcome asked for
    is the whole list's)."""
    steps = [TroubleshootingStep(**s) for s in flow["steps"]]
    for step in steps[:-1]:
        if step["outcome"] == "pending":
            step["outcome"] = "done"
    return steps


def _mark(flow: Troubleshooting, outcome: str) -> list[TroubleshootingStep]:
    steps = [TroubleshootingStep(**s) for s in flow["steps"]]
    steps[flow["current"]]["outcome"] = outcome
    return steps


ALREADY_TRIED = "You've already tried {fixes}, so we'll start at step {n}."
OTHER_LISTS = "The article also has steps for {names}: open [1] to see them, or tell me which you use."
OTHER_WAY = "The article also has another way, {names}: if this one doesn't work for you, we'll go on to it."
OTHER_WAYS = "The article also has other ways ({names}): if this one doesn't work for you, we'll go on to the next."
NEXT_WAY = "That was the last step of **{left}**. The article has another way, **{label}** ({n} steps):"
SWITCHED = "Here are the {n} steps for **{label}** instead, from the same article."
COMPLETED = (
    'That was the last step. If the problem is still there, reply "still broken" and I\'ll offer to open a ticket; '
    "if it works now, you're all set."
)
LOST_ACCESS = (
    "I've stopped this walkthrough: its steps come from a document you no longer have access to. "
    'If you still need help, ask again or say "open a ticket".'
)


def advance(state: SupportState, ctx: SupportContext, config: RunnableConfig) -> dict:
    current = state["troubleshooting"]
    if current is None:
        raise ValueError("advance is routed to only while a troubleshooting flow is open")
    flow = Troubleshooting(**current)
    if not may_read(flow.get("source") or {}, caller_groups(config)):
        # the steps were read from a restricted document, and the caller has since left its audience
        flow.update({"status": "exited", "steps": [], "current": 0, "source": {}})  # nor kept in the session any longer
        return _progress(flow) | {"answer": LOST_ACCESS, "sources": [], "needs_input": False}
    text = state["turn"].get("query", "")
    if flow["status"] == "paused":  # "back to it": the step the employee was on, again
        flow["status"] = "in_progress"
        return _progress(flow) | {
            "answer": f"Back to your issue: {flow['issue']}\n\n{_step_text(flow)}",
            "needs_input": True,
        }
    others: dict = (flow.get("source") or {}).get(OTHER_LISTS_KEY) or {}
    if flow["status"] in ("in_progress", "completed") and (label := named_label(list(others), text)):
        # "I'm on Firefox, actually": the same section's list for that browser or device, from its first step
        switched = _switch_list(flow, label)
        intro = SWITCHED.format(label=label, n=len(switched["steps"]))
        return _progress(switched) | {"answer": f"{intro}\n\n{_step_text(switched)}", "needs_input": True}
    if flow["status"] == "in_progress" and asks_all_steps(text):
        # all of them shown: the outcome asked for is the whole list's
        flow.update({"steps": _shown_whole(flow), "current": len(flow["steps"]) - 1, "asked_outcome": False})
        return _progress(flow) | {"answer": _all_steps_text(flow), "needs_input": True}
    last = flow["current"] + 1 >= len(flow["steps"])
    if flow["status"] == "in_progress" and (state["turn"].get("reply_kind") == "resume" or asks_to_advance(text)):
        # "next", "done", "ok": the step is done, not failed
        flow.update({"steps": _mark(flow, "done"), "asked_outcome": False})
        if last and (way := _next_way(flow)):
            return _on_to_next_way(flow, way, "")
        if last:
            flow["status"] = "completed"
            return _progress(flow) | {"answer": COMPLETED, "needs_input": False}
        flow["current"] += 1
        return _progress(flow) | {"answer": _step_text(flow), "needs_input": True}
    reply = workflow_reply(state)
    if flow["status"] == "completed" and reply not in ("resolved", "failed", "exit"):
        return _progress(flow) | {"answer": COMPLETED, "needs_input": False}
    if reply == "resolved":
        flow.update({"steps": _mark(flow, "resolved"), "status": "resolved"})
        closed = close_session_ticket(
            state,
            ctx,
            config,
            reason=f"Resolved by step {flow['current'] + 1}: {flow['steps'][flow['current']]['step']}",
        )
        text = "Great, I'm glad that fixed it!"
        if closed:
            text += f" I've closed ticket **{closed['ticket']['id']}** since it's working now."
        return _progress(flow) | closed | {"answer": text + " Anything else I can help with?", "needs_input": False}
    if reply == "exit":
        flow["status"] = "exited"
        return _progress(flow) | {
            "needs_input": False,
            "answer": (
                "OK, I've stopped the troubleshooting. If the problem comes back or you'd like a technician to look at "
                'it, just say "open a ticket".'
            ),
        }
    if reply == "ask" and not flow["asked_outcome"]:
        flow["asked_outcome"] = True
        return _progress(flow) | {"answer": f"Thanks. {REPLY_HINT}", "needs_input": True}
    # failed (or still unclear after asking once): only a real attempt at the fix counts toward escalation
    attempt = flow["status"] == "completed" or last or is_fix_attempt(flow["steps"][flow["current"]]["step"])
    flow.update(
        {
            "steps": _mark(flow, "failed" if attempt else "done"),
            "failed": flow["failed"] + attempt,
            "asked_outcome": False,
        }
    )
    if flow["status"] != "completed" and last and flow["failed"] < ctx.max_failed_steps and (way := _next_way(flow)):
        return _on_to_next_way(flow, way, "I'm sorry that didn't fix it. ")
    if flow["status"] == "completed" or last or flow["failed"] >= ctx.max_failed_steps:
        flow["status"] = "escalated"
        return _progress(flow) | {
            "needs_input": True,
            "answer": (
                f"I'm sorry, that didn't fix it either. We've tried {flow['failed']} of the documented fixes without "
                "success, so this needs a technician."
                if flow["failed"] > 1
                else "I'm sorry that didn't fix it. The documented steps didn't solve it, so this needs a technician."
            ),
        }
    flow["current"] += 1
    lead = "OK, let's try the next one." if attempt else "OK, on to the next step."
    return _progress(flow) | {"answer": f"{lead}\n\n{_step_text(flow)}", "needs_input": True}


def troubleshoot(state: SupportState, runtime: Runtime[SupportContext], config: RunnableConfig) -> dict:
    ctx = runtime.context
    flow = state.get("troubleshooting")
    update: dict = {"is_clarifying": False}
    if flow and continues_walkthrough(flow, state):
        return split_update(update | advance(state, ctx, config), SESSION_KEYS)
    return split_update(update | start(state, ctx, caller_groups(config)), SESSION_KEYS)


def continues_walkthrough(flow: Troubleshooting, state: SupportState) -> bool:
    """The message carries on the session's walkthrough: a reply to its step, "back to it" after a pause, or
    the outcome after its last step."""
    kind = state["turn"].get("reply_kind")
    return (
        flow["status"] == "in_progress"
        or (flow["status"] == "paused" and kind == "resume")
        or (flow["status"] == "completed" and (bool(kind) or asks_to_advance(state["turn"].get("query", ""))))
    )


SESSION_KEYS = ("troubleshooting", "ticket")  # what a walkthrough step changes of the session
