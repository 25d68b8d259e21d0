"""How `deskmate serve` runs uvicorn: sockets that cannot be held open by slow clients, and a shutdown that
ends in bounded time whatever is stuck.

- Header timeout: uvicorn closes idle keep-alive connections (`timeout_keep_alive`) but waits forever for
  a request's headers; a client that sends them a byte at a time holds a descriptor indefinitely. The
  protocol below closes a connection whose request line and headers are not complete in time.
- Bounded shutdown: on SIGTERM/SIGINT uvicorn stops accepting, lets in-flight requests finish for
  `timeout_graceful_shutdown`, then runs the lifespan's shutdown. A write stuck in a store (a full disk)
  can outlive all of that; a watchdog started with the first signal ends the process after a hard limit.
"""

from __future__ import annotations

import logging
import os
import sys
import threading

import uvicorn

log = logging.getLogger(__name__)


def header_timeout_protocol(seconds: float) -> type:
    """uvicorn's httptools protocol, closing connections whose headers take longer than `seconds`."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class HeaderTimeoutProtocol(HttpToolsProtocol):
        _header_timer = None

        def _arm_header_timer(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(seconds, self._headers_too_slow)

        def _disarm_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                log.info(
                    "closed a connection from %s: its request headers took over %g s",
                    self.client[0] if self.client else "?",
                    seconds,
                )
                self.transport.close()

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm_header_timer()  # a connection that never sends a request holds a socket too

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm_header_timer()  # the next request on a kept-alive connection

        def on_headers_complete(self) -> None:
            self._disarm_header_timer()
            super().on_headers_complete()

        def connection_lost(self, exc) -> None:
            self._disarm_header_timer()
            super().connection_lost(exc)

    return HeaderTimeoutProtocol


class BoundedServer(uvicorn.Server):
    """uvicorn.Server whose first exit signal also starts a watchdog that ends the process after
    `hard_limit_s` (graceful shutdown and the lifespan's closing get that long, together)."""

    def __init__(self, config: uvicorn.Config, *, hard_limit_s: float) -> None:
        super().__init__(config)
        self.hard_limit_s = hard_limit_s
        self._watchdog: threading.Timer | None = None

    def handle_exit(self, sig, frame) -> None:
        if self._watchdog is None:
            self._watchdog = threading.Timer(self.hard_limit_s, _exit_now, args=(self.hard_limit_s,))
            self._watchdog.daemon = True
            self._watchdog.start()
        super().handle_exit(sig, frame)


def _exit_now(limit_s: float) -> None:
    log.error(
        "shutdown did not finish within %g s (a store write is stuck?): exiting now; work still in "
        "flight is abandoned, and the next start repairs half-written documents",
        limit_s,
    )
    for handler in logging.getLogger().handlers:
        try:
            handler.flush()
        except Exception:  # noqa: BLE001 — exiting regardless
            pass
    sys.stderr.flush()
    os._exit(1)


def uvicorn_config(app, settings, *, host: str, port: int) -> uvicorn.Config:
    """The server's socket and shutdown settings, from deskmate's (documented in the operations notes)."""
    try:
        http: type | str = header_timeout_protocol(settings.server.header_timeout_s)
    except ImportError:  # httptools is part of uvicorn[standard]; without it, h11 and no header timeout
        log.warning("httptools is not installed: slow-header connections are not timed out")
        http = "h11"
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=settings.server.log_level.lower(),
        http=http,
        timeout_keep_alive=settings.server.keep_alive_s,
        timeout_graceful_shutdown=max(1, round(settings.server.shutdown_timeout_s)),
    )
