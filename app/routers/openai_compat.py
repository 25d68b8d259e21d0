"""POST /v1/chat/completions and GET /v1/models: deskmate's whole agent behind the OpenAI chat API.

Existing chat front-ends and the official `openai` client talk to deskmate as to a model named
`deskmate`. Each request is one turn of the support graph (decide → answer / clarify / troubleshoot /
ticket …), with the same redaction, access control and tracing as POST /chat.

- The turn's message is the last `user` message; earlier messages are the client's copy of the history.
- Which conversation: `conversation_id` in the body (the openai client's `extra_body`) or the
  `X-Deskmate-Session` header, when given; otherwise deskmate recognises a resent history by its
  fingerprint (every turn it answers, it remembers the fingerprint of the history including its reply),
  so a front-end that resends the conversation continues the same session. The session id comes back
  in the `X-Deskmate-Session` header and in the response's `deskmate` field (the full /chat envelope).
- Who: with sign-in on, the signed token in `X-Deskmate-User` or in the request's `user` field.
- `stream: true` sends `chat.completion.chunk` events, then `data: [DONE]`: the LLM's tokens as it writes
  the reply, then what the finished turn added (notices, citations; a reply without an LLM comes in
  word-sized pieces). When the finished reply is not a continuation of the tokens shown (the LLM's answer
  was rejected and replaced), the final answer follows, marked as the replacement. The last chunk carries
  the full /chat envelope in `deskmate`.
- System (and developer) messages carry the persona and directives (`RESPONSE_MODE: HYBRID`, a `<config>`
  block …; nodes/support/directives.py): a bad RESPONSE_MODE is refused (422), a bad optional directive falls back
  to its default with a warning in `deskmate.directive_warnings`.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from typing import Any, Literal, Sequence

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from app.chat_service import InvalidMessage, TurnRequest
from app.deps import current_caller, get_resources
from app.identity import USER_HEADER, Caller, IdentityError, verify_user_token
from app.openai_errors import openai_error_body
from app.resources import Resources
from app.routers.stream import handled_error, threaded_events

router = APIRouter(prefix="/v1", tags=["openai-compatible"])
MODEL_ID = "deskmate"
SESSION_HEADER = "X-Deskmate-Session"
MAX_MESSAGES = 200
_TOKEN_SHAPE = re.compile(r"^[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+$")
_SESSION_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


class ChatMessage(BaseModel):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None


class CompletionRequest(BaseModel):
    model: str = Field(MODEL_ID, max_length=100)
    messages: list[ChatMessage] = Field(..., min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    user: str | None = Field(None, max_length=4096, description="Signed user token (sign-in on); else ignored.")
    conversation_id: str | None = Field(None, max_length=128, description="deskmate session to continue.")
    # accepted and ignored, so that clients sending them are not refused: deskmate decides its own output
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    n: int | None = Field(None, ge=1, le=1)


def openai_error(status: int, message: str, kind: str, code: str | None = None, param: str | None = None):
    """Errors in OpenAI's shape, which its clients read (`error.message`)."""
    return JSONResponse(status_code=status, content={"error": openai_error_body(status, message, kind, code, param)})


def _text(content: str | list[dict[str, Any]] | None) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(part.get("text", "")) for part in content or [] if part.get("type") in ("text", None))


def fingerprint(user_id: str, messages: Sequence[tuple[str, str]]) -> str:
    """A history's identity: who, and what was said (system messages left out; whitespace normalised)."""
    canonical = json.dumps(
        [user_id, [(role, " ".join(text.split())) for role, text in messages if role in ("user", "assistant")]],
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _caller(request: Request, body: CompletionRequest) -> Caller:
    secret = request.app.state.settings.security.user_token_secret
    if secret is not None and not request.headers.get(USER_HEADER) and body.user and _TOKEN_SHAPE.match(body.user):
        try:
            return verify_user_token(
                body.user, secret.get_secret_value(), max_ttl_s=request.app.state.settings.security.user_token_max_ttl_s
            )
        except IdentityError as exc:
            raise _Refused(openai_error(401, str(exc), "invalid_request_error", "invalid_user", "user")) from None
    return current_caller(request)  # the header, or anonymous with sign-in off (HTTPException → 401)


class _Refused(Exception):
    def __init__(self, response: JSONResponse) -> None:
        self.response = response


@router.get("/models")
def list_models() -> dict:
    return {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "deskmate"}]}


