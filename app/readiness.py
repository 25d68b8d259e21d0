"""What GET /ready reports: a real, cheap query on every store (never state cached at start-up), the data
directory's free space, and how big each store has grown."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Callable

log = logging.getLogger(__name__)

PROBE_TEXT = "is the knowledge base answering"


def _timed(check: Callable[[], object]) -> dict:
    started = time.perf_counter()
    try:
        check()
    except Exception as exc:  # noqa: BLE001 — a failing store is what /ready exists to report
        log.warning("readiness: %s: %s", type(exc).__name__, exc)
        return {
            "ok": False,
            "ms": round((time.perf_counter() - started) * 1000, 1),
            "error": f"{type(exc).__name__}: {str(exc)[:300]}",
        }
    return {"ok": True, "ms": round((time.perf_counter() - started) * 1000, 1)}


def probe_stores(resources, probe_vector: list[float]) -> dict[str, dict]:
    """store name → {"ok", "ms"[, "error"]}: the vector and lexical indexes, sessions, tickets, traces."""
    index = resources.index
    checks: dict[str, Callable[[], object]] = {
        "vector": lambda: index.vector.ping(probe_vector),
        "lexical": lambda: index.search(PROBE_TEXT, 1),
        "sessions": resources.sessions.ping,
        "tickets": lambda: resources.tickets.store.list(limit=1),
    }
    if resources.traces is not None:
        checks["traces"] = resources.traces.count
    return {name: _timed(check) for name, check in checks.items()}


def path_bytes(path: Path) -> int:
    """Bytes a file (with its SQLite -wal and -shm companions) or a folder takes; 0 when absent."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return sum(
        p.stat().st_size
        for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"))
        if p.is_file()
    )


def store_sizes(settings) -> dict[str, int]:
    """store name → bytes on disk in the data directory."""
    data = settings.storage.data_dir
    named = {
        "vector": settings.storage.chroma_dir if settings.storage.chroma_mode == "persistent" else None,
        # the embedded relational store (tickets, votes, traces, owners) and the checkpoints; the per-store
        # files are what a data dir from before the shared store still holds (0 when absent)
        "database": data / "deskmate.sqlite",
        "sessions": settings.storage.sessions_db,
        "traces": settings.storage.traces_db,
        "tickets": settings.storage.tickets_db,
        "feedback": data / "feedback.sqlite",
        "uploads": settings.storage.uploads_dir,
    }
    sizes = {name: path_bytes(path) for name, path in named.items() if path is not None}
    sizes["data_dir_total"] = path_bytes(data)
    return sizes


def names_model_state(redactors: dict) -> str:
    """ "off" (no destination removes names), "loading" (a text that needs it waits for it), "loaded", or
    "failed" (every text that needs it is refused, never passed on: the log says why)."""
    from app.adapters.redaction.loading import LoadingDetector

    loaders = {
        id(detector): detector
        for redactor in redactors.values()
        for detector in getattr(getattr(redactor, "engine", None), "pii_detectors", ())
        if isinstance(detector, LoadingDetector)
    }.values()
    if not loaders:
        return "off"  # (or loaded before the redactors were built: no loader to ask)
    if all(loader.ready for loader in loaders):
        return "loaded"
    return "failed" if any(loader.failed for loader in loaders) else "loading"
