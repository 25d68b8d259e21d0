"""A website crawler for public help pages: start URLs (or a sitemap), same site only, robots.txt obeyed,
depth and page caps, ETag/Last-Modified revalidation, main content extracted by trafilatura.

Each sync crawls from the start URLs again, asking for every page it knows with `If-None-Match` /
`If-Modified-Since`: a `304 Not Modified` costs no download and nothing is re-embedded. Pages no longer
reached (404/410, unlinked, disallowed by robots.txt) are the deletions. The cursor keeps, per page, its
validators and its links (so the crawl goes on below an unchanged page) — bounded by the page cap.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import deque
from urllib.parse import urldefrag, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

from app.connectors.base import ChangeSet, Connector, ConnectorError, DocumentRef, RemoteDocument, ResponseTooLarge
from app.connectors.http import SourceHttp

log = logging.getLogger(__name__)

USER_AGENT = "deskmate-crawler/1.0 (+knowledge sync for an IT help desk)"
DEFAULT_MAX_PAGES = 200
DEFAULT_MAX_DEPTH = 2
MAX_PAGES_CAP = 5_000
MAX_LINKS_PER_PAGE = 300
MAX_PAGE_BYTES = 5 * 1024 * 1024
_SKIP_EXTENSIONS = re.compile(
    r"\.(?:png|jpe?g|gif|svg|webp|ico|css|js|json|xml|zip|gz|tar|exe|dmg|msi|mp4|mp3|"
    r"woff2?|ttf|pdf|docx?|xlsx?|pptx?)$",
    re.I,
)


def _normalise(url: str) -> str:
    url, _ = urldefrag(url.strip())
    parts = urlsplit(url)
    path = parts.path or "/"
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}" + (f"?{parts.query}" if parts.query else "")


class WebsiteConnector(Connector):
    kind = "website"

    def __init__(
        self,
        http: SourceHttp,
        *,
        start_urls: list[str],
        sitemaps: list[str] | None = None,
        max_pages: int = DEFAULT_MAX_PAGES,
        max_depth: int = DEFAULT_MAX_DEPTH,
    ) -> None:
        if not start_urls and not sitemaps:
            raise ConnectorError("A website source needs at least one start URL or sitemap.")
        self.http = http
        self.start_urls = [_normalise(u) for u in start_urls]
        self.sitemaps = [_normalise(u) for u in (sitemaps or [])]
        self.max_pages = max(1, min(max_pages, MAX_PAGES_CAP))
        self.max_depth = max(0, max_depth)
        self.sites = {urlsplit(u).netloc for u in self.start_urls + self.sitemaps}
        self._robots: dict[str, RobotFileParser] = {}
        self._bodies: dict[str, tuple[bytes, str]] = {}  # url → (main content as Markdown, title), this sync
        self._too_large: dict[str, str] = {}  # url → why its download was stopped, this sync
        self._reached: set[str] = set()

    # --- rules ---------------------------------------------------------------------------------
    def _allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        if (
            parts.scheme not in ("http", "https")
            or parts.netloc not in self.sites
            or _SKIP_EXTENSIONS.search(parts.path)
        ):
            return False
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self._robots:
            robots = RobotFileParser()
            response = self.http.get(f"{origin}/robots.txt", accept_statuses=(401, 403, 404, 410))
            if response.status_code in (401, 403):
                # as Google does: a site that forbids robots.txt forbids crawling. (typeshed leaves out
                # RobotFileParser's own allow_all / disallow_all switches, hence the ignores.)
                robots.disallow_all = True  # type: ignore[attr-defined]
            elif response.status_code < 400:
                robots.parse(response.text.splitlines())
            else:
                robots.allow_all = True  # type: ignore[attr-defined]
            self._robots[origin] = robots
        return self._robots[origin].can_fetch(USER_AGENT, url)

    # --- crawling ------------------------------------------------------------------------------
    def list_changed(self, cursor: str | None) -> ChangeSet:
        known: dict[str, dict] = json.loads(cursor) if cursor else {}
        state: dict[str, dict] = {}
        changed: list[DocumentRef] = []
        queue: deque[tuple[str, int]] = deque((u, 0) for u in self.start_urls + self._sitemap_urls())
        queued = {u for u, _ in queue}
        while queue and len(state) < self.max_pages:
            url, depth = queue.popleft()
            if not self._allowed(url):
                continue
            entry = self._visit(url, known.get(url))
            if entry is None:
                continue
            state[url] = entry
            if entry.pop("content"):  # every page with text: the sync skips those whose version it holds
                changed.append(DocumentRef(url, entry["version"], entry.get("title", "")))
            redirect = not entry["version"]
            if depth < self.max_depth or redirect:
                for link in entry["links"]:
                    if link not in queued:
                        queued.add(link)
                        queue.append((link, depth if redirect else depth + 1))
        self._reached = set(state)
        return ChangeSet(changed=changed, cursor=json.dumps(state, sort_keys=True))

    def _sitemap_urls(self) -> list[str]:
        urls: list[str] = []
        for sitemap in self.sitemaps:
            response = self.http.get(sitemap, accept_statuses=(404, 410))
            if response.status_code >= 400:
                raise ConnectorError(f"The sitemap {sitemap} answered HTTP {response.status_code}.")
            urls += [_normalise(u) for u in re.findall(r"<loc>\s*([^<\s]+)\s*</loc>", response.text)]
        return urls[: self.max_pages * 2]

    def _visit(self, url: str, known: dict | None) -> dict | None:
        headers = {}
        if known and known.get("etag"):
            headers["If-None-Match"] = known["etag"]
        if known and known.get("last_modified"):
            headers["If-Modified-Since"] = known["last_modified"]
        try:
            response = self.http.get(
                url, headers=headers, accept_statuses=(304, 401, 403, 404, 410, 451), max_bytes=MAX_PAGE_BYTES
            )
        except ResponseTooLarge as exc:  # listed, so the sync records why it was skipped (fetch raises it)
            log.info("skipped %s: %s", url, exc.reason)
            self._too_large[url] = exc.reason
            return {
                "version": "too-large",
                "etag": None,
                "last_modified": None,
                "links": [],
                "title": "",
                "content": True,
            }
        if 300 <= response.status_code < 400 and response.status_code != 304:
            target = response.headers.get("location")
            links = [_normalise(urljoin(url, target))] if target else []
            return {
                "version": "",
                "etag": None,
                "last_modified": None,
                "links": links,
                "title": "",
                "content": False,
                "content_seen": False,
            }  # followed as a link: same-site rules and robots.txt apply to it
        if response.status_code == 304 and known:
            return {**known, "content": known.get("content_seen", True)}
        if response.status_code >= 300 or "html" not in response.headers.get("content-type", "html").lower():
            return None
        markdown, title = extract_main_content(response.text)
        links = page_links(url, response.text)[:MAX_LINKS_PER_PAGE]
        version = response.headers.get("etag") or hashlib.sha256(markdown.encode()).hexdigest()[:16]
        entry = {
            "version": version,
            "etag": response.headers.get("etag"),
            "last_modified": response.headers.get("last-modified"),
            "links": links,
            "title": title,
        }
        entry["content_seen"] = bool(markdown.strip())
        if entry["content_seen"]:
            self._bodies[url] = (markdown.encode("utf-8"), title)
        return {**entry, "content": entry["content_seen"]}

    def fetch(self, ref: DocumentRef) -> RemoteDocument:
        if ref.external_id not in self._bodies and ref.external_id not in self._too_large:
            self._visit(ref.external_id, None)  # asked outside a crawl (a permission re-check): read it now
        if ref.external_id in self._too_large:
            raise ResponseTooLarge(self._too_large[ref.external_id])
        body, title = self._bodies.get(ref.external_id, (b"", ref.title))
        name = hashlib.sha256(ref.external_id.encode()).hexdigest()[:12]
        return RemoteDocument(
            external_id=ref.external_id,
            version=ref.version,
            title=title or ref.external_id,
            url=ref.external_id,
            filename=f"web-{name}.md",
            data=body,
        )

    def list_deleted(self, known: set[str]) -> set[str]:
        return {url for url in known if url not in self._reached}

    def audience(self, document: RemoteDocument) -> list[str]:
        return []  # public web pages: everyone

    def close(self) -> None:
        self.http.close()


def page_links(base: str, html: str) -> list[str]:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    links: list[str] = []
    for anchor in soup.find_all("a", href=True):
        if "nofollow" in (anchor.get("rel") or []):
            continue
        href = anchor["href"]
        if not isinstance(href, str):  # href is a single-valued attribute: always text
            continue
        url = _normalise(urljoin(base, href))
        if url.startswith(("http://", "https://")) and url not in links:
            links.append(url)
    return links


def extract_main_content(html: str) -> tuple[str, str]:
    """(the page's main content as Markdown — navigation, footers and cookie banners left out —, its title)."""
    import trafilatura

    markdown = (
        trafilatura.extract(
            html,
            output_format="markdown",
            include_formatting=True,
            include_tables=True,
            include_links=False,
            include_images=False,
            include_comments=False,
            favor_recall=True,
        )
        or ""
    )
    metadata = trafilatura.extract_metadata(html)
    title = (metadata.title if metadata is not None and metadata.title else "") or ""
    if title and not markdown.lstrip().startswith("# "):
        markdown = f"# {title}\n\n{markdown}"
    return markdown, title
