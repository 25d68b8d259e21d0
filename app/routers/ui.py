"""The web UI: GET / (chat page), GET /admin (admin page), GET /view/<doc_id> (a cited document),
GET /ui/<file> (their scripts and styles).

Plain HTML, CSS and JavaScript from app/ui/static, served as they are: no build step, no CDN, nothing
fetched from elsewhere. A strict Content-Security-Policy allows scripts and styles from this origin only,
so even a rendering bug could not run script that came in an answer or a document.
"""

from __future__ import annotations

import functools
from importlib.resources import files
from pathlib import Path
from typing import Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import FileResponse

from app.deps import get_resources, require_admin
from app.resources import Resources
from app.schemas import TicketList, TicketSummaryOut

router = APIRouter(tags=["ui"])
STATIC = Path(__file__).resolve().parent.parent / "ui" / "static"
_MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _page(name: str) -> FileResponse:
    return FileResponse(
        STATIC / name, media_type=_MEDIA_TYPES[".html"], headers=SECURITY_HEADERS | {"Cache-Control": "no-cache"}
    )


def admin_page_access(request: Request) -> None:
    """The admin page itself holds no data: with an admin key configured it is served to anyone and asks
    for the key, which every admin call it makes then carries; without one, only this machine gets it."""
    if request.app.state.settings.security.admin_key is None:
        require_admin(request)


@router.get("/", include_in_schema=False)
def chat_page() -> FileResponse:
    return _page("chat.html")


@router.get("/admin", include_in_schema=False, dependencies=[Depends(admin_page_access)])
def admin_page() -> FileResponse:
    return _page("admin.html")


# what the chat page offers to try: worded for the bundled sample KB's topics, which most KBs share
SUGGESTIONS = ("How do I connect to the VPN?", "My VPN keeps disconnecting", "How do I reset my password?")
OUTAGE_SUGGESTION = "Is there an outage?"


@router.get("/ui-settings", include_in_schema=False)
def ui_settings(request: Request) -> dict:
    """What the chat page needs from the server's settings: the one message limit, and suggestions built from
    what is configured (the outage question only when a status page is)."""
    settings = request.app.state.settings
    suggestions = list(SUGGESTIONS) + ([OUTAGE_SUGGESTION] if settings.integrations.status_page_url else [])
    return {
        "max_message_chars": settings.conversation.max_message_chars,
        "status_page": bool(settings.integrations.status_page_url),
        "suggestions": suggestions,
    }


@router.get("/view/{doc_id}", include_in_schema=False)
def document_page(doc_id: str) -> FileResponse:
    """The document view a cited source opens; the page reads GET /documents/{doc_id}/sections (which checks
    who may read it) and highlights the cited section."""
    return _page("doc.html")


@router.get("/ui/{name}", include_in_schema=False)
def static_file(name: str) -> FileResponse:
    path = STATIC / name
    # one flat folder, names checked against what is there: no way out of it
    if "/" in name or "\\" in name or name.startswith(".") or path.suffix not in _MEDIA_TYPES or not path.is_file():
        raise HTTPException(status_code=404, detail=f"No UI file {name!r}.")
    return FileResponse(
        path, media_type=_MEDIA_TYPES[path.suffix], headers=SECURITY_HEADERS | {"Cache-Control": "no-cache"}
    )


@router.get("/docs", include_in_schema=False)
def api_docs() -> FileResponse:
    """Swagger UI for the API, from the swagger-ui-py package (FastAPI's own /docs loads it from a CDN,
    which a machine behind a firewall cannot reach)."""
    return _page("docs.html")


_SWAGGER_FILES = {"swagger-ui-bundle.js", "swagger-ui.css"}


@functools.lru_cache(maxsize=1)
def _swagger_static() -> Path:
    """The swagger-ui-py package's copy of Swagger UI 5 (found on the first /docs visit, not at import)."""
    return Path(str(files("swagger_ui") / "static"))


@router.get("/ui/swagger/{name}", include_in_schema=False)
def swagger_file(name: str) -> FileResponse:
    if name not in _SWAGGER_FILES:
        raise HTTPException(status_code=404, detail=f"No API-docs file {name!r}.")
    path = _swagger_static() / name
    return FileResponse(
        path, media_type=_MEDIA_TYPES[path.suffix], headers=SECURITY_HEADERS | {"Cache-Control": "max-age=86400"}
    )


@router.get("/admin/tickets", response_model=TicketList, tags=["tickets"], dependencies=[Depends(require_admin)])
def all_tickets(
    status: Literal["open", "closed"] | None = Query(None, description="Only open or only closed."),
    limit: int = Query(100, ge=1, le=200),
    resources: Resources = Depends(get_resources),
) -> TicketList:
    """Every ticket, newest first (admins; statuses as last seen, Jira is not asked)."""
    tickets = resources.tickets.store.list(status=status, limit=limit)
    return TicketList(
        tickets=[TicketSummaryOut.model_validate(t) for t in tickets], jira_enabled=resources.tickets.jira_enabled
    )
