"""A Confluence Cloud that speaks the documented REST shapes, on 127.0.0.1, for connector tests and the bench.

Built from Atlassian's public reference, not from deskmate's client:
- v2 `GET /wiki/api/v2/spaces?keys=` and `GET /wiki/api/v2/spaces/{id}/pages` (cursor paging: `_links.next`
  and a `Link: <…>; rel="next"` header), `GET /wiki/api/v2/pages/{id}?body-format=storage`;
- v1 `GET /wiki/rest/api/content/search?cql=` (start/limit paging, `_links.next` relative to `/wiki`),
  understanding `type = page`, `space in (…)`/`space = X` and `lastmodified >= "yyyy/MM/dd HH:mm"`;
- v1 `GET /wiki/rest/api/content/{id}/restriction/byOperation/read`, and v2 `GET /wiki/api/v2/pages/{id}/ancestors`
  (top-to-bottom: the highest ancestor first; minimal `{id, type}` items);
- Data Center (`data_center=True`): no v2 and no `/wiki` prefix; `GET /rest/api/space/{key}`,
  `GET /rest/api/content?spaceKey=&type=page` (start/limit paging, `_links.next`),
  `GET /rest/api/content/{id}?expand=body.storage,version,ancestors` (ancestors root first), the same CQL search
  and restrictions (users by `username`/`userKey`), and a personal access token as `Authorization: Bearer`;
- HTTP Basic auth (email + API token): 401 with Confluence's JSON error otherwise;
- `429 Too Many Requests` with `Retry-After` when told to throttle.
Deleted pages are gone (404); trashed pages are listed only with `status=trashed`.
"""

from __future__ import annotations

import base64
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.e2e.servers import FakeVendor, VendorHandler


@dataclass
class Page:
    id: str
    space: str
    title: str
    body: str  # storage format
    version: int = 1
    modified: datetime = field(default_factory=lambda: datetime.now(UTC))
    status: str = "current"
    groups: list[str] = field(default_factory=list)  # read restriction: groups
    users: list[str] = field(default_factory=list)  # read restriction: account ids
    parent: str | None = None  # the page it sits under


