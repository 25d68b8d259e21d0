"""Langfuse tracing through its LangChain callback handler; a no-op when Langfuse is not configured.

Everything the SDK records passes through `mask`, which runs the redactor over every string,
so a secret that slipped past the redact node (or sits in an upload) never reaches the trace.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from typing import Any

from app.settings import Settings
from core.ports import Redactor
from graphs.support import flat_values

log = logging.getLogger(__name__)
MAX_TRACED_CHARS = 4000


def _shortened(text: str) -> str:
    """At most MAX_TRACED_CHARS, cut at whitespace so no half token (half a key) is left at the end."""
    if len(text) <= MAX_TRACED_CHARS:
        return text
    cut = max(text.rfind(" ", 0, MAX_TRACED_CHARS), text.rfind("\n", 0, MAX_TRACED_CHARS))
    return text[: cut if cut > MAX_TRACED_CHARS // 2 else MAX_TRACED_CHARS] + f"… [{len(text)} chars]"


def make_mask(redactor: Redactor):
    """The Langfuse mask: the trace destination's redactor over every string. Long strings are cut
    before redaction (bounded cost); a cut private key is still removed (BEGIN … to the end)."""

    def mask(*, data: Any, **_: Any) -> Any:
        if isinstance(data, str):
            return redactor.redact(_shortened(data)).text
        if isinstance(data, (bytes, bytearray, memoryview)):
            return f"<{len(data)} bytes>"
        if isinstance(data, dict):
            return {k: mask(data=v) for k, v in data.items()}
        if isinstance(data, (list, tuple, set, frozenset)):
            return [mask(data=v) for v in data]
        if data is None or isinstance(data, (bool, int, float)):
            return data
        # any other object (a parsed document, a message, a model) would be serialised by the SDK after this
        # mask: turn it into fields first, or into its text, so its strings are redacted too
        if dataclasses.is_dataclass(data) and not isinstance(data, type):
            return mask(data={f.name: getattr(data, f.name) for f in dataclasses.fields(data)})
        if callable(getattr(data, "model_dump", None)):
            try:
                return mask(data=data.model_dump())
            except Exception:  # noqa: BLE001 — an object that cannot dump itself is traced as its text
                pass
        return mask(data=str(data))

    return mask


def outcome_tags(outputs: Any) -> list[str]:
    """Tags that say what a run did: the action taken and the intent (support), the result (indexing)."""
    if not isinstance(outputs, dict):
        return []
    outputs = flat_values(outputs)  # a support run: the action and intent are in its turn record
    tags = [
        f"{key}:{outputs[key]}" for key in ("action", "intent") if isinstance(outputs.get(key), str) and outputs[key]
    ]
    if outputs.get("ticket_event"):
        tags.append(f"ticket:{outputs['ticket_event']}")
    if isinstance(outputs.get("status"), str):
        tags.append(f"result:{outputs['status']}")
    return tags


def _outcome_tagging_handler(**kwargs):
    return _outcome_tagging_class()(**kwargs)


@functools.lru_cache(maxsize=1)
def _outcome_tagging_class():
    """Langfuse's LangChain CallbackHandler, which also tags the trace with the run's outcome.

    Trace tags are set when the root run starts, before the action and intent are known; this adds
    them to the root span just before it ends (the SDK has no public call for that, hence the guard).
    """
    from langfuse._client.attributes import LangfuseOtelSpanAttributes
    from langfuse.langchain import CallbackHandler

    class OutcomeTaggingHandler(CallbackHandler):
        # a support run's state is read flat (the turn record's keys beside the session's), as its traces always were
        def on_chain_start(self, serialized, inputs, **kw):
            return super().on_chain_start(serialized, flat_values(inputs), **kw)

        def on_chain_end(self, outputs, *, run_id, parent_run_id=None, **kw):
            outputs = flat_values(outputs)
            if parent_run_id is None:
                try:
                    span = self._runs.get(run_id)
                    otel = getattr(span, "_otel_span", None)
                    if otel is not None and outcome_tags(outputs):
                        key = LangfuseOtelSpanAttributes.TRACE_TAGS
                        before = list((getattr(otel, "attributes", None) or {}).get(key) or [])
                        otel.set_attribute(key, sorted(set(before) | set(outcome_tags(outputs))))
                except Exception as exc:  # tags are a nicety: never let them break a run
                    log.debug("could not tag the Langfuse trace with its outcome: %s", exc)
            return super().on_chain_end(outputs, run_id=run_id, parent_run_id=parent_run_id, **kw)

    return OutcomeTaggingHandler


class NullTracer:
    enabled = False

    def callbacks(self, trace_id: str) -> list:
        return []

    def flush(self) -> None:
        pass

    def shutdown(self) -> None:
        pass


class LangfuseTracer:
    enabled = True

    def __init__(self, settings: Settings, redactor: Redactor) -> None:
        from langfuse import Langfuse

        self._public_key = settings.tracing.langfuse_public_key
        self._redactor = redactor  # score comments do not pass the SDK's mask
        secret_key = settings.tracing.langfuse_secret_key
        assert secret_key is not None  # built only when langfuse_enabled (both keys set)
        self._client = Langfuse(
            public_key=settings.tracing.langfuse_public_key,
            secret_key=secret_key.get_secret_value(),
            base_url=settings.tracing.langfuse_host,
            mask=make_mask(redactor),
            timeout=5,
            flush_interval=2.0,
        )

    def callbacks(self, trace_id: str) -> list:
        return [_outcome_tagging_handler(public_key=self._public_key, trace_context={"trace_id": trace_id})]

    def score_feedback(self, trace_id: str, rating: str, reason: str | None = None) -> None:
        """A user's thumbs up/down as a BOOLEAN score `user_feedback` on the trace; the reason as its comment."""
        try:
            self._client.create_score(
                name="user_feedback",
                value=1 if rating == "up" else 0,
                data_type="BOOLEAN",
                trace_id=trace_id,
                comment=self._redactor.redact(reason).text if reason else None,
            )
        except Exception as exc:  # the vote is stored locally either way
            log.warning("could not send feedback for trace %s to Langfuse: %s", trace_id, exc)

    def flush(self) -> None:
        try:
            self._client.flush()
        except Exception as exc:  # tracing must never take a request down with it
            log.warning("langfuse flush failed: %s", exc)

    def shutdown(self) -> None:
        try:
            self._client.shutdown()
        except Exception as exc:
            log.warning("langfuse shutdown failed: %s", exc)


