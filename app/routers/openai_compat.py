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
- `stream: true` sends `chat.completion.chunk` events, then `data: [DONE]`. The reply is sent when the
  turn has finished (so notices and citations are final), in word-sized pieces.
- System (and developer) messages carry the persona and directives (`RESPONSE_MODE: HYBRID`, a `<config>`
  block …; nodes/directives.py): a bad RESPONSE_MODE is refused (422), a bad optional directive falls back
  to its default with a warning in `deskmate.directive_warnings`.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from app.deps import current_caller, get_resources
from app.identity import USER_HEADER, Caller, IdentityError, verify_user_token
from app.resources import Resources
from app.routers.chat import envelope, steering_of
from app.routers.feedback import remember_answer
from app.schemas import clean_message

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
    return JSONResponse(status_code=status, content={"error": {"message": message, "type": kind,
                                                               "param": param, "code": code}})


def _text(content: str | list[dict[str, Any]] | None) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(part.get("text", "")) for part in content or [] if part.get("type") in ("text", None))


def fingerprint(user_id: str, messages: list[tuple[str, str]]) -> str:
    """A history's identity: who, and what was said (system messages left out; whitespace normalised)."""
    canonical = json.dumps([user_id, [(role, " ".join(text.split())) for role, text in messages
                                      if role in ("user", "assistant")]], ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _caller(request: Request, body: CompletionRequest) -> Caller:
    secret = request.app.state.settings.user_token_secret
    if secret is not None and not request.headers.get(USER_HEADER) and body.user and _TOKEN_SHAPE.match(body.user):
        try:
            return verify_user_token(body.user, secret.get_secret_value())
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
async def chat_completions(body: CompletionRequest, request: Request,
                           resources: Resources = Depends(get_resources)):
    if body.model != MODEL_ID:
        return openai_error(404, f"The model '{body.model}' does not exist; this server offers '{MODEL_ID}' "
                                 "(GET /v1/models).", "invalid_request_error", "model_not_found", "model")
    try:
        caller = _caller(request, body)
    except _Refused as refused:
        return refused.response
    history = [(m.role, _text(m.content)) for m in body.messages]
    if history[-1][0] != "user":
        return openai_error(400, "The last message must be the user's: it is the turn deskmate answers.",
                            "invalid_request_error", "invalid_messages", "messages")
    message = clean_message(history[-1][1])
    limit = resources.settings.max_message_chars
    if not message or len(message) > limit:
        return openai_error(400, "The last user message is empty." if not message else
                            f"The last user message is {len(message):,} characters long; the limit is {limit:,}.",
                            "invalid_request_error", "invalid_message", "messages")
    explicit = body.conversation_id or request.headers.get(SESSION_HEADER)
    if explicit and not _SESSION_ID.match(explicit):
        return openai_error(400, "conversation_id must be 1–128 letters, digits or ._:-", "invalid_request_error",
                            "invalid_conversation_id", "conversation_id")
    earlier = fingerprint(caller.user_id, history[:-1])
    session_id = explicit or (await run_in_threadpool(resources.chat.session_for, earlier) if len(history) > 1
                              else None)

    system = "\n".join(text for role, text in history if role in ("system", "developer"))
    steering = steering_of(system, None, None)  # InvalidDirective → 422
    turn = await run_in_threadpool(lambda: resources.chat.ask(
        message, session_id=session_id, user_id=caller.user_id, groups=caller.groups,
        search_filters=steering.filters, response_mode=steering.response_mode,
        directives=steering.directives))  # SessionNotFound → 404
    remember_answer(resources, turn)
    reply = envelope(turn, warnings=steering.warnings)
    await run_in_threadpool(resources.chat.remember_history,
                            fingerprint(caller.user_id, history + [("assistant", reply.answer)]), turn.session_id)

    completion_id, created = f"chatcmpl-{turn.trace_id}", int(time.time())
    headers = {SESSION_HEADER: turn.session_id}
    extra = reply.model_dump(mode="json")
    if not body.stream:
        prompt_words = sum(len(text.split()) for _, text in history)
        answer_words = len(reply.answer.split())
        return JSONResponse(headers=headers, content={
            "id": completion_id, "object": "chat.completion", "created": created, "model": MODEL_ID,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.answer},
                         "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": prompt_words, "completion_tokens": answer_words,
                      "total_tokens": prompt_words + answer_words},  # words: deskmate has no one tokenizer
            "deskmate": extra})

    def chunk(delta: dict, finish: str | None = None, **more) -> str:
        payload = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": MODEL_ID,
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **more}
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

    def events():
        yield chunk({"role": "assistant", "content": ""})
        for piece in re.findall(r"\S*\s*", reply.answer):
            if piece:
                yield chunk({"content": piece})
        yield chunk({}, "stop", deskmate=extra)
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers=headers | {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
