"""POST /chat/stream: one chat turn as Server-Sent Events while the graph runs.

Events (each `event: <name>` + one `data: <json>` line):
  start            {session_id, trace_id}                     at once
  node             {name, duration_ms}                        as each graph node finishes
  token            {text, node}                               as a configured LLM writes the reply
  sources          {sources: [{n, title, source, section, chunk_id, score}]}
  content_chunk    {text, node}                               the reply as a node wrote it (before notices)
  message_complete the same envelope POST /chat returns       last
  error            {detail, status}                           instead of message_complete when the turn failed

The graph runs on a worker thread that hands events to the response through a queue. When the client
disconnects, the response stops; the worker sees that before the graph's next step, closes the graph
run (nothing of the turn is remembered, the trace says "cancelled") and releases the session.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any, AsyncGenerator, Callable, Generator

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from app.deps import current_caller, get_resources
from app.identity import Caller
from app.resources import Resources
from app.routers.chat import turn_request
from app.schemas import ChatRequest

log = logging.getLogger(__name__)
router = APIRouter(tags=["chat"])
_DONE = object()


def sse(event: str, data) -> bytes:
    """One Server-Sent Event; JSON without newlines, so one `data:` line."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n".encode()


UNEXPECTED = "Something went wrong while answering; please try again."


async def handled_error(request: Request, exc: Exception) -> tuple[int, object]:
    """(status, detail) that the app's exception handlers give this error on POST /chat; an unexpected
    error is logged and worded generically. For failures after a stream has started."""
    for cls in type(exc).__mro__:
        handler = request.app.exception_handlers.get(cls)
        if handler is not None and cls is not Exception:
            response = await handler(request, exc)
            body = json.loads(response.body)  # {"detail": …}, or OpenAI's {"error": {"message": …}} under /v1/
            return response.status_code, body["detail"] if "detail" in body else body["error"]["message"]
    log.error("chat stream failed: %s: %s", type(exc).__name__, exc, exc_info=exc)
    return 500, UNEXPECTED


async def _error_event(request: Request, exc: Exception) -> bytes:
    status, detail = await handled_error(request, exc)
    return sse("error", {"detail": detail, "status": status})


async def threaded_events(
    make_events: Callable[[], Generator[tuple[str, Any], None, None]], *, on_turn: Callable[[Any], None] | None = None
) -> AsyncGenerator[tuple[str, Any] | Exception, None]:
    """ChatService.stream's events, run on a worker thread and handed to the event loop through a queue.

    A failure comes through as the exception (after which the stream ends). `on_turn` runs on the worker
    with the finished turn, before its event is handed over. Closing this iterator (the client left) makes
    the worker close the graph run before its next step."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()
    stop = threading.Event()

    def hand_over(item) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the event loop is gone (shutdown): nobody is listening any more
            stop.set()

    def run_turn() -> None:
        events = make_events()
        try:
            for kind, data in events:
                if stop.is_set():
                    break  # the client left: closing `events` stops the graph before its next step
                if kind == "turn" and on_turn is not None:
                    on_turn(data)
                hand_over((kind, data))
        except Exception as exc:  # handed over as it is: each endpoint words its own error event
            hand_over(exc)
        finally:
            events.close()
            hand_over(_DONE)

    threading.Thread(target=run_turn, name="chat-stream", daemon=True).start()
    try:
        while True:
            item = await queue.get()
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()  # normal end, client disconnect (cancellation) or server shutdown alike


@router.post(
    "/chat/stream",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"text/event-stream": {}},
            "description": "Server-Sent Events: start, node, token, sources, content_chunk, "
            "then message_complete (or error).",
        }
    },
)
async def chat_stream(
    body: ChatRequest,
    request: Request,
    caller: Caller = Depends(current_caller),
    resources: Resources = Depends(get_resources),
) -> StreamingResponse:
    """POST /chat, streamed: progress as each node finishes, LLM tokens as they arrive, then the envelope."""
    # 422 (message, directives, collections) and 404 (another caller's conversation) before any event is sent
    prepared = await run_in_threadpool(resources.chat.start, turn_request(body, caller))

    async def event_stream():
        events = threaded_events(lambda: resources.chat.stream(prepared))
        try:
            async for item in events:
                if isinstance(item, Exception):
                    yield await _error_event(request, item)
                    continue
                kind, data = item
                if kind == "turn":
                    yield sse("message_complete", data.envelope().model_dump(mode="json"))
                elif kind == "sources":
                    yield sse("sources", {"sources": data})
                else:
                    yield sse(kind, data)
        finally:
            await events.aclose()  # at once, so the worker stops the graph before its next step

    return StreamingResponse(
        event_stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
