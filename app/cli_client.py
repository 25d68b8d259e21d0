"""`deskmate ask` against a running deskmate: one chat turn over POST /chat/stream, printed as it arrives.

The server already has the models loaded, so a question costs the answer's time, not a model load.
Only the CLI uses this module; it speaks the same HTTP API any other client would.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Callable, Iterator
from urllib.parse import quote

import httpx

CONNECT_TIMEOUT_S = 3.0
TURN_TIMEOUT_S = 300.0  # an LLM turn with retries stays well under this; a silent server does not hang the shell
MAX_EVENT_BYTES = 1_000_000  # one SSE event; the envelope of a long answer is far below it


class ServerUnavailable(Exception):
    """No deskmate answers at the address (nothing listening, or not deskmate)."""


class TurnRefused(Exception):
    """The server answered the turn with an error; `detail` is its message for the user."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


def default_url(settings) -> str:
    """DESKMATE_URL, else where `deskmate serve` listens with these settings (0.0.0.0 is reached on loopback)."""
    explicit = os.environ.get("DESKMATE_URL", "").strip()
    if explicit:
        return explicit.rstrip("/")
    host = settings.server.host if settings.server.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{settings.server.port}"


def source_link(base_url: str, source: dict) -> str:
    """The web UI's view of a cited document, opened at its section (the download link sits beside it)."""
    if not source.get("doc_id"):
        return source.get("source", "")
    link = f"{base_url}/view/{quote(source['doc_id'])}"
    return link + (f"#section={quote(source['section'])}" if source.get("section") else "")


def _events(lines: Iterator[str]) -> Iterator[tuple[str, dict]]:
    """(event, data) pairs from a Server-Sent Events body."""
    data: list[str] = []
    event, size = "message", 0
    for line in lines:
        if line == "":
            if data:
                yield event, json.loads("\n".join(data))
            event, data, size = "message", [], 0
        elif line.startswith("event:"):
            event = line[len("event:") :].strip()
        elif line.startswith("data:"):
            size += len(line)
            if size > MAX_EVENT_BYTES:
                raise TurnRefused(502, "The server sent an event larger than a chat reply can be.")
            data.append(line[len("data:") :].lstrip())


@dataclass
class StreamedTurn:
    envelope: dict = field(default_factory=dict)
    streamed_text: str = ""  # what was printed while the turn ran


def ask_server(
    base_url: str, payload: dict, write: Callable[[str], None], *, headers: dict[str, str] | None = None
) -> StreamedTurn:
    """Run one turn on the server, writing the reply's text as it arrives; the finished envelope is returned."""
    turn = StreamedTurn()
    timeout = httpx.Timeout(TURN_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
    try:
        with (
            httpx.Client(timeout=timeout, headers=headers or {}) as client,
            client.stream("POST", f"{base_url}/chat/stream", json=payload) as response,
        ):
            if response.status_code != 200:
                response.read()
                try:
                    detail = response.json().get("detail")
                except ValueError:
                    raise ServerUnavailable(f"{base_url} answered {response.status_code} and is not deskmate") from None
                raise TurnRefused(response.status_code, detail if isinstance(detail, str) else json.dumps(detail))
            if not response.headers.get("content-type", "").startswith("text/event-stream"):
                raise ServerUnavailable(f"{base_url} is not deskmate (no event stream from /chat/stream)")
            for event, data in _events(response.iter_lines()):
                if event in ("token", "content_chunk") and data.get("text"):
                    if event == "content_chunk" and turn.streamed_text:
                        continue  # the LLM's tokens were shown already; this is the same reply written out
                    turn.streamed_text += data["text"]
                    write(data["text"])
                elif event == "message_complete":
                    turn.envelope = data
                elif event == "error":
                    raise TurnRefused(int(data.get("status", 500)), str(data.get("detail", "the turn failed")))
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise ServerUnavailable(f"no deskmate answers at {base_url}") from exc
    if not turn.envelope:
        raise TurnRefused(502, "The server closed the stream before the answer was complete; please try again.")
    return turn
