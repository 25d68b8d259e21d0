"""use_integration: answer from a configured lookup in another system (asset register, licence portal …).

The decision agent chose the integration (by the LLM, or offline by embedding similarity to its example
queries). This node calls it once for the caller, redacts what came back like any other text deskmate
keeps, and answers: with an LLM, in a sentence or three over the data (delimited, never instructions);
without one, or when the LLM fails, as the data's fields listed plainly. A lookup that is about the caller
(`${user}` in its url) is never made for an anonymous caller, and a failure is said honestly.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from core.errors import IntegrationUnavailable, LLMError
from core.injection import delimit_data
from core.ports import ChatMessage
from nodes.support.ticket_ops import ANONYMOUS, identity

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

log = logging.getLogger(__name__)

MAX_LINES = 20  # fields listed in a reply without an LLM
MAX_ITEMS = 5  # records of a list
MAX_DATA_CHARS = 4_000  # of the data given to the LLM
MAX_VALUE_CHARS = 200
LOOKUP_FALLBACK_NOTICE = (
    "The AI model could not be reached or gave no usable reply, so the looked-up data is listed as it came back."
)


def _label(key: str) -> str:
    text = str(key).replace("_", " ").replace("-", " ").strip()
    return text[:1].upper() + text[1:]


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "—"
    text = str(value).strip()
    return text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS] + "…"


def _lines(data: object, prefix: str = "") -> list[str]:
    """Flatten JSON into `label: value` lines (nested keys joined with ›), bounded."""
    if isinstance(data, dict):
        lines: list[str] = []
        for key, value in data.items():
            label = f"{prefix} › {_label(key)}" if prefix else _label(key)
            if isinstance(value, list) and not any(isinstance(v, (dict, list)) for v in value):
                lines.append(f"{label}: {', '.join(_scalar(v) for v in value[: MAX_ITEMS * 2]) or '—'}")
            elif isinstance(value, (dict, list)):
                lines.extend(_lines(value, label))
            else:
                lines.append(f"{label}: {_scalar(value)}")
        return lines
    if isinstance(data, list):
        lines = []
        for number, item in enumerate(data[:MAX_ITEMS], start=1):
            lines.extend(_lines(item, f"{prefix} {number}" if prefix else f"#{number}"))
        if len(data) > MAX_ITEMS:
            lines.append(f"…and {len(data) - MAX_ITEMS} more")
        return lines
    return [f"{prefix}: {_scalar(data)}" if prefix else _scalar(data)]


def render_data(data: object) -> str:
    """The lookup's result as a short Markdown list a person can read (no LLM needed)."""
    if data is None or data == {} or data == [] or data == "":
        return ""
    if isinstance(data, str):
        return data if len(data) <= 1_000 else data[:1_000] + "…"
    lines = _lines(data)
    more = f"\n- …and {len(lines) - MAX_LINES} more field(s)" if len(lines) > MAX_LINES else ""
    return "\n".join(f"- {line}" for line in lines[:MAX_LINES]) + more


def _as_text(data: object) -> str:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, indent=1, default=str)
    return text if len(text) <= MAX_DATA_CHARS else text[:MAX_DATA_CHARS] + "\n…(cut)"


def use_integration(state: SupportState, runtime: Runtime[SupportContext], config: RunnableConfig) -> dict:
    return {"turn": _looked_up(state, runtime.context, config)}


def _looked_up(state: SupportState, ctx: SupportContext, config: RunnableConfig) -> dict:
    """The reply of the lookup decide chose, and what calling it did."""
    name = state["turn"].get("integration") or ""
    integration = ctx.integrations.get(name)
    update: dict = {"needs_input": False, "is_clarifying": False, "sources": []}
    if integration is None:  # decide only routes here for a configured name; a config reload could race it
        return update | {
            "answer": "That lookup is not available any more; please ask the IT service desk.",
            "integration_call": {"name": name, "ok": False, "reason": "not configured"},
        }
    _, user_id = identity(config)
    if integration.needs_user and user_id == ANONYMOUS:
        return update | {
            "answer": f"I can look that up in {name} only for a signed-in employee, and I don't know who you are "
            "here. Open deskmate from the company portal (which signs you in), or ask the IT service desk.",
            "integration_call": {"name": name, "ok": False, "reason": "anonymous caller"},
        }
    started = time.monotonic()
    try:
        result = integration.fetch(user=user_id, query=state["turn"]["query"])
    except IntegrationUnavailable as exc:
        log.warning("integration %s failed: %s", name, exc.reason)
        return update | {
            "answer": f"I couldn't get an answer from {name} just now ({exc.reason}). Please try again in a few "
            'minutes, or say "open a ticket" and the service desk will look it up for you.',
            "integration_call": {
                "name": name,
                "ok": False,
                "reason": exc.reason,
                "elapsed_ms": round((time.monotonic() - started) * 1000, 1),
            },
        }
    call = {"name": name, "ok": True, "status": result.status, "elapsed_ms": result.elapsed_ms}
    plain = render_data(result.data)
    if not plain:
        return update | {"answer": f"{name} has nothing on record for this.", "integration_call": call}
    # what came back is kept (memory, trace) and may reach an LLM: redact it like anything else deskmate keeps,
    # as whole text, so a value under a secret-named key ("admin_password": …) is caught with its key
    plain = ctx.redactor.redact(plain).text
    heading = f"From **{name}** ({integration.description}):"
    if ctx.llm is None:
        return update | {"answer": f"{heading}\n\n{plain}", "integration_call": call}
    data_text = ctx.redactor.redact(_as_text(result.data)).text
    prompt = prompts.render(
        "integration_answer",
        question=state["turn"]["query"],
        integration=name,
        description=integration.description,
        data=delimit_data("data", data_text, source=name),
    )
    try:
        reply = ctx.llm.complete(
            [ChatMessage("system", prompts.render("system")), ChatMessage("user", prompt)],
            max_tokens=min(300, ctx.llm_max_tokens),
        ).strip()
        if not reply:
            raise LLMError("the model returned an empty reply")
    except LLMError as exc:
        log.warning("integration answer LLM failed, listing the data instead: %s", exc)
        return update | {
            "answer": f"{heading}\n\n{plain}",
            "integration_call": call,
            "fallback_notice": LOOKUP_FALLBACK_NOTICE,
        }
    return update | {"answer": f"{reply}\n\n*Looked up in {name}.*", "integration_call": call}
