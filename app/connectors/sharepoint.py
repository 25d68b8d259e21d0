"""SharePoint Online / OneDrive for Business document libraries through Microsoft Graph.

- app-only token by the OAuth 2.0 client-credentials grant (`POST {authority}/{tenant}/oauth2/v2.0/token`,
  scope `https://graph.microsoft.com/.default`), renewed before it expires;
- the library: `GET /v1.0/sites/{host}:/{site-path}` then `GET /v1.0/sites/{site-id}/drives` (by name);
- changes: `GET /v1.0/drives/{drive-id}/root/delta`, following `@odata.nextLink` to the `@odata.deltaLink`,
  which is the cursor of the next sync; items with a `deleted` facet are the deletions; a move shows up
  as the same item at a new `webUrl`;
- a file: `GET /v1.0/drives/{drive-id}/items/{id}/content` answers 302 to a pre-authenticated download URL,
  which is fetched *without* the bearer token; the bytes go through the upload parsers (Word, PowerPoint,
  Excel, PDF, HTML, Markdown, text) in the parse sandbox;
- permissions: `GET /v1.0/drives/{drive-id}/items/{id}/permissions`: groups and SharePoint site groups granted
  access become the audience (through `group_map`; a group mapped to "*" means everyone), users `user:<id>`.
"""

from __future__ import annotations

import time
from pathlib import PurePosixPath
from urllib.parse import quote, urlsplit

import httpx

from app.adapters.parsers import SUPPORTED_EXTENSIONS
from app.connectors.base import ChangeSet, Connector, ConnectorAuthError, ConnectorError, DocumentRef, RemoteDocument
from app.connectors.http import SourceHttp

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_DELTA_PAGES = 10_000
EVERYONE = "*"


class GraphToken(httpx.Auth):
    """Client-credentials bearer token for Graph, fetched on first use and renewed a minute before expiry."""

    def __init__(self, token_url: str, client_id: str, client_secret: str, *, timeout_s: float = 20.0) -> None:
        self.token_url, self.client_id, self._secret = token_url, client_id, client_secret
        self.timeout_s = timeout_s
        self._token: str | None = None
        self._expires = 0.0

    def _renew(self) -> str:
        try:
            response = httpx.post(
                self.token_url,
                timeout=self.timeout_s,
                data={
                    "client_id": self.client_id,
                    "client_secret": self._secret,
                    "grant_type": "client_credentials",
                    "scope": "https://graph.microsoft.com/.default",
                },
            )
        except httpx.HTTPError as exc:
            raise ConnectorError(
                f"The Microsoft identity platform could not be reached ({type(exc).__name__})."
            ) from exc
        if response.status_code != 200:
            code = ""
            try:
                code = response.json().get("error", "")
            except ValueError:
                pass
            raise ConnectorAuthError(
                f"Microsoft refused the app's client credentials (HTTP {response.status_code}"
                f"{', ' + code if code else ''}); check the client id and secret variables "
                "and the app's Sites.Read.All permission.",
                status=response.status_code,
            )
        body = response.json()
        self._token = body["access_token"]
        self._expires = time.monotonic() + float(body.get("expires_in", 3600)) - 60
        return self._token

    def auth_flow(self, request: httpx.Request):
        if self._token is None or time.monotonic() >= self._expires:
            self._renew()
        request.headers["Authorization"] = f"Bearer {self._token}"
        yield request


