"""create_app(): the FastAPI application, its lifespan, routers and error handlers."""

from __future__ import annotations

import asyncio
import logging
import threading
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool

from app.body_limit import BodyLimitMiddleware
from app.channels.setup import build_slack, build_teams, ticket_update_loop
from app.disk_guard import DiskSpaceMiddleware
from app.error_middleware import UnexpectedErrorMiddleware
from app.errors import register_error_handlers
from app.job_worker import JobWorker, sync_kb_at_start
from app.logging_setup import configure_logging
from app.readiness import PROBE_TEXT
from app.request_origin import RequestOriginMiddleware, allowed_hosts
from app.resources import build_resources, ready_summary
from app.retention import retention_loop
from app.routers import chat, documents, health, jobs, tickets
from app.routers import feedback as feedback_router
from app.routers import graphs as graphs_router
from app.routers import insights as insights_router
from app.routers import openai_compat as openai_router
from app.routers import search as search_router
from app.routers import slack as slack_router
from app.routers import sources as sources_router
from app.routers import status as status_router
from app.routers import stream as stream_router
from app.routers import teams as teams_router
from app.routers import traces as traces_router
from app.routers import ui as ui_router
from app.settings import Settings
from app.source_schedule import SourceScheduler
from app.storage import database_url_for

log = logging.getLogger(__name__)
MULTIPART_OVERHEAD = 64 * 1024
JOB_HISTORY_S = 30 * 86400  # finished jobs are listed this long (pruned at each start)
WORKER_POLL_S = 1.0  # an upload in this process wakes the worker at once; this is for other processes' jobs


async def _close_within(resources, timeout_s: float) -> None:
    """Close the stores, waiting at most `timeout_s`: a store stuck in a write must not keep the process up
    (the closing thread is a daemon; it is abandoned with the process)."""
    closed = threading.Event()

    def close() -> None:
        try:
            resources.close()
        finally:
            closed.set()

    threading.Thread(target=close, name="close-stores", daemon=True).start()
    if not await run_in_threadpool(closed.wait, timeout_s):
        log.error("stores did not close within %g s; exiting without them", timeout_s)


def create_app(settings: Settings | None = None, **overrides: Any) -> FastAPI:
    """The app; `overrides` (embedder=, llm=, redactor=) swap adapters in tests."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        configure_logging(settings.server.log_level)
        # models load here, once, in a worker thread so the event loop stays responsive; the names model's load
        # and the parse workers start once the rest is ready (below), not alongside it
        resources = await run_in_threadpool(build_resources, settings, defer_background_loads=True, **overrides)
        # once across replicas (a lock, then content hashes), recorded as a sync_kb job
        await run_in_threadpool(sync_kb_at_start, resources)
        await run_in_threadpool(resources.jobs.prune, JOB_HISTORY_S)
        # what /ready queries the vector index with: embedded once here, so /ready itself stays a cheap query
        try:
            app.state.probe_vector = list(await run_in_threadpool(resources.embedder.embed_query, PROBE_TEXT))
        except Exception as exc:  # a broken model must not stop the start: /ready reports it, chats answer 503
            log.warning("the embedding model failed its first query (%s); /ready will report it", exc)
            app.state.probe_vector = None
        log.info("%s", await run_in_threadpool(ready_summary, resources))
        app.state.resources = resources
        retention = asyncio.create_task(retention_loop(resources, settings.retention.retention_interval_s))
        worker = (
            JobWorker(resources, resources.jobs, resources.originals, poll_s=WORKER_POLL_S)
            if settings.runs_inprocess_worker
            else None
        )
        worker_thread = worker.start_thread() if worker is not None else None
        app.state.worker = worker
        app.state.slack = await run_in_threadpool(build_slack, resources, settings)
        app.state.teams = await run_in_threadpool(build_teams, resources, settings)
        channels = [c for c in (app.state.slack, app.state.teams) if c is not None]
        ticket_updates = (
            asyncio.create_task(ticket_update_loop(channels, resources, settings.integrations.channel_ticket_poll_s))
            if channels and settings.integrations.channel_ticket_poll_s > 0
            else None
        )

        def enqueue_sync(source_id: str) -> None:  # a due source, already claimed: its sync is a job like any
            resources.jobs.enqueue("sync_source", {"source_id": source_id})
            if worker is not None:
                worker.wake()

        scheduler = (
            SourceScheduler(resources.sources, enqueue_sync, settings.jobs.source_schedule_interval_s).start()
            if resources.sources
            else None
        )
        # until they are there, a text that needs names removed (a trace record, an LLM prompt) waits for the names
        # model, and a file to index (an upload, a source sync) for the parse workers
        resources.start_background_loads()
        try:
            yield
        finally:
            retention.cancel()
            if ticket_updates is not None:
                ticket_updates.cancel()
            for channel in channels:
                channel.close()
            app.state.slack = None
            app.state.teams = None
            if scheduler is not None:
                await run_in_threadpool(scheduler.stop, settings.server.shutdown_timeout_s)
            # its job goes back to the queue at the next batch, or runs out its lease
            if worker is not None and worker_thread is not None:
                worker.stop()
                await run_in_threadpool(worker_thread.join, settings.server.shutdown_timeout_s)
            app.state.worker = None
            app.state.resources = None
            await _close_within(resources, settings.server.shutdown_timeout_s)

    app = FastAPI(
        title="deskmate",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        description="Agentic IT-support assistant: cited answers from your own documentation.",
    )
    app.state.settings = settings
    app.state.resources = None
    app.state.worker = None
    app.state.slack = None
    app.state.teams = None
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=settings.ingestion.max_upload_bytes + MULTIPART_OVERHEAD,
        limit_for_people=settings.ingestion.max_upload_bytes,
    )
    app.add_middleware(DiskSpaceMiddleware, guard_of=lambda: getattr(app.state.resources, "disk", None))
    # before anything is read: a page on another site changes nothing, a host name not ours is not answered
    app.add_middleware(
        RequestOriginMiddleware, hosts=allowed_hosts(settings.server.allowed_hosts, settings.server.host)
    )
    # outermost of ours (added last): it gives every request its id and answers whatever escaped every handler
    app.add_middleware(UnexpectedErrorMiddleware)

    register_error_handlers(app, postgres=not database_url_for(settings).startswith("sqlite"))
    app.include_router(health.router)
    app.include_router(chat.router)
    app.include_router(documents.router)
    app.include_router(jobs.router)
    app.include_router(sources_router.router)
    app.include_router(search_router.router)
    app.include_router(feedback_router.router)
    app.include_router(status_router.router)
    app.include_router(tickets.router)
    app.include_router(stream_router.router)
    app.include_router(traces_router.router)
    app.include_router(insights_router.router)
    app.include_router(graphs_router.router)
    app.include_router(ui_router.router)
    app.include_router(openai_router.router)
    app.include_router(slack_router.router)
    app.include_router(teams_router.router)
    return app
