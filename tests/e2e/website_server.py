"""A small website on 127.0.0.1 for crawler tests: pages, robots.txt, ETag/Last-Modified and 304s, redirects."""

from __future__ import annotations

import hashlib

from tests.e2e.servers import FakeVendor, VendorHandler


class FakeWebsite(FakeVendor):
    def __init__(self, robots: str = "User-agent: *\nAllow: /\n") -> None:
        self.pages: dict[str, str] = {}  # path → HTML
        self.redirects: dict[str, str] = {}
        self.huge: dict[str, int] = {}  # path → bytes of HTML streamed without a declared length
        self.sent: dict[str, int] = {}  # path → bytes of it actually sent before the client stopped reading
        self.robots = robots
        self.requests: list[tuple[str, int]] = []  # (path, status answered)
        self._serve()

    def statuses(self, path: str) -> list[int]:
        return [status for p, status in self.requests if p == path]

    def _handler(self):
        site = self

        class Handler(VendorHandler):
            def _answer(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
                site.requests.append((self.path, status))
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _stream(self, total: int) -> None:
                """A page of `total` bytes, no Content-Length: only the client's own cap stops the download."""
                site.requests.append((self.path, 200))
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                block = b"<p>" + b"padding " * 8190 + b"</p>"
                sent = 0
                try:
                    self.wfile.write(b"<!doctype html><html><body><main>")
                    while sent < total:
                        self.wfile.write(block)
                        sent += len(block)
                        site.sent[self.path] = sent
                except OSError:  # the crawler hung up at its cap
                    pass

            def do_GET(self) -> None:
                if self.path == "/robots.txt":
                    return self._answer(200, site.robots.encode(), {"Content-Type": "text/plain"})
                if self.path in site.huge:
                    return self._stream(site.huge[self.path])
                if self.path in site.redirects:
                    return self._answer(301, b"", {"Location": site.redirects[self.path]})
                html = site.pages.get(self.path)
                if html is None:
                    return self._answer(404, b"not found", {"Content-Type": "text/plain"})
                body = html.encode()
                etag = '"' + hashlib.sha256(body).hexdigest()[:12] + '"'
                if self.headers.get("If-None-Match") == etag:
                    return self._answer(304, b"", {"ETag": etag})
                self._answer(
                    200,
                    body,
                    {
                        "Content-Type": "text/html; charset=utf-8",
                        "ETag": etag,
                        "Last-Modified": "Wed, 25 Nov 2026 10:00:00 GMT",
                    },
                )

        return Handler


def help_page(title: str, body: str, links: list[str] = ()) -> str:
    """A vendor help page: navigation and footer around the article, as real sites have."""
    nav = "".join(f'<a href="{link}">{link}</a> ' for link in links)
    return (
        f"<!doctype html><html><head><title>{title} | Vendor Help</title></head><body>"
        f"<nav>Home Products Pricing Sign in {nav}</nav><main><article><h1>{title}</h1>{body}</article></main>"
        "<footer>© Vendor Inc. Cookie settings. Privacy.</footer></body></html>"
    )
