"""Zendesk Guide (Help Center) articles: incremental export for changes, user segments for audiences.

- changes: `GET /api/v2/help_center/incremental/articles?start_time=<epoch>` following `next_page`; the last
  page's `end_time` is the next sync's start (as Zendesk recommends); drafts are skipped;
- an article: from the export (its `body` is HTML), else `GET /api/v2/help_center/articles/{id}`; cited by `html_url`;
- deletions: published articles no longer in `GET /api/v2/help_center/articles` (archived, deleted, moved
  out of the synced sections);
- permissions: `user_segment_id` → `GET /api/v2/help_center/user_segments/{id}`: none means everyone, a
  segment of all signed-in users means everyone who may use deskmate, any other segment its name (through
  `group_map`). Only agents and admins may use the incremental export, so the token must be an agent's.
"""

from __future__ import annotations

import html

from app.connectors.base import ChangeSet, Connector, ConnectorError, DocumentRef, RemoteDocument
from app.connectors.http import SourceHttp

MAX_PAGES = 10_000


class ZendeskConnector(Connector):
    kind = "zendesk"

    def __init__(
        self, http: SourceHttp, *, section_ids: list[str] | None = None, group_map: dict[str, str] | None = None
    ) -> None:
        self.http = http
        self.section_ids = {str(s) for s in (section_ids or [])}
        self.group_map = {k.lower(): v for k, v in (group_map or {}).items()}
        self._articles: dict[str, dict] = {}
        self._segments: dict[str, list[str]] = {}

    def _in_scope(self, article: dict) -> bool:
        return not article.get("draft") and (not self.section_ids or str(article.get("section_id")) in self.section_ids)

    def _pages(self, url: str, params: dict | None, key: str):
        for _ in range(MAX_PAGES):
            body = self.http.json(url, params=params)
            yield body, [a for a in body.get(key, []) if isinstance(a, dict) and "id" in a]
            next_page = body.get("next_page")
            if not next_page:
                return
            url, params = str(next_page), None

    def list_changed(self, cursor: str | None) -> ChangeSet:
        end_time = cursor or "0"
        for body, articles in self._pages(
            "/api/v2/help_center/incremental/articles", {"start_time": cursor or "0"}, "articles"
        ):
            for article in articles:
                if self._in_scope(article):
                    self._articles[str(article["id"])] = article
            end_time = str(body.get("end_time") or end_time)
        refs = [DocumentRef(i, str(a.get("updated_at", "")), a.get("title", "")) for i, a in self._articles.items()]
        return ChangeSet(changed=refs, cursor=end_time)

    def list_deleted(self, known: set[str]) -> set[str]:
        current: set[str] = set()
        for _, articles in self._pages("/api/v2/help_center/articles", {"per_page": 100}, "articles"):
            current |= {str(a["id"]) for a in articles if self._in_scope(a)}
        return known - current

    def fetch(self, ref: DocumentRef) -> RemoteDocument:
        article = self._articles.get(ref.external_id)
        if article is None:
            article = self.http.json(f"/api/v2/help_center/articles/{ref.external_id}").get("article")
            if not isinstance(article, dict):
                raise ConnectorError(f"Zendesk answered no article for {ref.external_id}.")
        title = article.get("title") or ref.title
        page = (
            f"<!DOCTYPE html><html><head><title>{html.escape(title)}</title></head><body>"
            f"<h1>{html.escape(title)}</h1>{article.get('body') or ''}</body></html>"
        )
        return RemoteDocument(
            external_id=ref.external_id,
            version=str(article.get("updated_at", ref.version)),
            title=title,
            url=article.get("html_url") or "",
            filename=f"zendesk-{ref.external_id}.html",
            data=page.encode("utf-8"),
            permissions={"user_segment_id": article.get("user_segment_id")},
        )

    def _segment_audience(self, segment_id) -> list[str]:
        if segment_id is None:
            return []
        key = str(segment_id)
        if key not in self._segments:
            segment = self.http.json(f"/api/v2/help_center/user_segments/{key}").get("user_segment") or {}
            everyone_signed_in = segment.get("user_type") == "signed_in_users" and not any(
                segment.get(k) for k in ("group_ids", "organization_ids", "tags", "or_tags")
            )
            name = str(segment.get("name") or f"segment {key}")
            self._segments[key] = [] if everyone_signed_in else [self.group_map.get(name.lower(), name).lower()]
        return self._segments[key]

    def audience(self, document: RemoteDocument) -> list[str]:
        return self._segment_audience(document.permissions.get("user_segment_id"))

    def current_audience(self, external_id: str) -> list[str] | None:
        article = self.http.json(f"/api/v2/help_center/articles/{external_id}").get("article") or {}
        return self._segment_audience(article.get("user_segment_id"))

    def close(self) -> None:
        self.http.close()
