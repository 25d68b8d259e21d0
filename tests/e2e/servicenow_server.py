"""A ServiceNow instance's Table API for `kb_knowledge` on 127.0.0.1, in the documented shapes.

`GET /api/now/table/kb_knowledge` with an encoded `sysparm_query` (`workflow_state=published`,
`kb_knowledge_baseIN…`, `sys_updated_on>=…`, `ORDERBYsys_updated_on`), `sysparm_fields`, `sysparm_limit` /
`sysparm_offset` paging (`X-Total-Count`, `Link` rel="next"); `GET …/kb_knowledge/{sys_id}`; `{"result": …}`
bodies; Basic auth with ServiceNow's 401 error body.
"""

from __future__ import annotations

import base64
import uuid
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.e2e.servers import FakeVendor, VendorHandler


class FakeServiceNow(FakeVendor):
    def __init__(self, *, user: str, password: str) -> None:
        self.user, self.password = user, password
        self.articles: dict[str, dict] = {}
        self.clock = datetime(2026, 11, 25, 9, 0, 0, tzinfo=UTC)
        self.requests: list[str] = []
        self._serve()

    def _tick(self) -> str:
        self.clock += timedelta(seconds=7)
        return self.clock.strftime("%Y-%m-%d %H:%M:%S")

    def publish(
        self,
        number: str,
        title: str,
        text: str,
        *,
        kb: str = "kb-it",
        roles: str = "",
        can_read: str = "",
        cannot_read: str = "",
    ) -> str:
        """`can_read` / `cannot_read`: comma-separated user_criteria sys_ids (glide lists), as the Table API gives."""
        sys_id = uuid.uuid5(uuid.NAMESPACE_URL, number).hex
        self.articles[sys_id] = {
            "sys_id": sys_id,
            "number": number,
            "short_description": title,
            "text": text,
            "kb_knowledge_base": kb,
            "workflow_state": "published",
            "roles": roles,
            "can_read_user_criteria": can_read,
            "cannot_read_user_criteria": cannot_read,
            "sys_updated_on": self._tick(),
        }
        return sys_id

    def edit(self, sys_id: str, text: str) -> None:
        self.articles[sys_id].update(text=text, sys_updated_on=self._tick())

    def retire(self, sys_id: str) -> None:
        self.articles[sys_id].update(workflow_state="retired", sys_updated_on=self._tick())

    def _matches(self, article: dict, query: str) -> bool:
        for term in query.split("^"):
            if not term or term.startswith("ORDERBY"):
                continue
            if term.startswith("kb_knowledge_baseIN"):
                if article["kb_knowledge_base"] not in term[len("kb_knowledge_baseIN") :].split(","):
                    return False
            elif ">=" in term:
                name, value = term.split(">=", 1)
                if article[name] < value:
                    return False
            elif "=" in term:
                name, value = term.split("=", 1)
                if article[name] != value:
                    return False
        return True

    def _handler(self):
        fake = self

        class Handler(VendorHandler):
            json_type = "application/json;charset=UTF-8"

            def do_GET(self) -> None:
                fake.requests.append(self.path)
                expected = "Basic " + base64.b64encode(f"{fake.user}:{fake.password}".encode()).decode()
                if self.headers.get("Authorization") != expected:
                    return self._send(
                        401,
                        {
                            "error": {
                                "message": "User Not Authenticated",
                                "detail": "Required to provide Auth information",
                            },
                            "status": "failure",
                        },
                    )
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                fields = query.get("sysparm_fields", "").split(",") if query.get("sysparm_fields") else None

                def shape(article: dict) -> dict:
                    return {k: v for k, v in article.items() if fields is None or k in fields}

                if parts.path.startswith("/api/now/table/kb_knowledge/"):
                    article = fake.articles.get(parts.path.rsplit("/", 1)[-1])
                    if article is None:
                        return self._send(
                            404,
                            {
                                "error": {
                                    "message": "No Record found",
                                    "detail": "Record doesn't exist or ACL restricts the record retrieval",
                                },
                                "status": "failure",
                            },
                        )
                    return self._send(200, {"result": shape(article)})
                if parts.path != "/api/now/table/kb_knowledge":
                    return self._send(400, {"error": {"message": "Invalid table"}, "status": "failure"})
                rows = sorted(
                    (a for a in fake.articles.values() if fake._matches(a, query.get("sysparm_query", ""))),
                    key=lambda a: a["sys_updated_on"],
                )
                offset, limit = int(query.get("sysparm_offset", 0)), int(query.get("sysparm_limit", 10000))
                headers = {"X-Total-Count": str(len(rows))}
                if offset + limit < len(rows):
                    headers["Link"] = (
                        f'<{fake.url}{parts.path}?{urlencode({**query, "sysparm_offset": offset + limit})}>;rel="next"'
                    )
                self._send(200, {"result": [shape(a) for a in rows[offset : offset + limit]]}, headers)

        return Handler
