"""Zendesk Guide's Help Center API on 127.0.0.1, in the documented shapes.

`GET /api/v2/help_center/incremental/articles?start_time=` (articles changed at or after it; `next_page`,
`end_time`, `count`), `GET /api/v2/help_center/articles` (page-numbered, `next_page`), `GET …/articles/{id}`,
`GET /api/v2/help_center/user_segments/{id}`; Basic auth `{email}/token:{api_token}`; 429 + Retry-After.
"""

from __future__ import annotations

import base64
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.e2e.servers import FakeVendor, VendorHandler

PER_PAGE = 2


class FakeZendesk(FakeVendor):
    def __init__(self, *, email: str, token: str) -> None:
        self.email, self.token = email, token
        self.articles: dict[int, dict] = {}
        self.segments: dict[int, dict] = {}
        self.clock = 1_764_061_200  # 2025-11-25 09:00 UTC
        self.throttle_next = 0
        self.requests: list[str] = []
        self._serve()

    def _tick(self) -> int:
        self.clock += 60
        return self.clock

    def publish(self, article_id: int, title: str, body: str, *, section: int = 360001, segment: int | None = None):
        now = self._tick()
        self.articles[article_id] = {
            "id": article_id,
            "title": title,
            "body": body,
            "section_id": section,
            "user_segment_id": segment,
            "draft": False,
            "locale": "en-us",
            "html_url": f"{self.url}/hc/en-us/articles/{article_id}",
            "updated_at": _iso(now),
            "_changed": now,
        }

    def edit(self, article_id: int, body: str) -> None:
        now = self._tick()
        self.articles[article_id].update(body=body, updated_at=_iso(now), _changed=now)

    def archive(self, article_id: int) -> None:
        del self.articles[article_id]  # archived articles leave the article lists

    def segment(self, segment_id: int, name: str, **fields) -> None:
        self.segments[segment_id] = {
            "id": segment_id,
            "name": name,
            "user_type": "signed_in_users",
            "group_ids": [],
            "organization_ids": [],
            "tags": [],
            "or_tags": [],
            **fields,
        }

    def _handler(self):
        fake = self

        class Handler(VendorHandler):
            json_type = "application/json; charset=utf-8"

            def do_GET(self) -> None:
                fake.requests.append(self.path)
                if fake.throttle_next > 0:
                    fake.throttle_next -= 1
                    return self._send(429, {"error": "TooManyRequests"}, {"Retry-After": "0"})
                expected = "Basic " + base64.b64encode(f"{fake.email}/token:{fake.token}".encode()).decode()
                if self.headers.get("Authorization") != expected:
                    return self._send(401, {"error": "Couldn't authenticate you"})
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                status, body = fake.route(parts.path, query)
                self._send(status, body)

        return Handler

    def _public(self, article: dict) -> dict:
        return {k: v for k, v in article.items() if not k.startswith("_")}

    def route(self, path: str, query: dict) -> tuple[int, dict]:
        base = "/api/v2/help_center"
        if path == f"{base}/incremental/articles":
            start = int(query.get("start_time", 0))
            changed = sorted((a for a in self.articles.values() if a["_changed"] >= start), key=lambda a: a["_changed"])
            offset = int(query.get("offset", 0))
            page = changed[offset : offset + PER_PAGE]
            more = offset + PER_PAGE < len(changed)
            end_time = page[-1]["_changed"] if page else start
            return 200, {
                "articles": [self._public(a) for a in page],
                "count": len(page),
                "end_time": end_time + (0 if more else 1),
                "next_page": f"{self.url}{path}?{urlencode({'start_time': start, 'offset': offset + PER_PAGE})}"
                if more
                else None,
            }
        if path == f"{base}/articles":
            number, per_page = int(query.get("page", 1)), int(query.get("per_page", 30))
            ordered = sorted(self.articles.values(), key=lambda a: a["id"])
            page = ordered[(number - 1) * per_page : number * per_page]
            more = number * per_page < len(ordered)
            return 200, {
                "articles": [self._public(a) for a in page],
                "count": len(ordered),
                "page": number,
                "next_page": f"{self.url}{path}?{urlencode({'page': number + 1, 'per_page': per_page})}"
                if more
                else None,
            }
        if path.startswith(f"{base}/articles/"):
            article = self.articles.get(int(path.rsplit("/", 1)[-1]))
            return (200, {"article": self._public(article)}) if article else (404, {"error": "RecordNotFound"})
        if path.startswith(f"{base}/user_segments/"):
            segment = self.segments.get(int(path.rsplit("/", 1)[-1]))
            return (200, {"user_segment": segment}) if segment else (404, {"error": "RecordNotFound"})
        return 404, {"error": "InvalidEndpoint"}


def _iso(epoch: int) -> str:
    import datetime

    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
