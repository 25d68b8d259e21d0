"""Disk pressure is an answer, not a hang: writes are refused (507) while the data directory's disk is
below a floor of free space; reads go on, /ready says degraded with the reason, and a WARNING is logged at
most once a minute while it lasts.

SQLite and Chroma meet a full disk half-way through a write (plain errors at best, a write that never
returns at worst); checking free space before a write is accepted keeps them away from that edge.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)

MB = 1024 * 1024
_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH"})  # DELETE frees space: an operator may need it on a full disk
_READ_ONLY_POSTS = frozenset({"/search"})  # POST only to carry a JSON query


@dataclass(frozen=True)
class DiskState:
    path: Path
    free_bytes: int
    floor_bytes: int

    @property
    def ok(self) -> bool:
        return self.free_bytes >= self.floor_bytes

    @property
    def reason(self) -> str:
        """What is full and how much is needed, in words an operator acts on."""
        return (
            f"the disk holding the data directory {self.path} has {self.free_bytes / MB:,.0f} MB free; "
            f"deskmate keeps at least {self.floor_bytes / MB:,.0f} MB free (DESKMATE_MIN_FREE_MB), so "
            f"{(self.floor_bytes - self.free_bytes) / MB:,.0f} MB more must be freed before writes resume"
        )


class DiskGuard:
    """Free space of one directory's file system against a floor; cheap enough to ask on every write."""

    def __init__(
        self,
        path: Path,
        floor_bytes: int,
        *,
        cache_s: float = 1.0,
        warn_every_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(path)
        self.floor_bytes = floor_bytes
        self._cache_s = cache_s
        self._warn_every_s = warn_every_s
        self._clock = clock
        self._lock = threading.Lock()
        self._state: DiskState | None = None
        self._checked_at = float("-inf")
        self._warned_at = float("-inf")
        self._low = False

    def state(self) -> DiskState:
        """The current free space (at most `cache_s` old); logs the WARNING (once a minute) and the recovery."""
        with self._lock:
            now = self._clock()
            if self._state is not None and now - self._checked_at < self._cache_s:
                return self._state
            stats = os.statvfs(self.path)
            self._state = DiskState(self.path, stats.f_bavail * stats.f_frsize, self.floor_bytes)
            self._checked_at = now
            if not self._state.ok and now - self._warned_at >= self._warn_every_s:
                self._warned_at = now
                log.warning("disk space low: %s; writes answer 507 until then, reads keep working", self._state.reason)
            elif self._state.ok and self._low:
                log.info(
                    "disk space back: %.0f MB free on the data directory's disk; writes accepted again",
                    self._state.free_bytes / MB,
                )
            self._low = not self._state.ok
            return self._state


class DiskSpaceMiddleware:
    """Answers 507 to a write request while the guard's disk is below its floor (before any byte is read)."""

    def __init__(self, app: ASGIApp, *, guard_of: Callable[[], DiskGuard | None]) -> None:
        self.app = app
        self.guard_of = guard_of  # the guard lives in the lifespan's resources

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope.get("method") in _WRITE_METHODS
            and scope.get("path") not in _READ_ONLY_POSTS
        ):
            guard = self.guard_of()
            state = guard.state() if guard is not None else None
            if state is not None and not state.ok:
                from starlette.responses import JSONResponse

                from app.error_middleware import error_body, request_id_of

                detail = (
                    f"The server is out of disk space, so nothing can be saved right now: {state.reason}. "
                    "Reading and searching keep working."
                )
                body = error_body(scope.get("path", ""), 507, detail, request_id_of(scope) or "")
                await JSONResponse(status_code=507, content=body, headers={"Retry-After": "60"})(scope, receive, send)
                return
        await self.app(scope, receive, send)