class FakeConfluence(FakeVendor):
    def __init__(
        self, *, email: str, token: str, spaces: dict[str, str] | None = None, data_center: bool = False
    ) -> None:
        self.email, self.token = email, token
        self.data_center = data_center
        self.spaces = spaces or {"IT": "98304"}  # key → id
        self.pages: dict[str, Page] = {}
        self.requests: list[str] = []  # paths with query, in order
        self.throttle_next = 0  # answer this many of the next requests with 429
        self.retry_after = "1"
        self.auth_headers: list[str] = []
        self._lock = threading.Lock()
        self._serve()

    # --- what a test does at the source -----------------------------------------------------------
    def add_page(
        self, page_id: str, title: str, body: str, *, space: str = "IT", groups=(), users=(), parent: str | None = None
    ) -> Page:
        page = Page(page_id, space, title, body, groups=list(groups), users=list(users), parent=parent)
        self.pages[page_id] = page
        return page

    def edit_page(self, page_id: str, body: str, *, title: str | None = None) -> None:
        page = self.pages[page_id]
        page.body, page.version, page.modified = body, page.version + 1, datetime.now(UTC)
        if title:
            page.title = title

    def delete_page(self, page_id: str) -> None:
        del self.pages[page_id]

    def restrict(self, page_id: str, *, groups=(), users=()) -> None:
        """Restrictions change without a new page version (as in Confluence)."""
        self.pages[page_id].groups, self.pages[page_id].users = list(groups), list(users)

    def count(self, prefix: str) -> int:
        return sum(1 for r in self.requests if r.startswith(prefix))

    # --- HTTP -------------------------------------------------------------------------------------
    def _handler(self):
        fake = self

        class Handler(VendorHandler):
            def do_GET(self) -> None:
                with fake._lock:
                    fake.requests.append(self.path)
                    fake.auth_headers.append(self.headers.get("Authorization", ""))
                    throttled = fake.throttle_next > 0
                    if throttled:
                        fake.throttle_next -= 1
                if throttled:
                    return self._send(429, {"message": "Rate limit exceeded"}, {"Retry-After": fake.retry_after})
                expected = (
                    f"Bearer {fake.token}"
                    if fake.data_center
                    else "Basic " + base64.b64encode(f"{fake.email}:{fake.token}".encode()).decode()
                )
                if self.headers.get("Authorization") != expected:
                    return self._send(
                        401, {"statusCode": 401, "message": "Client must be authenticated to access this resource."}
                    )
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                try:
                    status, body, headers = fake.route(parts.path, query)
                except KeyError:
                    status, body, headers = 404, {"statusCode": 404, "message": "Not found"}, {}
                self._send(status, body, headers)

        return Handler

    def ancestors(self, page_id: str) -> list[Page]:
        """Root first, the page's parent last."""
        chain, parent = [], self.pages[page_id].parent
        while parent is not None:
            chain.insert(0, self.pages[parent])
            parent = self.pages[parent].parent
        return chain

    def route(self, path: str, query: dict) -> tuple[int, dict, dict]:
        if self.data_center:
            return self._route_data_center(path, query)
        if m := re.fullmatch(r"/wiki/api/v2/pages/(\d+)/ancestors", path):
            chain = self.ancestors(m.group(1))[-min(int(query.get("limit", 25)), 250) :]
            return 200, {"results": [{"id": a.id, "type": "page"} for a in chain], "_links": {}}, {}
        if path == "/wiki/api/v2/spaces":
            keys = query.get("keys", "").split(",")
            return (
                200,
                {
                    "results": [
                        {"id": sid, "key": key, "name": key, "type": "global", "status": "current"}
                        for key, sid in self.spaces.items()
                        if key in keys
                    ],
                    "_links": {},
                },
                {},
            )
        if m := re.fullmatch(r"/wiki/api/v2/spaces/(\d+)/pages", path):
            key = next(k for k, sid in self.spaces.items() if sid == m.group(1))
            status = query.get("status", "current")
            pages = sorted(
                (p for p in self.pages.values() if p.space == key and p.status == status), key=lambda p: int(p.id)
            )
            return self._cursor_page(path, query, [self._page_json(p, body=False) for p in pages])
        if m := re.fullmatch(r"/wiki/api/v2/pages/(\d+)", path):
            page = self.pages[m.group(1)]
            return 200, self._page_json(page, body=query.get("body-format") == "storage"), {}
        if path == "/wiki/rest/api/content/search":
            return self._cql(query)
        if m := re.fullmatch(r"/wiki/rest/api/content/(\d+)/restriction/byOperation/read", path):
            return self._restrictions(self.pages[m.group(1)])
        raise KeyError(path)

    def _route_data_center(self, path: str, query: dict) -> tuple[int, dict, dict]:
        links = {"base": self.url, "context": ""}
        if m := re.fullmatch(r"/rest/api/space/(\w+)", path):
            if m.group(1) not in self.spaces:
                raise KeyError(path)
            return (
                200,
                {
                    "id": int(self.spaces[m.group(1)]),
                    "key": m.group(1),
                    "name": m.group(1),
                    "type": "global",
                    "_links": {"webui": f"/display/{m.group(1)}", **links},
                },
                {},
            )
        if path == "/rest/api/content":
            pages = sorted(
                (
                    p
                    for p in self.pages.values()
                    if p.space == query.get("spaceKey") and p.status == query.get("status", "current")
                ),
                key=lambda p: int(p.id),
            )
            start, limit = int(query.get("start", 0)), min(int(query.get("limit", 25)), 100)
            chunk = pages[start : start + limit]
            body = {
                "results": [self._content_v1(p, query.get("expand", "")) for p in chunk],
                "start": start,
                "limit": limit,
                "size": len(chunk),
                "_links": dict(links),
            }
            if start + limit < len(pages):
                body["_links"]["next"] = "/rest/api/content?" + urlencode({**query, "start": start + limit})
            return 200, body, {}
        if m := re.fullmatch(r"/rest/api/content/(\d+)", path):
            return 200, self._content_v1(self.pages[m.group(1)], query.get("expand", "")), {}
        if path == "/rest/api/content/search":
            return self._cql(query)
        if m := re.fullmatch(r"/rest/api/content/(\d+)/restriction/byOperation/read", path):
            return self._restrictions(self.pages[m.group(1)])
        raise KeyError(path)

    def _content_v1(self, page: Page, expand: str) -> dict:
        item = {
            "id": page.id,
            "type": "page",
            "status": page.status,
            "title": page.title,
            "_links": {"webui": f"/pages/viewpage.action?pageId={page.id}"},
        }
        wanted = set(expand.split(","))
        if "version" in wanted or "body.storage" in wanted:
            item["version"] = {"number": page.version, "when": page.modified.isoformat()}
        if "body.storage" in wanted:
            item["body"] = {"storage": {"value": page.body, "representation": "storage"}}
        if "ancestors" in wanted:
            item["ancestors"] = [
                {"id": a.id, "type": "page", "status": a.status, "title": a.title} for a in self.ancestors(page.id)
            ]
        return item

    def _restrictions(self, page: Page) -> tuple[int, dict, dict]:
        if self.data_center:
            users = [{"type": "known", "username": u, "userKey": f"key-{u}", "displayName": u} for u in page.users]
        else:
            users = [{"type": "known", "accountId": u, "displayName": u} for u in page.users]
        return (
            200,
            {
                "operation": "read",
                "restrictions": {
                    "user": {"results": users, "start": 0, "limit": 200, "size": len(page.users)},
                    "group": {
                        "results": [{"type": "group", "name": g, "id": f"g-{g}"} for g in page.groups],
                        "start": 0,
                        "limit": 200,
                        "size": len(page.groups),
                    },
                },
                "_links": {"base": f"{self.url}/wiki", "context": "/wiki"},
            },
            {},
        )

    def _page_json(self, page: Page, *, body: bool) -> dict:
        item = {
            "id": page.id,
            "status": page.status,
            "title": page.title,
            "spaceId": self.spaces[page.space],
            "parentId": page.parent,
            "authorId": "5b10a2844c20165700ede21g",
            "createdAt": page.modified.isoformat(),
            "version": {"number": page.version, "createdAt": page.modified.isoformat(), "message": ""},
            "_links": {
                "webui": f"/spaces/{page.space}/pages/{page.id}/{page.title.replace(' ', '+')}",
                "tinyui": f"/x/{page.id}",
            },
        }
        if body:
            item["body"] = {"storage": {"representation": "storage", "value": page.body}}
        return item

    def _cursor_page(self, path: str, query: dict, items: list[dict]) -> tuple[int, dict, dict]:
        limit = min(int(query.get("limit", 25)), 250)
        start = int(base64.urlsafe_b64decode(query["cursor"]).decode()) if query.get("cursor") else 0
        chunk = items[start : start + limit]
        links: dict = {"base": f"{self.url}/wiki"}
        headers = {}
        if start + limit < len(items):
            cursor = base64.urlsafe_b64encode(str(start + limit).encode()).decode()
            rest = {k: v for k, v in query.items() if k != "cursor"}
            links["next"] = f"{path}?{urlencode({**rest, 'cursor': cursor})}"
            headers["Link"] = f'<{links["next"]}>; rel="next"'
        return 200, {"results": chunk, "_links": links}, headers

    def _cql(self, query: dict) -> tuple[int, dict, dict]:
        cql = query.get("cql", "")
        if not re.search(r"type\s*=\s*\"?page\"?", cql):
            return 400, {"statusCode": 400, "message": "only type = page is supported here"}, {}
        spaces = re.search(r"space\s+in\s*\(([^)]*)\)", cql) or re.search(r"space\s*=\s*(\"?\w+\"?)", cql)
        keys = {k.strip().strip('"') for k in spaces.group(1).split(",")} if spaces else set(self.spaces)
        since = re.search(r"lastmodified\s*>=\s*\"(\d{4}/\d{2}/\d{2} \d{2}:\d{2})\"", cql, re.I)
        floor = datetime.strptime(since.group(1), "%Y/%m/%d %H:%M").replace(tzinfo=UTC) if since else None
        pages = sorted(
            (
                p
                for p in self.pages.values()
                if p.space in keys and p.status == "current" and (floor is None or p.modified >= floor)
            ),
            key=lambda p: int(p.id),
        )
        start, limit = int(query.get("start", 0)), min(int(query.get("limit", 25)), 100)
        chunk = pages[start : start + limit]
        results = [
            {
                "id": p.id,
                "type": "page",
                "status": p.status,
                "title": p.title,
                "version": {"number": p.version, "when": p.modified.isoformat()},
                "_links": {"webui": f"/spaces/{p.space}/pages/{p.id}"},
            }
            for p in chunk
        ]
        links = {"base": f"{self.url}/wiki", "context": "/wiki"}
        if start + limit < len(pages):
            links["next"] = "/rest/api/content/search?" + urlencode({**query, "start": start + limit})
        return 200, {"results": results, "start": start, "limit": limit, "size": len(results), "_links": links}, {}
