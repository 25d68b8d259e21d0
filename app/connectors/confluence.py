"""Confluence Cloud (and Data Center) pages: REST v2 to list and read, v1 CQL `lastmodified` for changes.

- first sync: every current page of each space (`GET /wiki/api/v2/spaces?keys=…`, then
  `/wiki/api/v2/spaces/{id}/pages`, cursor paging through `_links.next`);
- later syncs: `GET /wiki/rest/api/content/search?cql=type=page AND space in (…) AND lastmodified >= "…"`
  (start/limit paging), from one minute before the previous sync began (clock skew, CQL's minute precision);
- a page's body: `GET /wiki/api/v2/pages/{id}?body-format=storage`, storage-format XHTML turned into plain
  HTML here (code, info/note/warning/tip panels, expand, tables, images' alt text; navigation macros dropped);
- deletions: ids no longer listed as current pages of the spaces (deleted, trashed, or moved to another space);
- permissions: `GET /wiki/rest/api/content/{id}/restriction/byOperation/read` on the page and on each of its
  ancestors (`GET /wiki/api/v2/pages/{id}/ancestors`), since a view restriction on a page applies to every page
  under it. Each restricted level's groups (through the source's `group_map`, else the group's name) and users
  (`user:<accountId>`) form a set; a reader must be allowed at every level, so the audience is what all the
  restricted levels have in common. A page no single group or user may read at every level is not indexed
  (and goes, if it was). Without restrictions anywhere, everyone.

Data Center (`scope.edition: data_center`; base URL without `/wiki`, e.g. https://confluence.example.com or
…/confluence) has no v2 API: pages are listed with `GET /rest/api/content?spaceKey=…&type=page` (start/limit
paging), read with `GET /rest/api/content/{id}?expand=body.storage,version,ancestors`, and spaces checked with
`GET /rest/api/space/{key}`; CQL and restrictions are the same v1 calls. Users there are `username`s.

Space permissions are not read (a known limit, stated in the note): sync only spaces everyone may read, or
restrict the pages.
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from app.adapters.markup_rules import image_text
from app.connectors.base import ChangeSet, Connector, ConnectorError, DocumentRef, RemoteDocument, Unreadable
from app.connectors.http import SourceHttp

if TYPE_CHECKING:
    from bs4 import Tag

PAGE_LIMIT = 100  # Confluence's own maximum for v2 lists is 250; 100 keeps each response small
MAX_PAGES_PER_SPACE = 50_000
MAX_ANCESTORS = 250  # the v2 ancestors call's own maximum per response; deeper trees are not real
EDITIONS = ("cloud", "data_center")
CQL_TIME = "%Y/%m/%d %H:%M"


class ConfluenceConnector(Connector):
    kind = "confluence"

    def __init__(
        self,
        http: SourceHttp,
        *,
        space_keys: list[str],
        group_map: dict[str, str] | None = None,
        edition: str = "cloud",
    ) -> None:
        if not space_keys:
            raise ConnectorError("A Confluence source needs at least one space key to sync.")
        if edition not in EDITIONS:
            raise ConnectorError(f"scope.edition must be {' or '.join(EDITIONS)}, not '{edition}'.")
        self.http = http
        self.space_keys = space_keys
        self.group_map = {k.lower(): v for k, v in (group_map or {}).items()}
        self.data_center = edition == "data_center"
        self._space_ids: dict[str, str] | None = None
        self._restrictions: dict[str, dict] = {}  # page id → its own read restrictions, for this sync
        ends_in_wiki = urlsplit(http.base_url).path.rstrip("/").endswith("/wiki")
        self._wiki = "" if ends_in_wiki or self.data_center else "/wiki"

    # --- listing ------------------------------------------------------------------------------
    def _spaces(self) -> dict[str, str]:
        if self._space_ids is None:
            body = self.http.json(
                f"{self._wiki}/api/v2/spaces", params={"keys": ",".join(self.space_keys), "limit": PAGE_LIMIT}
            )
            found = {
                s["key"]: str(s.get("id"))
                for s in body.get("results", [])
                if isinstance(s, dict) and isinstance(s.get("key"), str)
            }
            missing = [k for k in self.space_keys if k not in found]
            if missing:
                raise ConnectorError(
                    f"Confluence has no space with key {', '.join(missing)} visible to these credentials."
                )
            self._space_ids = found
        return self._space_ids

    def _current_pages(self) -> list[dict]:
        if self.data_center:
            return self._current_pages_v1()
        pages: list[dict] = []
        for space_id in self._spaces().values():
            url: str | None = f"{self._wiki}/api/v2/spaces/{space_id}/pages"
            params: dict | None = {"limit": PAGE_LIMIT, "status": "current"}
            while url and len(pages) < MAX_PAGES_PER_SPACE:
                body = self.http.json(url, params=params)
                pages.extend(p for p in body.get("results", []) if isinstance(p, dict))
                url, params = self._next(body), None
        return pages

    def _current_pages_v1(self) -> list[dict]:
        pages: list[dict] = []
        for key in self.space_keys:
            if self.http.get(f"/rest/api/space/{key}", accept_statuses=(404,)).status_code == 404:
                raise ConnectorError(f"Confluence has no space with key {key} visible to these credentials.")
            url: str | None = "/rest/api/content"
            params: dict | None = {
                "spaceKey": key,
                "type": "page",
                "status": "current",
                "limit": PAGE_LIMIT,
                "expand": "version",
            }
            while url and len(pages) < MAX_PAGES_PER_SPACE:
                body = self.http.json(url, params=params)
                pages.extend(p for p in body.get("results", []) if isinstance(p, dict))
                url, params = self._next_v1(body), None
        return pages

    def _next(self, body: dict) -> str | None:
        """The `_links.next` of a page of results, relative to the site (it starts with /wiki)."""
        nxt = (body.get("_links") or {}).get("next")
        if not nxt:
            return None
        if self._wiki == "" and nxt.startswith("/wiki/"):
            nxt = nxt[len("/wiki") :]  # the base URL already ends in /wiki
        return nxt

    def list_changed(self, cursor: str | None) -> ChangeSet:
        started = datetime.now(UTC)
        if not cursor:
            refs = [
                DocumentRef(str(p["id"]), str((p.get("version") or {}).get("number", "")), p.get("title", ""))
                for p in self._current_pages()
            ]
        else:
            refs = self._changed_since(cursor)
        return ChangeSet(changed=refs, cursor=started.isoformat(timespec="seconds"))

    def _changed_since(self, cursor: str) -> list[DocumentRef]:
        since = datetime.fromisoformat(cursor) - timedelta(minutes=1)
        spaces = ", ".join(f'"{k}"' for k in self.space_keys)
        cql = f'type = page AND space in ({spaces}) AND lastmodified >= "{since.strftime(CQL_TIME)}"'
        refs: list[DocumentRef] = []
        url: str | None = f"{self._wiki}/rest/api/content/search"
        params: dict | None = {"cql": cql, "limit": PAGE_LIMIT, "expand": "version"}
        while url and len(refs) < MAX_PAGES_PER_SPACE:
            body = self.http.json(url, params=params)
            for item in body.get("results", []):
                if isinstance(item, dict) and item.get("type", "page") == "page":
                    refs.append(
                        DocumentRef(
                            str(item["id"]), str((item.get("version") or {}).get("number", "")), item.get("title", "")
                        )
                    )
            url, params = self._next_v1(body), None
        return refs

    def _next_v1(self, body: dict) -> str | None:
        nxt = (body.get("_links") or {}).get("next")
        if not nxt:
            return None
        return f"{self._wiki}{nxt}" if nxt.startswith("/rest/") else self._next(body)

    def list_deleted(self, known: set[str]) -> set[str]:
        current = {str(p.get("id")) for p in self._current_pages()}
        return {external_id for external_id in known if external_id not in current}

    # --- one page -----------------------------------------------------------------------------
    def fetch(self, ref: DocumentRef) -> RemoteDocument:
        if self.data_center:
            page = self.http.json(
                f"/rest/api/content/{ref.external_id}", params={"expand": "body.storage,version,ancestors"}
            )
            ancestors = [str(a["id"]) for a in page.get("ancestors") or [] if isinstance(a, dict) and a.get("id")]
        else:
            page = self.http.json(f"{self._wiki}/api/v2/pages/{ref.external_id}", params={"body-format": "storage"})
            ancestors = None  # read with the restrictions
        storage = ((page.get("body") or {}).get("storage") or {}).get("value") or ""
        title = page.get("title") or ref.title or f"Page {ref.external_id}"
        body = storage_to_html(title, storage)
        version = str((page.get("version") or {}).get("number", ref.version))
        return RemoteDocument(
            external_id=ref.external_id,
            version=version,
            title=title,
            url=self.page_url(ref.external_id),
            filename=f"confluence-{ref.external_id}.html",
            data=body.encode("utf-8"),
            permissions=self._permissions(ref.external_id, ancestors),
        )

    def page_url(self, page_id: str) -> str:
        """A link that survives renames and moves: viewpage.action by page id (Cloud and Data Center)."""
        base = self.http.base_url if self._wiki == "" else f"{self.http.base_url}/wiki"  # Data Center: as given
        return f"{base}/pages/viewpage.action?pageId={page_id}"

    def _ancestors(self, page_id: str) -> list[str]:
        if self.data_center:
            page = self.http.json(f"/rest/api/content/{page_id}", params={"expand": "ancestors"})
            found = page.get("ancestors") or []
        else:
            found = (
                self.http.json(f"{self._wiki}/api/v2/pages/{page_id}/ancestors", params={"limit": MAX_ANCESTORS}).get(
                    "results"
                )
                or []
            )
        return [str(a["id"]) for a in found if isinstance(a, dict) and a.get("id")][:MAX_ANCESTORS]

    def _permissions(self, page_id: str, ancestors: list[str] | None = None) -> dict:
        """The read restrictions of the page and of every ancestor that has some (root first, page last)."""
        ancestors = self._ancestors(page_id) if ancestors is None else ancestors
        levels = [self._read_restrictions(i) for i in [*ancestors, page_id]]
        return {"levels": [level for level in levels if level["groups"] or level["users"]]}

    def _read_restrictions(self, page_id: str) -> dict:
        if page_id in self._restrictions:  # ancestors are shared by many pages of a sync
            return self._restrictions[page_id]
        body = self.http.json(
            f"{self._wiki}/rest/api/content/{page_id}/restriction/byOperation/read",
            params={"expand": "restrictions.user,restrictions.group"},
        )
        restrictions = body.get("restrictions") or {}
        groups = [
            g.get("name")
            for g in ((restrictions.get("group") or {}).get("results") or [])
            if isinstance(g, dict) and g.get("name")
        ]
        users = [
            u.get("accountId") or u.get("username")
            for u in ((restrictions.get("user") or {}).get("results") or [])
            if isinstance(u, dict) and (u.get("accountId") or u.get("username"))
        ]
        self._restrictions[page_id] = {"groups": sorted(groups), "users": sorted(users)}
        return self._restrictions[page_id]

    def audience(self, document: RemoteDocument) -> list[str]:
        return self._audience_of(document.permissions)

    def _audience_of(self, permissions: dict) -> list[str]:
        allowed: set[str] | None = None
        for level in permissions.get("levels", []):
            groups = {self.group_map.get(g.lower(), g).lower() for g in level.get("groups", [])}
            users = {f"user:{u}".lower() for u in level.get("users", [])}
            allowed = (groups | users) if allowed is None else allowed & (groups | users)
        if allowed is None:
            return []  # restricted nowhere: everyone
        if not allowed:
            raise Unreadable(
                "its read restrictions (on it and on pages above it) leave no group or user allowed at every level"
            )
        return sorted(allowed)

    def current_audience(self, external_id: str) -> list[str] | None:
        return self._audience_of(self._permissions(external_id))

    def close(self) -> None:
        self.http.close()


# --- storage format → HTML ------------------------------------------------------------------------
_PANEL_LABELS = {
    "info": "Info",
    "note": "Note",
    "warning": "Warning",
    "tip": "Tip",
    "panel": "",
    "success": "Success",
    "error": "Error",
}
_DROPPED_MACROS = {
    "toc",
    "children",
    "pagetree",
    "recently-updated",
    "contentbylabel",
    "livesearch",
    "attachments",
    "jira",
    "include",
    "excerpt-include",
    "roadmap",
    "status-list",
    "anchor",
    "space-details",
}


def _attribute(tag: Tag, name: str) -> str:
    """A tag's attribute as text ('' when absent); a multi-valued one (like class) joined by spaces."""
    value = tag.get(name)
    if value is None:
        return ""
    return value if isinstance(value, str) else " ".join(value)


