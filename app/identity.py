"""Who is calling: a signed user header from the deploying portal, and the admin key.

The portal that embeds deskmate (intranet, Slack bridge, service desk) already knows who its user is.
It signs that with the secret it shares with deskmate (DESKMATE_USER_TOKEN_SECRET) as a short-lived
HS256 JWT and sends it as `X-Deskmate-User`:

    {"sub": "alice", "groups": ["finance", "it-staff"], "exp": <unix time>}

`sub` is the caller's id (sessions, tickets and traces belong to it); `groups` decide which
restricted documents retrieval may use. Without a secret (development only) every caller is
anonymous: a conversation is then reachable by its random session id alone, as before sign-in existed.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from core.errors import InvalidFilter
from core.filters import normalise_values

USER_HEADER = "X-Deskmate-User"
ANONYMOUS = "anonymous"
MAX_TOKEN_CHARS = 4096
_USER_ID = re.compile(r"^[A-Za-z0-9._:@+\-]{1,128}$")


class IdentityError(ValueError):
    """The user header is missing, malformed, forged or expired (→ 401 with this message)."""


@dataclass(frozen=True)
class Caller:
    user_id: str = ANONYMOUS
    groups: frozenset[str] = field(default_factory=frozenset)
    signed_in: bool = False


ANONYMOUS_CALLER = Caller()


def make_user_token(
    secret: str,
    user_id: str,
    groups: tuple[str, ...] | list[str] = (),
    *,
    ttl_s: float = 3600,
    now: float | None = None,
) -> str:
    """What the portal sends (also `deskmate user-token`, and the tests)."""
    issued = int(now if now is not None else time.time())
    claims = {"sub": user_id, "iat": issued, "exp": issued + int(ttl_s)}
    if groups:
        claims["groups"] = list(groups)
    import jwt  # (here: only deployments with sign-in read tokens; its cryptography import costs every start)

    return jwt.encode(claims, secret, algorithm="HS256")


def _days(seconds: float) -> str:
    days = round(seconds / 86400, 1)
    return f"{days:,g} day" + ("" if days == 1 else "s")


def verify_user_token(token: str, secret: str, *, leeway_s: float = 30, max_ttl_s: float | None = None) -> Caller:
    """The caller a token names, or IdentityError saying what is wrong with it (`max_ttl_s`: the longest
    lifetime, from now to its `exp`, a token may claim)."""
    token = token.strip()
    if token.lower().startswith("bearer "):
        token = token[7:].strip()
    if not token or len(token) > MAX_TOKEN_CHARS:
        raise IdentityError(f"{USER_HEADER} is empty or longer than {MAX_TOKEN_CHARS} characters.")
    import jwt

    try:
        claims = jwt.decode(token, secret, algorithms=["HS256"], leeway=leeway_s, options={"require": ["sub", "exp"]})
    except jwt.ExpiredSignatureError:
        raise IdentityError(f"{USER_HEADER} has expired; the portal must sign a fresh one.") from None
    except jwt.MissingRequiredClaimError as exc:
        raise IdentityError(f"{USER_HEADER} lacks the '{exc.claim}' claim (needs sub and exp).") from None
    except (jwt.DecodeError, jwt.InvalidAlgorithmError):  # not a token, not ours, or a forged signature
        raise IdentityError(
            f"{USER_HEADER} is not a valid HS256 token signed with DESKMATE_USER_TOKEN_SECRET."
        ) from None
    except jwt.InvalidTokenError as exc:  # signed by the portal, but a claim is malformed: say which
        raise IdentityError(
            f"{USER_HEADER} is signed correctly but a claim is invalid: {exc} "
            "(sub must be a string, exp and iat whole seconds)."
        ) from None
    expires = claims["exp"]
    if isinstance(expires, bool) or not isinstance(expires, (int, float)):  # PyJWT accepts "1700000000" too
        raise IdentityError(
            f"{USER_HEADER} is signed correctly but its 'exp' claim is a {type(expires).__name__}, "
            "not a number of seconds (sub must be a string, exp and iat whole seconds)."
        )
    if max_ttl_s is not None and expires - time.time() > max_ttl_s + leeway_s:
        raise IdentityError(
            f"{USER_HEADER} claims to be valid for {_days(expires - time.time())}; deskmate "
            f"accepts at most {_days(max_ttl_s)} (DESKMATE_USER_TOKEN_MAX_TTL_S). Have the portal "
            "sign shorter-lived tokens."
        )
    user_id = claims.get("sub")
    if not isinstance(user_id, str) or not _USER_ID.fullmatch(user_id) or user_id.lower() == ANONYMOUS:
        raise IdentityError(
            f"{USER_HEADER}'s 'sub' must be a user id of 1–128 letters, digits or ._:@+- (and not '{ANONYMOUS}')."
        )
    raw_groups = claims.get("groups") or []
    try:
        groups = normalise_values("groups", raw_groups)
    except InvalidFilter as exc:
        raise IdentityError(f"{USER_HEADER}'s 'groups' claim is invalid: {exc}") from None
    return Caller(user_id=user_id, groups=frozenset(groups), signed_in=True)
