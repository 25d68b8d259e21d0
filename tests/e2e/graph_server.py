"""Microsoft Graph and the identity platform on 127.0.0.1, in the documented shapes, for SharePoint tests.

- `POST /{tenant}/oauth2/v2.0/token` (client-credentials grant; `invalid_client` 401 on a wrong secret);
- `GET /v1.0/sites/{host}:/{path}`, `GET /v1.0/sites/{id}/drives` (`value` lists);
- `GET /v1.0/drives/{id}/root/delta` with `@odata.nextLink` paging and a final `@odata.deltaLink`; changes
  after a delta token only; removed items as `{"id", "deleted": {"state": "deleted"}}`;
- `GET /v1.0/drives/{id}/items/{item}/content` → 302 to a pre-authenticated `/download/…` URL;
- `GET /v1.0/drives/{id}/items/{item}/permissions` (`grantedToV2` with `siteGroup`, `group` or `user`);
- 401 `InvalidAuthenticationToken` without a valid bearer token; 429 with Retry-After when told to.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

from tests.e2e.servers import FakeVendor, VendorHandler

PAGE_SIZE = 2


@dataclass
class Item:
    id: str
    name: str
    data: bytes
    seq: int
    grants: list[dict] = field(default_factory=list)  # permission grantedToV2 payloads
    folder: str = "Shared Documents"

    @property
    def ctag(self) -> str:
        return '"c:{' + hashlib.sha256(self.data).hexdigest()[:8] + '},1"'


class FakeGraph(FakeVendor):
    def __init__(self, *, tenant: str, client_id: str, client_secret: str) -> None:
        self.tenant, self.client_id, self.client_secret = tenant, client_id, client_secret
        self.site_id = (
            "contoso.sharepoint.com,2C712604-1370-44E7-A1F5-426573FDA80A,2D2244C3-251A-49EA-93A8-39E1C3A060FE"
        )
        self.drive_id = "b!BCZxLHATTdn"
        self.items: dict[str, Item] = {}
        self.tombstones: dict[str, int] = {}  # id → seq of its deletion
        self.seq = 0
        self.tokens: set[str] = set()
        self.requests: list[tuple[str, str]] = []  # (path, Authorization header)
        self.throttle_next = 0
        self._lock = threading.Lock()
        self._serve()

    # --- what happens in the library ----------------------------------------------------------------
    def put(self, item_id: str, name: str, data: bytes, *, grants: list[dict] | None = None) -> None:
        self.seq += 1
        old = self.items.get(item_id)
        self.items[item_id] = Item(
            item_id,
            name,
            data,
            self.seq,
            grants if grants is not None else (old.grants if old else [site_group("Contoso Members")]),
        )

    def delete(self, item_id: str) -> None:
        self.seq += 1
        del self.items[item_id]
        self.tombstones[item_id] = self.seq

    def share_only_with(self, item_id: str, *grants: dict) -> None:
        self.items[item_id].grants = list(grants)  # a permission change is not a content change

    # --- HTTP ---------------------------------------------------------------------------------------
    def _handler(self):
        graph = self

        class Handler(VendorHandler):
            def do_POST(self) -> None:
                graph.requests.append((self.path, self.headers.get("Authorization", "")))
                form = {
                    k: v[-1]
                    for k, v in parse_qs(self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()).items()
                }
                if self.path != f"/{graph.tenant}/oauth2/v2.0/token" or form.get("grant_type") != "client_credentials":
                    return self._send(400, {"error": "invalid_request"})
                if form.get("client_id") != graph.client_id or form.get("client_secret") != graph.client_secret:
                    return self._send(
                        401,
                        {
                            "error": "invalid_client",
                            "error_description": "AADSTS7000215: Invalid client secret provided.",
                        },
                    )
                token = secrets.token_urlsafe(24)
                graph.tokens.add(token)
                self._send(200, {"token_type": "Bearer", "expires_in": 3599, "access_token": token})

            def do_GET(self) -> None:
                graph.requests.append((self.path, self.headers.get("Authorization", "")))
                parts = urlsplit(self.path)
                if parts.path.startswith("/download/"):  # pre-authenticated: no token expected
                    item = graph.items.get(parts.path.rsplit("/", 1)[-1])
                    return self._send(200, item.data) if item else self._send(404, {"error": {"code": "itemNotFound"}})
                with graph._lock:
                    throttled = graph.throttle_next > 0
                    graph.throttle_next -= 1 if throttled else 0
                if throttled:
                    return self._send(
                        429, {"error": {"code": "TooManyRequests", "message": "Please retry."}}, {"Retry-After": "0"}
                    )
                scheme, _, token = self.headers.get("Authorization", "").partition(" ")
                if scheme != "Bearer" or token not in graph.tokens:
                    return self._send(
                        401, {"error": {"code": "InvalidAuthenticationToken", "message": "Access token is empty."}}
                    )
                status, body, headers = graph.route(
                    unquote(parts.path), {k: v[-1] for k, v in parse_qs(parts.query).items()}
                )
                self._send(status, body, headers)

        return Handler

    def route(self, path: str, query: dict) -> tuple[int, dict, dict]:
        if path == "/v1.0/sites/contoso.sharepoint.com:/sites/IT":
            return 200, {"id": self.site_id, "name": "IT", "webUrl": "https://contoso.sharepoint.com/sites/IT"}, {}
        if path == f"/v1.0/sites/{self.site_id}/drives":
            return (
                200,
                {
                    "value": [
                        {
                            "id": self.drive_id,
                            "name": "Documents",
                            "driveType": "documentLibrary",
                            "webUrl": "https://contoso.sharepoint.com/sites/IT/Shared%20Documents",
                        }
                    ]
                },
                {},
            )
        drive = f"/v1.0/drives/{self.drive_id}"
        if path == f"{drive}/root/delta":
            return self._delta(query)
        if path.startswith(f"{drive}/items/"):
            rest = path[len(f"{drive}/items/") :].split("/")
            item = self.items.get(rest[0])
            if item is None:
                return 404, {"error": {"code": "itemNotFound", "message": "The resource could not be found."}}, {}
            if rest[1:] == ["content"]:
                return 302, {}, {"Location": f"{self.url}/download/{secrets.token_hex(8)}/{item.id}"}
            if rest[1:] == ["permissions"]:
                return (
                    200,
                    {
                        "value": [
                            {"id": f"p{i}", "roles": ["read"], "grantedToV2": g} for i, g in enumerate(item.grants)
                        ]
                    },
                    {},
                )
            if not rest[1:]:
                return 200, self._json(item), {}
        return 404, {"error": {"code": "itemNotFound", "message": "The resource could not be found."}}, {}

    def _json(self, item: Item) -> dict:
        return {
            "id": item.id,
            "name": item.name,
            "eTag": f'"{{{item.id}}},{item.seq}"',
            "cTag": item.ctag,
            "size": len(item.data),
            "lastModifiedDateTime": "2026-11-25T10:00:00Z",
            "webUrl": f"https://contoso.sharepoint.com/sites/IT/{item.folder.replace(' ', '%20')}/{item.name}",
            "file": {"mimeType": "application/octet-stream"},
            "parentReference": {"driveId": self.drive_id, "path": f"/drive/root:/{item.folder}"},
        }

    def _delta(self, query: dict) -> tuple[int, dict, dict]:
        since = int(query.get("token", 0))
        changes = sorted(
            [(i.seq, self._json(i)) for i in self.items.values() if i.seq > since]
            + [
                (seq, {"id": item_id, "deleted": {"state": "deleted"}})
                for item_id, seq in self.tombstones.items()
                if seq > since
            ],
            key=lambda c: c[0],
        )
        start = int(query.get("skip", 0))
        page = [c for _, c in changes[start : start + PAGE_SIZE]]
        base = f"{self.url}/v1.0/drives/{self.drive_id}/root/delta"
        if start + PAGE_SIZE < len(changes):
            return 200, {"value": page, "@odata.nextLink": f"{base}?token={since}&skip={start + PAGE_SIZE}"}, {}
        return 200, {"value": page, "@odata.deltaLink": f"{base}?token={self.seq}"}, {}


def site_group(name: str) -> dict:
    return {"siteGroup": {"displayName": name, "id": "3", "loginName": name}}


def aad_group(name: str) -> dict:
    return {"group": {"displayName": name, "id": hashlib.sha256(name.encode()).hexdigest()[:12]}}