def storage_to_html(title: str, storage: str) -> str:
    """Confluence storage-format XHTML as plain HTML the HTML reader understands (no macros, no ac:/ri: tags)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(storage, "html.parser")
    for macro in reversed(soup.find_all(["ac:structured-macro", "ac:macro"])):
        name = _attribute(macro, "ac:name").lower()
        if name in _DROPPED_MACROS:
            macro.decompose()
        elif name in ("code", "noformat"):
            body = macro.find("ac:plain-text-body")
            pre = soup.new_tag("pre")
            pre.string = body.get_text() if body else ""
            macro.replace_with(pre)
        elif name in _PANEL_LABELS or name == "expand":
            parameter = macro.find("ac:parameter", attrs={"ac:name": "title"})
            heading = parameter.get_text(" ", strip=True) if parameter else ""
            label = _PANEL_LABELS.get(name, "")
            body = macro.find("ac:rich-text-body")
            box = soup.new_tag("div")
            lead = ": ".join(part for part in (label, heading) if part)
            first = body.find(True, recursive=False) if body is not None else None
            if lead and not heading and first is not None and first.name == "p":
                first.insert(0, f"{lead}: ")  # "Info: Toner is in the cupboard."
            elif lead:
                intro = soup.new_tag("p")
                intro.string = f"{lead}:" if body is not None and body.find(["p", "ul", "ol", "pre", "table"]) else lead
                box.append(intro)
            if body is not None:
                for child in list(body.children):
                    box.append(child.extract())
            macro.replace_with(box)
        else:  # an unknown macro: keep its rich body, drop its parameters
            body = macro.find("ac:rich-text-body")
            if body is not None:
                body.name = "div"
                macro.replace_with(body)
            else:
                macro.decompose()
    for image in soup.find_all("ac:image"):  # a picture leaves its alt text, when that says something
        alt = image_text(_attribute(image, "ac:alt") or _attribute(image, "ac:title"))
        if alt:
            image.replace_with(alt)
        else:
            image.decompose()
    for link in soup.find_all("ac:link"):
        body = link.find(["ac:plain-text-link-body", "ac:link-body"])
        page = link.find("ri:page")
        text = body.get_text() if body else (_attribute(page, "ri:content-title") if page else "")
        link.replace_with(text)
    for task in soup.find_all("ac:task"):
        body = task.find("ac:task-body")
        item = soup.new_tag("li")
        item.string = body.get_text(" ", strip=True) if body else ""
        task.replace_with(item)
    for task_list in soup.find_all("ac:task-list"):
        task_list.name = "ul"
    for leftover in soup.find_all(re.compile(r"^(ac|ri):")):
        leftover.unwrap()
    return (
        f"<!DOCTYPE html><html><head><title>{html.escape(title)}</title></head><body>"
        f"<h1>{html.escape(title)}</h1>{soup}</body></html>"
    )
