"""The Bot Framework's two tokens: the one on every incoming activity (checked here) and deskmate's own for the
Bot Connector (asked of the token endpoint with the app id and secret).

The Agents SDK's `JwtTokenValidator` takes its signing keys from a fixed table of Bot Framework key addresses and
checks the issuer only when told to; deskmate reads the issuer and the key address from the OpenID metadata
document at a configurable URL instead (`DESKMATE_TEAMS_OPENID_METADATA_URL`), and always checks the issuer, the
audience, the expiry and the `serviceUrl` claim. PyJWT (which the SDK uses too) does the signature check.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

import httpx
import jwt

log = logging.getLogger(__name__)

METADATA_TTL_S = 24 * 3600  # the Bot Framework rotates keys rarely; the key set is re-read for an unknown key id
CLOCK_SKEW_S = 300  # the Bot Framework's documented allowance
KEY_REFRESH_S = 60  # an unknown key id re-reads the key set at most this often (forged ids cause no flood)
CONNECTOR_SCOPE = "https://api.botframework.com/.default"
TOKEN_MARGIN_S = 300  # a connector token is renewed this long before it expires
HTTP_TIMEOUT_S = 10.0


class TokenRejected(Exception):
    """The incoming activity's token is missing, forged, expired, for another bot or from another service."""


@dataclass(frozen=True)
class _Metadata:
    issuer: str
    jwks_uri: str
    fetched_at: float


class ActivityTokenValidator:
    """Checks the bearer token the Bot Framework sends with each activity."""

    def __init__(self, app_id: str, metadata_url: str, http: httpx.Client) -> None:
        self.app_id, self.metadata_url, self.http = app_id, metadata_url, http
        self._metadata: _Metadata | None = None
        self._keys: jwt.PyJWKClient | None = None
        self._keys_read_at = float("-inf")
        self._lock = threading.Lock()

    def _current(self) -> tuple[_Metadata, jwt.PyJWKClient]:
        with self._lock:
            if self._metadata is None or time.time() - self._metadata.fetched_at > METADATA_TTL_S:
                document = self.http.get(self.metadata_url, timeout=HTTP_TIMEOUT_S)
                document.raise_for_status()
                fields = document.json()
                metadata = _Metadata(str(fields["issuer"]), str(fields["jwks_uri"]), time.time())
                if self._keys is None or self._metadata is None or metadata.jwks_uri != self._metadata.jwks_uri:
                    self._keys = jwt.PyJWKClient(metadata.jwks_uri, cache_keys=True, timeout=int(HTTP_TIMEOUT_S))
                self._metadata = metadata
            assert self._keys is not None
            return self._metadata, self._keys

    def validate(self, authorization: str | None, service_url: str | None) -> dict:
        """The token's claims; TokenRejected when it is not a valid Bot Framework token for this bot and this
        activity's service URL."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise TokenRejected("no bearer token")
        try:
            metadata, keys = self._current()
        except (httpx.HTTPError, KeyError, ValueError) as exc:  # cannot check: refuse (the Bot Framework retries)
            log.warning("teams: the OpenID metadata at %s could not be read: %s", self.metadata_url, exc)
            raise TokenRejected("signing keys unavailable") from exc
        try:
            key = self._signing_key(keys, jwt.get_unverified_header(token.strip()).get("kid"))
            claims = jwt.decode(
                token.strip(),
                key=key.key,
                algorithms=["RS256"],
                audience=self.app_id,
                issuer=metadata.issuer,
                leeway=CLOCK_SKEW_S,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:
            raise TokenRejected(type(exc).__name__) from exc
        except (httpx.HTTPError, OSError) as exc:
            raise TokenRejected("signing keys unavailable") from exc
        if claims.get("serviceUrl") and service_url and claims["serviceUrl"].rstrip("/") != service_url.rstrip("/"):
            raise TokenRejected("the token was issued for another service URL")
        return claims

    def _signing_key(self, keys: jwt.PyJWKClient, key_id: str | None) -> jwt.PyJWK:
        """The key `key_id` names; the key set is read again for an unknown id, but not more than once a minute."""
        if not key_id:
            raise jwt.InvalidTokenError("the token names no signing key")
        for refresh in (False, True):
            if refresh:
                with self._lock:
                    if time.monotonic() - self._keys_read_at < KEY_REFRESH_S:
                        break
                    self._keys_read_at = time.monotonic()
            for key in keys.get_signing_keys(refresh=refresh):
                if key.key_id == key_id:
                    return key
        raise jwt.InvalidTokenError("the token's signing key is not one of the Bot Framework's")


class ConnectorTokens:
    """deskmate's bearer token for the Bot Connector (OAuth client credentials), cached until shortly before it
    expires."""

    def __init__(self, token_url: str, app_id: str, app_password: str, http: httpx.Client) -> None:
        self.token_url, self.app_id, self.app_password, self.http = token_url, app_id, app_password, http
        self._token: tuple[str, float] | None = None
        self._lock = threading.Lock()

    def token(self) -> str:
        with self._lock:
            if self._token is not None and self._token[1] > time.time():
                return self._token[0]
            response = self.http.post(
                self.token_url,
                data={
                    "grant_type": "client_credentials",
                    "client_id": self.app_id,
                    "client_secret": self.app_password,
                    "scope": CONNECTOR_SCOPE,
                },
                timeout=HTTP_TIMEOUT_S,
            )
            response.raise_for_status()
            fields = response.json()
            lifetime = float(fields.get("expires_in") or 3600)
            self._token = (str(fields["access_token"]), time.time() + max(lifetime - TOKEN_MARGIN_S, lifetime / 2))
            return self._token[0]
