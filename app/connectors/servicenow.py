"""ServiceNow Knowledge: published `kb_knowledge` articles through the Table API.

- list: `GET /api/now/table/kb_knowledge?sysparm_query=workflow_state=published^kb_knowledge_baseIN…
  ^sys_updated_on>=…^ORDERBYsys_updated_on` with `sysparm_offset`/`sysparm_limit` paging (until a short page);
  the cursor is the newest `sys_updated_on` seen (the instance's own clock, so no skew);
- an article: `GET /api/now/table/kb_knowledge/{sys_id}` — its `text` is HTML; cited as
  `{instance}/kb_view.do?sysparm_article=KB…`;
- deletions: articles no longer listed as published (retired, deleted, moved to another knowledge base);
- permissions: the article's `roles` field (role names) through `group_map`. User criteria are not mapped: a
  criterion can name companies, departments, locations or a script, and "Cannot read" denies, none of which an
  audience list can say. An article with its own criteria (`can_read_user_criteria` /
  `cannot_read_user_criteria`) is therefore withheld rather than indexed for everyone; criteria set on the
  knowledge base itself are not read (a known limit: sync knowledge bases everyone may read).
"""

from __future__ import annotations

import html

from app.connectors.base import ChangeSet, Connector, ConnectorError, DocumentRef, RemoteDocument, Unreadable
from app.connectors.http import SourceHttp

PAGE_LIMIT = 100
MAX_ARTICLES = 50_000
_FIELDS = "sys_id,number,short_description,sys_updated_on,kb_knowledge_base,workflow_state"
_TABLE = "/api/now/table/kb_knowledge"
_CRITERIA = ("can_read_user_criteria", "cannot_read_user_criteria")


class ServiceNowConnector(Connector):
    kind = "servicenow"

    def __init__(
        self, http: SourceHttp, *, knowledge_bases: list[str] | None = None, group_map: dict[str, str] | None = None
    ) -> None:
        self.http = http
        self.knowledge_bases = knowledge_bases or []
        self.group_map = {k.lower(): v for k, v in (group_map or {}).items()}

    def _query(self, since: str | None = None) -> str:
        parts = ["workflow_state=published"]
        if self.knowledge_bases:
            parts.append("kb_knowledge_baseIN" + ",".join(self.knowledge_bases))
        if since:
            parts.append(f"sys_updated_on>={since}")
        return "^".join(parts) + "^ORDERBYsys_updated_on"

    def _list(self, since: str | None, fields: str) -> list[dict]:
        rows: list[dict] = []
        offset = 0
        while len(rows) < MAX_ARTICLES:
            body = self.http.json(
                _TABLE,
                params={
                    "sysparm_query": self._query(since),
                    "sysparm_fields": fields,
                    "sysparm_limit": PAGE_LIMIT,
                    "sysparm_offset": offset,
                    "sysparm_exclude_reference_link": "true",
                },
            )
            page = [r for r in body.get("result", []) if isinstance(r, dict) and r.get("sys_id")]
            rows += page
            if len(page) < PAGE_LIMIT:
                break
            offset += PAGE_LIMIT
        return rows

    def list_changed(self, cursor: str | None) -> ChangeSet:
        rows = self._list(cursor, _FIELDS)
        newest = max([cursor or ""] + [r.get("sys_updated_on") or "" for r in rows])
        refs = [DocumentRef(r["sys_id"], r.get("sys_updated_on") or "", r.get("short_description") or "") for r in rows]
        return ChangeSet(changed=refs, cursor=newest)

    def list_deleted(self, known: set[str]) -> set[str]:
        current = {r["sys_id"] for r in self._list(None, "sys_id")}
        return known - current

    def fetch(self, ref: DocumentRef) -> RemoteDocument:
        body = self.http.json(
            f"{_TABLE}/{ref.external_id}",
            params={
                "sysparm_fields": ",".join((_FIELDS, "text,roles", *_CRITERIA)),
                "sysparm_exclude_reference_link": "true",
            },
        )
        article = body.get("result")
        if not isinstance(article, dict):
            raise ConnectorError(f"ServiceNow answered no article for {ref.external_id}.")
        title = article.get("short_description") or ref.title or article.get("number") or ref.external_id
        page = (
            f"<!DOCTYPE html><html><head><title>{html.escape(title)}</title></head><body>"
            f"<h1>{html.escape(title)}</h1>{article.get('text') or ''}</body></html>"
        )
        roles = [r.strip() for r in (article.get("roles") or "").split(",") if r.strip()]
        return RemoteDocument(
            external_id=ref.external_id,
            version=article.get("sys_updated_on") or ref.version,
            title=title,
            url=f"{self.http.base_url}/kb_view.do?sysparm_article={article.get('number')}",
            filename=f"servicenow-{article.get('number') or ref.external_id}.html",
            data=page.encode("utf-8"),
            permissions={"roles": roles, "user_criteria": any(article.get(f) for f in _CRITERIA)},
        )

    def audience(self, document: RemoteDocument) -> list[str]:
        if document.permissions.get("user_criteria"):
            raise Unreadable(
                "it has user criteria (Can read / Cannot read), which deskmate does not map to "
                "audiences; restrict it with roles instead"
            )
        return sorted({self.group_map.get(r.lower(), r).lower() for r in document.permissions.get("roles", [])})

    def close(self) -> None:
        self.http.close()
