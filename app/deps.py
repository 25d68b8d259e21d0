"""FastAPI dependencies: the resources built by the lifespan."""

from __future__ import annotations

import hmac
import ipaddress

from fastapi import HTTPException, Request

from app.identity import ANONYMOUS_CALLER, USER_HEADER, Caller, IdentityError, verify_user_token
from app.resources import Resources


def get_resources(request: Request) -> Resources:
    resources = getattr(request.app.state, "resources", None)
    if resources is None:
        raise HTTPException(status_code=503, detail="deskmate is still starting up; try again in a few seconds.")
    return resources


def _is_loopback(host: str) -> bool:
    if host in ("testclient", "localhost"):  # Starlette's TestClient; a name only a local client can have
        return True
    try:
        address = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return address.is_loopback or bool(mapped and mapped.is_loopback)


def require_admin(request: Request) -> None:
    """Admin access, in one place: with DESKMATE_ADMIN_KEY set, the request must carry
    `Authorization: Bearer <key>`; without it (development mode only), only clients on this machine are admins.

    Behind a reverse proxy every client looks local: set DESKMATE_ADMIN_KEY there.
    """
    key = request.app.state.settings.security.admin_key
    if key is not None:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            token.strip().encode(), key.get_secret_value().encode()
        ):
            raise HTTPException(
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
                detail="This needs the admin key: send 'Authorization: Bearer <DESKMATE_ADMIN_KEY>'.",
            )
        return
    host = request.client.host if request.client else ""
    if not _is_loopback(host):
        raise HTTPException(
            status_code=403,
            detail="Admin pages are open only on this machine while "
            "DESKMATE_ADMIN_KEY is not set; set it to administer deskmate "
            "from elsewhere (sent as 'Authorization: Bearer <key>').",
        )


def admin_key_required(request: Request) -> bool:
    """Whether admin requests must carry the admin key (the admin page then asks for it)."""
    return request.app.state.settings.security.admin_key is not None


def is_admin(request: Request) -> bool:
    """Whether this request would pass `require_admin` (admins may read every caller's tickets and traces)."""
    try:
        require_admin(request)
    except HTTPException:
        return False
    return True


def current_caller(request: Request) -> Caller:
    """The signed-in caller from `X-Deskmate-User`, or the anonymous caller when sign-in is off.

    With DESKMATE_USER_TOKEN_SECRET set a request without a valid header is refused (401); without it a
    header is refused too, since deskmate could not tell a forged one from a real one.
    """
    secret = request.app.state.settings.security.user_token_secret
    header = request.headers.get(USER_HEADER)
    if secret is None:
        if header:
            raise HTTPException(
                status_code=401,
                detail=f"deskmate cannot check {USER_HEADER}: sign-in is off "
                "(DESKMATE_USER_TOKEN_SECRET is not set). Set it to the "
                "portal's signing secret, or stop sending the header.",
            )
        return ANONYMOUS_CALLER
    if not header:
        raise HTTPException(
            status_code=401,
            detail=f"Sign in first: send {USER_HEADER}: <token>, an HS256 JWT "
            "with sub and exp signed by your portal with "
            "DESKMATE_USER_TOKEN_SECRET.",
        )
    try:
        return verify_user_token(
            header, secret.get_secret_value(), max_ttl_s=request.app.state.settings.security.user_token_max_ttl_s
        )
    except IdentityError as exc:
        raise HTTPException(status_code=401, detail=str(exc)) from None


def reader(request: Request) -> Caller | None:
    """Who reads a session, ticket or document by id: None for an admin (anyone's), else the caller — checked
    before anything is looked up, so a caller without a valid sign-in gets the same 401 whether the id exists
    or not (not 401 for ids that exist and 404 for the rest)."""
    return None if is_admin(request) else current_caller(request)