def build_tracer(settings: Settings, redactor: Redactor) -> NullTracer | LangfuseTracer:
    if not settings.tracing.langfuse_enabled:
        return NullTracer()
    try:
        return LangfuseTracer(settings, redactor)
    except Exception as exc:  # a misconfigured Langfuse must not keep the service from starting
        log.error(
            "Langfuse tracing is off: the client could not be created (%s: %s); check LANGFUSE_HOST and the keys",
            type(exc).__name__,
            exc,
        )
        return NullTracer()


def run_config(
    *,
    tracer,
    trace_id: str,
    run_name: str,
    session_id: str | None = None,
    user_id: str | None = None,
    groups: frozenset[str] | None = None,
    tags: list[str] | None = None,
) -> dict:
    """RunnableConfig for one graph run: thread id for memory, Langfuse callbacks and attributes."""
    metadata: dict[str, Any] = {"deskmate_trace_id": trace_id}
    if session_id:
        metadata["langfuse_session_id"] = session_id
    if user_id or session_id:  # a conversation always has a user: "anonymous" until people sign in
        metadata["langfuse_user_id"] = user_id or "anonymous"
    if tags:
        metadata["langfuse_tags"] = tags
    config: dict[str, Any] = {"callbacks": tracer.callbacks(trace_id), "metadata": metadata, "run_name": run_name}
    if session_id:
        # identity travels in the run's config, where nodes read it; never in the prompt or from the model
        config["configurable"] = {
            "thread_id": session_id,
            "user_id": user_id or "anonymous",
            "groups": sorted(groups or ()),
        }
    return config
