"""redact: the first node. Secrets and personal data are replaced before any other node sees the text."""

from __future__ import annotations

from langgraph.runtime import Runtime

from graphs.context import SupportContext
from graphs.state import SupportState

REDACTION_NOTICE = (
    "Your message contained sensitive information ({kinds}); it was removed before processing "
    "and is not stored. Please change any password or key you shared."
)


def redact(state: SupportState, runtime: Runtime[SupportContext]) -> dict:
    """Overwrite `query` with its redacted form; the raw text never leaves this node."""
    result = runtime.context.redactor.redact(state["query"])
    if not result.changed:
        return {"query": result.text, "redaction_notice": None, "redacted_kinds": []}
    kinds = result.kinds
    notice = REDACTION_NOTICE.format(kinds=", ".join(k.lower().replace("_", " ") for k in kinds))
    return {"query": result.text, "redaction_notice": notice, "redacted_kinds": kinds}