class SharePointConnector(Connector):
    kind = "sharepoint"

    def __init__(
        self,
        http: SourceHttp,
        *,
        site: str,
        library: str = "Documents",
        group_map: dict[str, str] | None = None,
        download: httpx.Client | None = None,
    ) -> None:
        if ":/" not in site and "," not in site:
            raise ConnectorError(
                "A SharePoint source's site is '<host>:/sites/<name>' (e.g. contoso.sharepoint.com:/sites/IT)."
            )
        self.http, self.site, self.library = http, site, library
        self.group_map = {k.lower(): v for k, v in (group_map or {}).items()}
        self._download = download or httpx.Client(timeout=60.0, follow_redirects=False)
        self._drive: str | None = None
        self._items: dict[str, dict] = {}  # id → driveItem from this sync's delta
        self._deleted: set[str] = set()

    def _drive_id(self) -> str:
        if self._drive is None:
            site = self.http.json(f"/v1.0/sites/{quote(self.site, safe=':/,')}")
            drives = self.http.json(f"/v1.0/sites/{site['id']}/drives").get("value", [])
            match = next((d for d in drives if d.get("name", "").lower() == self.library.lower()), None)
            if match is None:
                names = ", ".join(d.get("name", "?") for d in drives) or "none"
                raise ConnectorError(f"The site has no document library named '{self.library}' (it has: {names}).")
            self._drive = match["id"]
        return self._drive

    def list_changed(self, cursor: str | None) -> ChangeSet:
        url: str | None = cursor or f"/v1.0/drives/{self._drive_id()}/root/delta"
        delta_link = None
        for _ in range(MAX_DELTA_PAGES):
            if url is None:
                break
            body = self.http.json(url)
            for item in body.get("value", []):
                if not isinstance(item, dict) or "id" not in item:
                    continue
                if "deleted" in item:
                    self._deleted.add(item["id"])
                    self._items.pop(item["id"], None)
                elif "file" in item and PurePosixPath(item.get("name", "").lower()).suffix in SUPPORTED_EXTENSIONS:
                    self._items[item["id"]] = item
                    self._deleted.discard(item["id"])
            url, delta_link = body.get("@odata.nextLink"), body.get("@odata.deltaLink") or delta_link
        if delta_link is None:
            raise ConnectorError("Microsoft Graph ended a delta query without a deltaLink; the next sync starts over.")
        refs = [
            DocumentRef(i["id"], f"{i.get('cTag') or i.get('eTag')}|{i.get('webUrl', '')}", i.get("name", ""))
            for i in self._items.values()
            if int(i.get("size") or 0) <= MAX_FILE_BYTES
        ]
        return ChangeSet(changed=refs, cursor=delta_link)

    def list_deleted(self, known: set[str]) -> set[str]:
        return known & self._deleted

    def fetch(self, ref: DocumentRef) -> RemoteDocument:
        drive = self._drive_id()
        item = self._items.get(ref.external_id) or self.http.json(f"/v1.0/drives/{drive}/items/{ref.external_id}")
        response = self.http.get(f"/v1.0/drives/{drive}/items/{ref.external_id}/content", accept_statuses=(302,))
        if response.status_code == 302:
            location = response.headers.get("location", "")
            if urlsplit(location).scheme not in ("https", "http"):
                raise ConnectorError(
                    f"Microsoft Graph redirected the download of {item.get('name')} to an unusable URL."
                )
            response = self._download.get(location)  # pre-authenticated: the bearer token is not sent there
            if response.status_code != 200:
                raise ConnectorError(f"Downloading {item.get('name')} failed (HTTP {response.status_code}).")
        data = response.content
        return RemoteDocument(
            external_id=ref.external_id,
            version=ref.version,
            title=item.get("name", ""),
            url=item.get("webUrl") or "",
            filename=item.get("name") or f"{ref.external_id}.bin",
            data=data,
            permissions={"grants": self._grants(ref.external_id)},
        )

    def _grants(self, item_id: str) -> list[str]:
        body = self.http.json(f"/v1.0/drives/{self._drive_id()}/items/{item_id}/permissions")
        grants: list[str] = []
        for permission in body.get("value", []):
            if not isinstance(permission, dict) or not set(permission.get("roles") or []) & {"read", "write", "owner"}:
                continue
            identities = [permission.get("grantedToV2") or {}] + list(permission.get("grantedToIdentitiesV2") or [])
            for identity in identities:
                for kind in ("group", "siteGroup"):
                    if (identity.get(kind) or {}).get("displayName"):
                        grants.append(identity[kind]["displayName"])
                user = identity.get("user") or {}
                if user.get("id") or user.get("email"):
                    grants.append(f"user:{user.get('email') or user.get('id')}")
        return sorted(set(grants))

    def _audience_of(self, grants: list[str]) -> list[str]:
        audience = set()
        for grant in grants:
            mapped = self.group_map.get(grant.lower(), grant)
            if mapped == EVERYONE:
                return []
            audience.add(mapped.lower())
        return sorted(audience)

    def audience(self, document: RemoteDocument) -> list[str]:
        return self._audience_of(document.permissions.get("grants", []))

    def current_audience(self, external_id: str) -> list[str] | None:
        return self._audience_of(self._grants(external_id))

    def close(self) -> None:
        self.http.close()
        self._download.close()
