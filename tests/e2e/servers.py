"""Small real HTTP servers on 127.0.0.1 that speak the protocols of services that cannot run here.

- OpenAICompatibleServer: POST /v1/chat/completions (and Groq's /openai/v1/chat/completions), the
  OpenAI chat-completions wire format; replies are scripted, requests are recorded.
- RecordingServer: accepts anything (Langfuse's OTLP/ingestion endpoints), records bodies.
- StatusPageServer: an Atlassian Statuspage page (GET /api/v2/summary.json) with a settable reply and delay.
- FakeVendor and VendorHandler: what every fake vendor API (Confluence, Graph, ServiceNow, Zendesk, a website)
  shares — a threaded server on a free port, a quiet handler that answers JSON or bytes.
"""

from __future__ import annotations

import json
import os
import random
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

# A port for a server a test starts in another process. It is free when chosen and bound a moment later by
# that process, so it is drawn where nothing else draws: below the kernel's ephemeral range (32768+, where
# outgoing connections and bind-to-0 land), in a block of its own per pytest-xdist worker, at random.
_PORT_BLOCK = 1000
_PORT_BASE = 20000  # worker n draws from 20000 + 1000·n (n < 12)


def free_port() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    low = _PORT_BASE + (int(worker) if worker.isdigit() else 0) % 12 * _PORT_BLOCK
    for port in random.sample(range(low, low + _PORT_BLOCK), _PORT_BLOCK):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:  # in use, or still in TIME_WAIT from an earlier test
                continue
            return port
    raise RuntimeError(f"no free port in {low}..{low + _PORT_BLOCK - 1}")


class _Server:
    def __init__(self, handler_cls) -> None:
        self.requests: list[dict[str, Any]] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_cls)
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep test output clean
        pass

    @property
    def owner(self):
        return self.server.owner  # type: ignore[attr-defined]

    def _body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def completion(content: str, model: str = "stub-model") -> dict:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


class OpenAICompatibleServer(_Server):
    """Each reply is a string (assistant content), an int (HTTP error status) or a callable(request)->str."""

    def __init__(self, replies: list[str | int | Callable[[dict], str]] | None = None, delay_s: float = 0.0) -> None:
        self.replies = list(replies or [])
        self.delay_s = delay_s
        self.default_reply: str | int | None = None
        super().__init__(_OpenAIHandler)

    def next_reply(self, request: dict):
        if self.replies:
            reply = self.replies.pop(0)
        elif self.default_reply is not None:
            reply = self.default_reply
        else:
            return 500
        return reply(request) if callable(reply) else reply


class _OpenAIHandler(_Handler):
    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, json.dumps({"object": "list", "data": [{"id": "stub-model", "object": "model"}]}).encode())
        else:
            self._send(404, b'{"error": "not found"}')

    def do_POST(self) -> None:
        body = json.loads(self._body() or b"{}")
        record = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
        self.owner.requests.append(record)
        if not self.path.endswith("/chat/completions"):
            self._send(404, b'{"error": {"message": "unknown endpoint"}}')
            return
        if self.owner.delay_s:
            time.sleep(self.owner.delay_s)
        reply = self.owner.next_reply(record)
        if isinstance(reply, int):
            self._send(reply, json.dumps({"error": {"message": f"scripted {reply}", "type": "server_error"}}).encode())
        elif reply == "<<not json>>":
            self._send(200, b"<html>502 Bad Gateway</html>", "text/html")
        else:
            self._send(200, json.dumps(completion(reply, body.get("model", "stub-model"))).encode())


class RecordingServer(_Server):
    """Answers 200 {} to everything and records path, headers and raw body."""

    def __init__(self) -> None:
        super().__init__(_RecordingHandler)


class _RecordingHandler(_Handler):
    def _record(self) -> None:
        self.owner.requests.append(
            {
                "method": self.command,
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": self._body(),
            }
        )
        self._send(200, b"{}")

    do_POST = do_PUT = do_GET = do_PATCH = _record  # noqa: N815


class StatusPageServer(_Server):
    """A Statuspage page: GET /api/v2/summary.json answers with whatever the test set via `serve()`.

    `delay_s` makes it slow (the reply comes after the wait, or when the test sets `released`); every request
    is recorded, and `answered` counts the replies sent.
    """

    SUMMARY_PATH = "/api/v2/summary.json"

    def __init__(
        self, body: bytes = b"{}", *, status: int = 200, content_type: str = "application/json", delay_s: float = 0.0
    ) -> None:
        self.serve(body, status=status, content_type=content_type, delay_s=delay_s)
        self.released = threading.Event()
        self.answered = 0
        super().__init__(_StatusPageHandler)

    def serve(
        self, body: bytes, *, status: int = 200, content_type: str = "application/json", delay_s: float = 0.0
    ) -> None:
        self.reply = (status, body, content_type, delay_s)


class _StatusPageHandler(_Handler):
    def do_GET(self) -> None:
        self.owner.requests.append(
            {"method": "GET", "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
        )
        if self.path.split("?")[0] != StatusPageServer.SUMMARY_PATH:
            self._send(404, b"<html>Not found</html>", "text/html")
            return
        status, body, content_type, delay_s = self.owner.reply
        if delay_s:
            self.owner.released.wait(delay_s)
        try:
            self._send(status, body, content_type)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting, as it should
            pass
        self.owner.answered += 1


class JsonApiServer(_Server):
    """A small read-only JSON API (an asset register, a licence portal): GET <path>?… answers with
    `routes[path](query)` → (status, body); bytes bodies are sent as they are. Every request is recorded."""

    def __init__(self, routes: dict[str, Callable[[dict[str, str]], tuple[int, Any]]], delay_s: float = 0.0) -> None:
        self.routes = routes
        self.delay_s = delay_s
        super().__init__(_JsonApiHandler)


class _JsonApiHandler(_Handler):
    def do_GET(self) -> None:
        from urllib.parse import parse_qsl, urlsplit

        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query))
        self.owner.requests.append(
            {
                "method": "GET",
                "path": parts.path,
                "query": query,
                "raw_path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
            }
        )
        if self.owner.delay_s:
            time.sleep(self.owner.delay_s)
        route = self.owner.routes.get(parts.path)
        if route is None:
            self._send(404, b'{"error": "not found"}')
            return
        status, body = route(query)
        try:
            if isinstance(body, bytes):
                self._send(status, body, "text/html" if body.lstrip()[:1] == b"<" else "application/octet-stream")
            else:
                self._send(status, json.dumps(body).encode())
        except (BrokenPipeError, ConnectionResetError):
            pass


class FakeVendor:
    """A fake vendor API on 127.0.0.1, served from a thread while used as a context manager; a subclass
    calls `_serve()` at the end of its __init__ and gives `_handler()`, the handler class."""

    def _serve(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


class VendorHandler(BaseHTTPRequestHandler):
    """Quiet; `_send` answers a dict as JSON (in the vendor's own content type) and bytes as they are."""

    json_type = "application/json"

    def log_message(self, *args) -> None:
        pass

    def _send(self, status: int, body: bytes | dict, headers: dict | None = None) -> None:
        payload = json.dumps(body).encode() if isinstance(body, dict) else body
        self.send_response(status)
        self.send_header("Content-Type", self.json_type if isinstance(body, dict) else "application/octet-stream")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
