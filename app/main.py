"""create_app(): the FastAPI application, its lifespan, routers and error handlers."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from app.errors import register_error_handlers
from app.logging_setup import configure_logging
from app.resources import build_resources, sync_bundled_kb
from app.routers import chat, documents, health
from app.settings import Settings

log = logging.getLogger(__name__)
MULTIPART_OVERHEAD = 64 * 1024


def create_app(settings: Settings | None = None, **overrides: Any) -> FastAPI:
    """The app; `overrides` (embedder=, llm=, redactor=) swap adapters in tests."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        configure_logging(settings.log_level)
        # models load here, once, in a worker thread so the event loop stays responsive
        resources = await run_in_threadpool(build_resources, settings, **overrides)
        await run_in_threadpool(sync_bundled_kb, resources)
        app.state.resources = resources
        try:
            yield
        finally:
            app.state.resources = None
            resources.close()

    app = FastAPI(title="deskmate", version="0.1.0", lifespan=lifespan,
                  description="Agentic IT-support assistant: cited answers from your own documentation.")
    app.state.settings = settings
    app.state.resources = None

    @app.middleware("http")
    async def refuse_oversized_bodies(request: Request, call_next):
        # refuse before the multipart parser spools a huge body to disk
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > settings.max_upload_bytes + MULTIPART_OVERHEAD:
            return JSONResponse(status_code=413, content={
                "detail": f"The request is {int(length):,} bytes; uploads are limited to "
                          f"{settings.max_upload_bytes:,} bytes."})
        return await call_next(request)

    register_error_handlers(app)
    app.include_router(health.router)
    app.include_router(chat.router)
    app.include_router(documents.router)
    return app
