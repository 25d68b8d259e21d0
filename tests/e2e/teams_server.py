"""The Bot Framework on 127.0.0.1 for tests, speaking its protocol:

- an OpenID metadata document (`/openid`, naming its issuer and `/keys`) and the JWKS with its RSA key, whose
  private half signs the activities the tests send (`signed_headers`), as the Bot Framework signs them;
- an Entra token endpoint (`/token`, OAuth client credentials) handing deskmate its bearer token;
- the Bot Connector: `POST /v3/conversations/{id}/activities`, `PUT /v3/conversations/{id}/activities/{activity}`
  and `GET /v3/conversations/{id}/members/{member}`, answered like the connector and refused (401) without the
  bearer token the token endpoint issued. Every call is recorded.
"""

from __future__ import annotations

import base64
import itertools
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

ISSUER = "https://api.botframework.com"
KEY_ID = "fake-bot-framework-key"


def _b64(number: int) -> str:
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class BotFrameworkServer:
    def __init__(self, *, app_id: str, app_password: str, members: dict[str, dict] | None = None) -> None:
        self.app_id, self.app_password = app_id, app_password
        self.members = members or {}  # Teams user id → what the member lookup answers
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.calls: list[dict] = []  # {"method", "conversation", "activity_id", "body", "_id", "_arrived"}
        self.tokens_issued: set[str] = set()
        self.rate_limit_next = 0  # how many of the next connector posts get 429
        self._changed = threading.Condition()
        self._ids = itertools.count(1)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _answer(self, status: int, body: dict | list | None = None, headers: dict | None = None) -> None:
                data = json.dumps(body if body is not None else {}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def do_GET(self):
                path = urlparse(self.path).path
                if path == "/openid":
                    self._answer(
                        200,
                        {
                            "issuer": ISSUER,
                            "authorization_endpoint": f"{server.url}/authorize",
                            "jwks_uri": f"{server.url}/keys",
                            "id_token_signing_alg_values_supported": ["RS256"],
                            "token_endpoint_auth_methods_supported": ["private_key_jwt"],
                        },
                    )
                elif path == "/keys":
                    self._answer(200, {"keys": [server.public_jwk()]})
                elif path.startswith("/v3/conversations/") and "/members/" in path:
                    if not server._authorized(self.headers.get("Authorization")):
                        self._answer(401, {"message": "Authorization has been denied for this request."})
                        return
                    conversation, _, member = path.removeprefix("/v3/conversations/").partition("/members/")
                    server._record("GET", unquote(conversation), unquote(member), None)
                    found = server.members.get(unquote(member))
                    self._answer(200, found) if found else self._answer(404, {"error": {"code": "MemberNotFound"}})
                else:
                    self._answer(404, {"error": {"code": "NotFound"}})

            def do_POST(self):
                path = urlparse(self.path).path
                raw = self._body()
                if path == "/token":
                    fields = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                    if (
                        fields.get("grant_type") != "client_credentials"
                        or fields.get("client_id") != server.app_id
                        or fields.get("client_secret") != server.app_password
                    ):
                        self._answer(401, {"error": "invalid_client"})
                        return
                    token = secrets.token_urlsafe(24)
                    server.tokens_issued.add(token)
                    self._answer(200, {"token_type": "Bearer", "expires_in": 3599, "access_token": token})
                    return
                self._connector("POST", path, raw)

            def do_PUT(self):
                self._connector("PUT", urlparse(self.path).path, self._body())

            def _connector(self, method: str, path: str, raw: bytes) -> None:
                if not path.startswith("/v3/conversations/") or "/activities" not in path:
                    self._answer(404, {"error": {"code": "NotFound"}})
                    return
                if not server._authorized(self.headers.get("Authorization")):
                    self._answer(401, {"message": "Authorization has been denied for this request."})
                    return
                if method == "POST" and server.rate_limit_next > 0:
                    server.rate_limit_next -= 1
                    self._answer(429, {"error": {"code": "TooManyRequests"}}, {"Retry-After": "1"})
                    return
                conversation, _, rest = path.removeprefix("/v3/conversations/").partition("/activities")
                activity_id = unquote(rest.strip("/"))
                body = json.loads(raw or b"{}")
                new_id = activity_id if method == "PUT" else f"1{next(server._ids):012d}"
                server._record(method, unquote(conversation), activity_id, body, new_id)
                self._answer(200 if method == "PUT" else 201, {"id": new_id})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # --- what the Bot Framework signs ------------------------------------------------------------------------
    def public_jwk(self) -> dict:
        numbers = self.key.public_key().public_numbers()
        return {"kty": "RSA", "use": "sig", "kid": KEY_ID, "n": _b64(numbers.n), "e": _b64(numbers.e), "alg": "RS256"}

    def token_for(
        self,
        *,
        audience: str | None = None,
        issuer: str = ISSUER,
        expires_in: float = 3600,
        service_url: str | None = None,
        key=None,
        key_id: str = KEY_ID,
    ) -> str:
        """A token as the Bot Framework puts on an activity (signed with this server's key unless `key` is given)."""
        now = int(time.time())
        claims = {
            "iss": issuer,
            "aud": audience or self.app_id,
            "iat": now - 10,
            "nbf": now - 10,
            "exp": int(now + expires_in),
            "serviceUrl": service_url or self.url,
        }
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers={"kid": key_id})

    def signed_headers(self, **token_fields) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token_for(**token_fields)}", "Content-Type": "application/json"}

    # --- recording ---------------------------------------------------------------------------------------------
    def _authorized(self, header: str | None) -> bool:
        scheme, _, token = (header or "").partition(" ")
        return scheme == "Bearer" and token in self.tokens_issued

    def _record(self, method: str, conversation: str, activity_id: str, body, new_id: str | None = None) -> None:
        with self._changed:
            self.calls.append(
                {
                    "method": method,
                    "conversation": conversation,
                    "activity_id": activity_id,
                    "body": body,
                    "_id": new_id,
                    "_arrived": time.perf_counter(),
                }
            )
            self._changed.notify_all()

    def posts(self, conversation: str | None = None) -> list[dict]:
        with self._changed:
            return [
                c
                for c in self.calls
                if c["method"] == "POST" and (conversation is None or c["conversation"] == conversation)
            ]

    def updates(self) -> list[dict]:
        with self._changed:
            return [c for c in self.calls if c["method"] == "PUT"]

    def wait_for(self, count: int, *, conversation: str | None = None, method: str = "POST", timeout_s: float = 180):
        """The first `count` calls of `method` (in `conversation`), once that many were made."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while True:
                calls = [
                    c
                    for c in self.calls
                    if c["method"] == method and (conversation is None or c["conversation"] == conversation)
                ]
                if len(calls) >= count:
                    return calls
                left = deadline - time.monotonic()
                assert left > 0, f"only {len(calls)} {method} call(s) of {count} in {conversation}: {self.calls}"
                self._changed.wait(left)

    def __enter__(self) -> BotFrameworkServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def message_activity(
    *,
    activity_id: str,
    conversation: str,
    text: str = "",
    user: str = "29:alice",
    aad: str = "aad-alice",
    name: str = "Alice",
    conversation_type: str = "personal",
    service_url: str,
    mention_bot: bool = False,
    value: dict | None = None,
    reply_to: str | None = None,
    bot_id: str = "28:deskmate",
    team: dict | None = None,
    role: str | None = None,
) -> dict:
    """A message activity as Teams sends it (a mention as `<at>` text plus a mention entity)."""
    sender: dict = {"id": user, "name": name, "aadObjectId": aad}
    if role:
        sender["role"] = role
    activity: dict = {
        "type": "message",
        "id": activity_id,
        "timestamp": "2026-11-27T10:00:00.000Z",
        "serviceUrl": service_url,
        "channelId": "msteams",
        "from": sender,
        "conversation": {"id": conversation, "conversationType": conversation_type, "tenantId": "tenant-1"},
        "recipient": {"id": bot_id, "name": "deskmate"},
        "text": f"<at>deskmate</at> {text}" if mention_bot else text,
        "textFormat": "plain",
        "channelData": {"tenant": {"id": "tenant-1"}, **({"team": team} if team else {})},
    }
    if mention_bot:
        activity["entities"] = [
            {"type": "mention", "mentioned": {"id": bot_id, "name": "deskmate"}, "text": "<at>deskmate</at>"}
        ]
    if value is not None:
        activity["value"] = value
        activity["text"] = ""
    if reply_to:
        activity["replyToId"] = reply_to
    return activity
