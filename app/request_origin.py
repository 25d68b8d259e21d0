"""Which requests a browser page on another site may make: none that change anything, and none at all under a
host name deskmate was not configured for.

Two checks, before any handler runs:

- **Host**: the `Host` header must name this server (DESKMATE_ALLOWED_HOSTS; by default the bind address,
  `localhost`, `127.0.0.1` and `::1`). A page on attacker.example whose name is re-pointed at 127.0.0.1 (DNS
  rebinding) sends `Host: attacker.example` and is refused with 400, so it cannot read answers from a local
  server. Bound to every interface (0.0.0.0) with no names configured, any `Host` is accepted: the names a
  network uses cannot be guessed, so set DESKMATE_ALLOWED_HOSTS there.
- **Origin**: a state-changing request (POST, PUT, PATCH, DELETE) that a browser sent from another origin is
  refused with 403, unless it carries a credential a page on another site cannot send without deskmate's
  consent (`Authorization`, the signed user header: both make a browser ask first, and deskmate never says
  yes). A browser names the page's origin in `Origin` (or, failing that, `Referer`); a request with neither
  comes from a program (curl, the CLI, a Slack bridge), not a page, and passes. This is what keeps the
  loopback trust of development mode (no admin key: local clients are admins) from being used by any page
  the admin happens to open. Behind a reverse proxy the page's origin is compared with the `Host` the proxy
  passes on (or its `X-Forwarded-Host`, which a page cannot set): pass the original one, port included
  (nginx: `proxy_set_header Host $http_host;`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from app.identity import USER_HEADER

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
_WILDCARD_BINDS = ("0.0.0.0", "::", "")
_CREDENTIAL_HEADERS = (b"authorization", USER_HEADER.lower().encode("latin-1"))


def allowed_hosts(configured: str, bind_host: str) -> frozenset[str] | None:
    """The host names requests may use (lower-case, no port), or None for any: `configured` is a comma-separated
    list (`*` alone: any); empty means the bind address and this machine's own names."""
    names = [n.strip().lower().strip("[]") for n in configured.split(",") if n.strip()]
    if "*" in names:
        return None
    if not names:
        if bind_host.strip().strip("[]") in _WILDCARD_BINDS:
            return None
        names = [bind_host.strip().lower().strip("[]"), *LOCAL_NAMES]
    return frozenset(names)


def host_name(host: str) -> str:
    """`Host` without its port, lower-case (`[::1]:8000` → `::1`)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _netloc(value: str) -> str:
    """host[:port] of a URL, lower-case, without a default port: what `Host` says for the same server."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return ""
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return host if port is None or port == default else f"{host}:{port}"


def _same_origin(page: str, host: str) -> bool:
    request_host = host.strip().lower()
    for default in (":80", ":443"):
        if request_host.endswith(default):
            request_host = request_host[: -len(default)]
    return bool(page) and _netloc(page) == request_host


class RequestOriginMiddleware:
    def __init__(self, app: ASGIApp, *, hosts: frozenset[str] | None) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        host = headers.get(b"host", b"").decode("latin-1")
        if self.hosts is not None and host_name(host) not in self.hosts:
            detail = (
                f"This server does not answer to the host name '{host_name(host)[:100]}'. If that is how people "
                "reach it, add it to DESKMATE_ALLOWED_HOSTS."
            )
            await JSONResponse(status_code=400, content={"detail": detail})(scope, receive, send)
            return
        if scope.get("method", "GET") in UNSAFE_METHODS and not any(h in headers for h in _CREDENTIAL_HEADERS):
            page = headers.get(b"origin", b"").decode("latin-1") or headers.get(b"referer", b"").decode("latin-1")
            forwarded = headers.get(b"x-forwarded-host", b"").decode("latin-1").split(",")[0]
            if page and not _same_origin(page, host) and not (forwarded and _same_origin(page, forwarded)):
                detail = (
                    f"Refused a {scope['method']} sent by a page on another site ({page[:100]}). Use deskmate's own "
                    "pages, or call the API from a program (with the admin key where one is needed)."
                )
                await JSONResponse(status_code=403, content={"detail": detail})(scope, receive, send)
                return
        await self.app(scope, receive, send)
