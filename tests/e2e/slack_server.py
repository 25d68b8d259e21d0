"""A Slack Web API on 127.0.0.1 for tests: answers the methods deskmate calls the way Slack does (JSON bodies or
form fields, a bearer token, `{"ok": …}` envelopes), records every call, and can refuse one call with 429 and
`Retry-After`. Plus what Slack itself sends: signed Events API and interactivity requests, and a Socket Mode
websocket server (`apps.connections.open` hands out its ws:// address) that pushes envelopes and records acks."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection, serve

BOT_USER = "UDESKBOT"


class SlackApiServer:
    def __init__(
        self,
        *,
        token: str,
        emails: dict[str, str] | None = None,
        usergroups: list[dict] | None = None,
        app_token: str | None = None,
        socket_url: str | None = None,
    ):
        self.token = token
        self.app_token, self.socket_url = app_token, socket_url  # Socket Mode: apps.connections.open
        self.emails = emails or {}
        self.usergroups = usergroups or []
        self.calls: list[tuple[str, dict]] = []
        self.rate_limit_next: set[str] = set()  # methods whose next call gets 429
        self.rate_limited: list[str] = []
        self._changed = threading.Condition()
        self._ts = itertools.count(1)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _answer(self, status: int, body: dict, headers: dict | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, fields: dict) -> None:
                method = urlparse(self.path).path.rsplit("/", 1)[-1]
                if method == "apps.connections.open":  # the one method called with the app-level token
                    if not server.app_token or self.headers.get("Authorization") != f"Bearer {server.app_token}":
                        self._answer(200, {"ok": False, "error": "invalid_auth"})
                        return
                    self._answer(200, server.respond(method, fields))
                    return
                if self.headers.get("Authorization") != f"Bearer {server.token}":
                    self._answer(200, {"ok": False, "error": "invalid_auth"})
                    return
                if method in server.rate_limit_next:
                    server.rate_limit_next.discard(method)
                    server.rate_limited.append(method)
                    self._answer(429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "1"})
                    return
                self._answer(200, server.respond(method, fields))

            def do_GET(self):
                self._handle({k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()})

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                if self.headers.get("Content-Type", "").startswith("application/json"):
                    fields = json.loads(raw or "{}")
                else:
                    fields = {k: v[0] for k, v in parse_qs(raw).items()}
                fields.update({k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()})
                self._handle(fields)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/api/"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def respond(self, method: str, fields: dict) -> dict:
        answer = self._respond(method, fields)
        with self._changed:
            self.calls.append((method, fields))
            self._changed.notify_all()
        return answer

    def _respond(self, method: str, fields: dict) -> dict:
        if method == "apps.connections.open":
            return {"ok": True, "url": self.socket_url} if self.socket_url else {"ok": False, "error": "not_allowed"}
        if method == "auth.test":
            return {"ok": True, "user_id": BOT_USER, "bot_id": "BDESK", "team_id": "T0001", "user": "deskmate"}
        if method == "users.info":
            user = fields.get("user", "")
            profile = {"email": self.emails[user]} if user in self.emails else {}
            return {"ok": True, "user": {"id": user, "profile": profile}}
        if method == "usergroups.list":
            return {"ok": True, "usergroups": self.usergroups}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": f"1800000000.{next(self._ts):06d}"}
        if method in ("chat.postMessage", "chat.update"):
            ts = fields.get("ts") or f"1800000000.{next(self._ts):06d}"
            fields["_ts"] = ts  # what Slack answered: the message's own timestamp
            fields["_arrived"] = time.perf_counter()  # when it arrived (bench/slack.py)
            return {"ok": True, "channel": fields.get("channel"), "ts": ts, "message": {"text": fields.get("text")}}
        return {"ok": False, "error": "unknown_method"}

    def posts(self, method: str = "chat.postMessage") -> list[dict]:
        with self._changed:
            return [fields for name, fields in self.calls if name == method]

    def wait_for(self, method: str, count: int, timeout_s: float = 120) -> list[dict]:
        """The first `count` calls of `method`, once that many were made (AssertionError after `timeout_s`)."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while True:
                calls = [fields for name, fields in self.calls if name == method]
                if len(calls) >= count:
                    return calls
                left = deadline - time.monotonic()
                assert left > 0, f"only {len(calls)} {method} call(s) of {count} expected: {self.calls}"
                self._changed.wait(left)

    def __enter__(self) -> SlackApiServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def signed_headers(secret: str, body: str, *, timestamp: int | None = None, content_type: str) -> dict[str, str]:
    """The headers Slack signs a request with (v0 HMAC-SHA256 over `v0:<timestamp>:<body>`)."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    signature = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={signature}", "Content-Type": content_type}


def event_body(event: dict, *, event_id: str, team: str = "T0001") -> str:
    return json.dumps(
        {"type": "event_callback", "team_id": team, "api_app_id": "ADESK", "event_id": event_id, "event": event}
    )


def press_body(*, user: str, channel: str, message: dict, action_id: str, value: str, team: str = "T0001") -> str:
    """A block_actions interaction as Slack posts it: a form field `payload` holding the JSON."""
    payload = {
        "type": "block_actions",
        "team": {"id": team},
        "user": {"id": user},
        "api_app_id": "ADESK",
        "channel": {"id": channel},
        "container": {"type": "message", "message_ts": message["ts"], "channel_id": channel},
        "message": message,
        "actions": [
            {"action_id": action_id, "block_id": "deskmate-buttons", "value": value, "action_ts": str(time.time())}
        ],
        "trigger_id": "1.2.3",
    }
    return urlencode({"payload": json.dumps(payload)})


class SocketModeServer:
    """Slack's Socket Mode end on 127.0.0.1: a websocket server that greets each connection with `hello`, pushes
    the envelopes a test queues, and records the acks (`{"envelope_id": …}`) the app sends back."""

    def __init__(self) -> None:
        self.connections = 0
        self.acks: list[dict] = []
        self._outbox: list[dict] = []
        self._changed = threading.Condition()
        self._server = serve(self._session, "127.0.0.1", 0)
        self.url = f"ws://127.0.0.1:{self._server.socket.getsockname()[1]}/link/?ticket=test"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _session(self, websocket: ServerConnection) -> None:
        with self._changed:
            self.connections += 1
            self._changed.notify_all()
        websocket.send(json.dumps({"type": "hello", "num_connections": 1, "debug_info": {"host": "fake"}}))
        try:
            while True:
                with self._changed:
                    pending, self._outbox = self._outbox, []
                for envelope in pending:
                    websocket.send(json.dumps(envelope))
                try:
                    raw = websocket.recv(timeout=0.1)
                except TimeoutError:
                    continue
                message = json.loads(raw)
                if "envelope_id" in message:
                    with self._changed:
                        self.acks.append(message)
                        self._changed.notify_all()
        except ConnectionClosed:
            pass

    def push_event(self, event: dict, *, event_id: str, team: str = "T0001") -> str:
        """Queue an events_api envelope for the connected app; its envelope id."""
        envelope_id = str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": 0,
            "retry_reason": "",
            "payload": json.loads(event_body(event, event_id=event_id, team=team)),
        }
        with self._changed:
            self._outbox.append(envelope)
        return envelope_id

    def wait(self, condition, timeout_s: float = 180) -> None:
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not condition():
                left = deadline - time.monotonic()
                assert left > 0, f"timed out: {self.connections} connection(s), acks {self.acks}"
                self._changed.wait(left)

    def __enter__(self) -> SocketModeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
