"""Langfuse tracing through its LangChain callback handler; a no-op when Langfuse is not configured.

Everything the SDK records passes through `mask`, which runs the redactor over every string,
so a secret that slipped past the redact node (or sits in an upload) never reaches the trace.
"""

from __future__ import annotations

import logging
from typing import Any

from app.settings import Settings
from graphs.ports import Redactor

log = logging.getLogger(__name__)
MAX_TRACED_CHARS = 4000


def make_mask(redactor: Redactor):
    def mask(*, data: Any, **_: Any) -> Any:
        if isinstance(data, str):
            text = redactor.redact(data).text
            return text if len(text) <= MAX_TRACED_CHARS else text[:MAX_TRACED_CHARS] + f"… [{len(text)} chars]"
        if isinstance(data, (bytes, bytearray, memoryview)):
            return f"<{len(data)} bytes>"
        if isinstance(data, dict):
            return {k: mask(data=v) for k, v in data.items()}
        if isinstance(data, (list, tuple)):
            return [mask(data=v) for v in data]
        return data

    return mask


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

        self._public_key = settings.langfuse_public_key
        self._client = Langfuse(
            public_key=settings.langfuse_public_key,
            secret_key=settings.langfuse_secret_key.get_secret_value(),
            base_url=settings.langfuse_host,
            mask=make_mask(redactor),
            timeout=5,
            flush_interval=2.0,
        )

    def callbacks(self, trace_id: str) -> list:
        from langfuse.langchain import CallbackHandler

        return [CallbackHandler(public_key=self._public_key, trace_context={"trace_id": trace_id})]

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
    if not settings.langfuse_enabled:
        return NullTracer()
    return LangfuseTracer(settings, redactor)


def run_config(*, tracer, trace_id: str, run_name: str, session_id: str | None = None,
               user_id: str | None = None, tags: list[str] | None = None) -> dict:
    """RunnableConfig for one graph run: thread id for memory, Langfuse callbacks and attributes."""
    metadata: dict[str, Any] = {"deskmate_trace_id": trace_id}
    if session_id:
        metadata["langfuse_session_id"] = session_id
    if user_id:
        metadata["langfuse_user_id"] = user_id
    if tags:
        metadata["langfuse_tags"] = tags
    config: dict[str, Any] = {"callbacks": tracer.callbacks(trace_id), "metadata": metadata, "run_name": run_name}
    if session_id:
        config["configurable"] = {"thread_id": session_id}
    return config