@router.post("/chat/completions", response_model=None)
async def chat_completions(body: CompletionRequest, request: Request, resources: Resources = Depends(get_resources)):
    if body.model != MODEL_ID:
        return openai_error(
            404,
            f"The model '{body.model}' does not exist; this server offers '{MODEL_ID}' (GET /v1/models).",
            "invalid_request_error",
            "model_not_found",
            "model",
        )
    try:
        caller = _caller(request, body)
    except _Refused as refused:
        return refused.response
    history = [(m.role, _text(m.content)) for m in body.messages]
    if history[-1][0] != "user":
        return openai_error(
            400,
            "The last message must be the user's: it is the turn deskmate answers.",
            "invalid_request_error",
            "invalid_messages",
            "messages",
        )
    try:
        message = resources.chat.checked_message(history[-1][1])
    except InvalidMessage as exc:
        return openai_error(
            400,
            "The last user message is empty."
            if not exc.length
            else f"The last user message is {exc.length:,} characters long; the limit is {exc.limit:,}.",
            "invalid_request_error",
            "invalid_message",
            "messages",
        )
    explicit = body.conversation_id or request.headers.get(SESSION_HEADER)
    if explicit and not _SESSION_ID.match(explicit):
        return openai_error(
            400,
            "conversation_id must be 1–128 letters, digits or ._:-",
            "invalid_request_error",
            "invalid_conversation_id",
            "conversation_id",
        )
    earlier = fingerprint(caller.user_id, history[:-1])
    session_id = explicit or (
        await run_in_threadpool(resources.chat.session_for, earlier) if len(history) > 1 else None
    )

    system = "\n".join(text for role, text in history if role in ("system", "developer"))
    asked = TurnRequest(message, session_id=session_id, user_id=caller.user_id, groups=caller.groups, system=system)
    created = int(time.time())

    def remember(turn) -> None:  # after every turn, on the thread that ran it: this history continues its session
        resources.chat.remember_history(
            fingerprint(caller.user_id, history + [("assistant", turn.output.get("answer", ""))]), turn.session_id
        )

    if not body.stream:
        turn = await run_in_threadpool(resources.chat.ask, asked)  # InvalidDirective → 422, SessionNotFound → 404
        await run_in_threadpool(remember, turn)
        reply = turn.envelope()
        prompt_words = sum(len(text.split()) for _, text in history)
        answer_words = len(reply.answer.split())
        return JSONResponse(
            headers={SESSION_HEADER: turn.session_id},
            content={
                "id": f"chatcmpl-{turn.trace_id}",
                "object": "chat.completion",
                "created": created,
                "model": MODEL_ID,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.answer},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_words,
                    "completion_tokens": answer_words,
                    "total_tokens": prompt_words + answer_words,
                },  # words: deskmate has no one tokenizer
                "deskmate": reply.model_dump(mode="json"),
            },
        )

    # streamed: the request is checked and the session settled before the first byte (422, 404)
    prepared = await run_in_threadpool(resources.chat.start, asked)
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"

    def chunk(delta: dict, finish: str | None = None, **more) -> str:
        payload = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": MODEL_ID,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
            **more,
        }
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

    async def events():
        yield chunk({"role": "assistant", "content": ""})
        sent = ""  # what the client has been shown so far
        turn_events = threaded_events(lambda: resources.chat.stream(prepared), on_turn=remember)
        try:
            async for item in turn_events:
                if isinstance(item, Exception):
                    yield f"data: {json.dumps({'error': await _stream_error(request, item)})}\n\n"
                    break
                kind, data = item
                if kind == "token" and data.get("text"):  # the LLM writing the reply: passed on as it comes
                    sent += data["text"]
                    yield chunk({"content": data["text"]})
                elif kind == "turn":
                    reply = data.envelope()
                    for piece in re.findall(r"\S*\s*", rest_of(reply.answer, sent)):
                        if piece:
                            yield chunk({"content": piece})
                    yield chunk({}, "stop", deskmate=reply.model_dump(mode="json"))
            yield "data: [DONE]\n\n"
        finally:
            await turn_events.aclose()  # the client left: the graph stops before its next step

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={SESSION_HEADER: prepared.session_id, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


REPLACED = "(deskmate replaced the reply above; this is its answer:)"


def rest_of(answer: str, sent: str) -> str:
    """What still has to be streamed once the turn is final. Usually the reply continues what the LLM's
    tokens showed (notices, citations); when the reply was replaced (citations rejected, the LLM failed,
    a second LLM pass), the stream cannot take text back, so the whole final answer follows, marked."""
    if answer.startswith(sent):
        return answer[len(sent) :]
    return f"\n\n{REPLACED}\n\n{answer}"


async def _stream_error(request: Request, exc: Exception) -> dict:
    """An error after the stream started, worded as OpenAI streams them: {"message", "type", "code"}."""
    status, detail = await handled_error(request, exc)
    return openai_error_body(status, detail if isinstance(detail, str) else json.dumps(detail))
