"""redact: the first node. Secrets and personal data are replaced before any other node sees the text,
and a message that tries to override the assistant's instructions is flagged (not refused)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from langgraph.runtime import Runtime

from core.injection import injection_signals, neutralise_delimiters
from core.ports import PERSONAL_DATA_KINDS

if TYPE_CHECKING:
    from graphs.support import SupportContext, SupportState

log = logging.getLogger(__name__)

REDACTION_NOTICE = (
    "Your message contained sensitive information ({kinds}); it was removed before processing and is not stored."
)
CHANGE_SECRET_ADVICE = " Please change any password or key you shared."


def redaction_notice(kinds: list[str]) -> str | None:
    """What the user is told when something was removed; secrets also get the advice to rotate them."""
    if not kinds:
        return None
    notice = REDACTION_NOTICE.format(kinds=", ".join(k.lower().replace("_", " ") for k in kinds))
    if any(kind not in PERSONAL_DATA_KINDS for kind in kinds):
        notice += CHANGE_SECRET_ADVICE
    return notice


def redact(state: SupportState, runtime: Runtime[SupportContext]) -> dict:
    """Overwrite `query` with its redacted form; the raw text never leaves this node."""
    result = runtime.context.redactor.redact(state["turn"]["query"])
    # a typed "</source>" must not be able to close the data blocks the LLM prompts are built from
    query = neutralise_delimiters(result.text)
    signals = injection_signals(query)
    if signals:
        log.warning("possible prompt injection in the user's message: %s", ", ".join(signals))
    turn: dict = {
        "query": query,
        "redaction_notice": redaction_notice(result.kinds),
        "redacted_kinds": result.kinds,
        "injection_suspected": bool(signals),
        "injection_signals": signals,
    }
    directives = state["turn"].get("directives")
    if directives:
        # a system message's persona is kept in the turn record with the rest of the state: redacted like the message
        turn["directives"] = {
            key: runtime.context.redactor.redact(value).text if isinstance(value, str) else value
            for key, value in directives.items()
        }
    return {"turn": turn}
