"""Parse uploads in separate, resource-limited processes, so a hostile file cannot hang or kill the service.

`SandboxedParser` implements the `DocumentParser` port around any picklable parser factory (the app
uses `FileParser`). Each parse runs in a warm worker process that

- is started from a fresh interpreter ("forkserver" where available, else "spawn"), never forked from
  the API process, whose torch and HTTP threads a fork would copy in an undefined state;
- limits its own address space (RLIMIT_AS) and CPU time (RLIMIT_CPU, re-armed for every document, so
  even a worker whose parent died cannot spin for ever), and writes no core files;
- receives the bytes and returns plain JSON over a pipe: the parent never unpickles anything a worker
  produced, so even a worker subverted by a file could not run code in the service;
- says it is ready once its imports are done and its parser is built: the parent's wall-clock timeout of a
  parse starts only then, so a worker started on a busy machine does not eat into the first document's time;
- is killed when the parent's wall-clock timeout expires or its reply is too large, and replaced by a
  fresh one before the next upload.

Every failure becomes a `DocumentRejected` with a reason a person can act on; the index is untouched
because the indexing graph stops at the parse step.

As with any multiprocessing code, a script that builds one at import time must do so under
`if __name__ == "__main__":` (workers import the parent's main module); the CLI, `deskmate serve`,
uvicorn and pytest all do.
"""

from __future__ import annotations

import json
import logging
import math
import multiprocessing
import queue
import signal
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import PurePosixPath
from typing import Any, Callable

from core.errors import DocumentRejected
from core.ports import DocumentParser
from core.records import Block, ParsedDocument

log = logging.getLogger(__name__)

DEFAULT_MAX_RESULT_BYTES = 32 * 1024 * 1024
_PRELOAD = [
    "app.adapters.parse_sandbox",
    "app.adapters.parsers",
    "pypdf",
    "bs4",
    "markdown_it",
    "docx",
    "pptx",
    "openpyxl",
    "docutils.core",
]
_BLOCK_KINDS = {"heading", "paragraph", "list_item", "code", "table"}
_CONTENT_TYPES = {"pdf", "html", "markdown", "text", "rst", "docx", "pptx", "xlsx"}
_REJECTION_KINDS = {"unsupported_type", "too_large", "unparseable", "empty"}
_REEXPORT = "the file may be damaged or too complex; re-export it (or print it to a new PDF) and try again."
_READY = b'{"status": "ready"}'
# how long a new worker may take to import the parsers and say it is ready; not a document's time
STARTUP_TIMEOUT_S = 120.0


def _start_context():
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        # the server imports the parsers once; each worker is then a cheap fork of that small process
        context.set_forkserver_preload(_PRELOAD)
        return context
    return multiprocessing.get_context("spawn")


# --- inside the worker process -------------------------------------------------------------------
def _limit_worker(memory_mb: int) -> None:
    try:
        import resource
    except ImportError:  # Windows: no rlimits; the parent's wall-clock timeout still applies
        return
    for name, value in (("RLIMIT_AS", memory_mb * 1024 * 1024), ("RLIMIT_CORE", 0)):
        which = getattr(resource, name, None)
        if which is None:
            continue
        try:
            _, hard = resource.getrlimit(which)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))  # hard too: the worker cannot lift it again
        except (ValueError, OSError) as exc:  # e.g. macOS does not enforce RLIMIT_AS
            log.warning("parse worker could not set %s: %s", name, exc)


def _grant_cpu_seconds(seconds: int) -> None:
    """CPU time is cumulative per process: allow `seconds` more than this worker has used so far."""
    try:
        import resource
    except ImportError:
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(math.ceil(usage.ru_utime + usage.ru_stime)) + seconds
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (ValueError, OSError) as exc:
        log.warning("parse worker could not set RLIMIT_CPU: %s", exc)


def _plain(document: ParsedDocument) -> dict:
    return {
        "title": document.title,
        "content_type": document.content_type,
        "blocks": [[b.kind, b.text, b.level, b.ordered, b.in_list] for b in document.blocks],
    }


def _parse_one(parser: DocumentParser, name: str, data: bytes, max_result_bytes: int) -> tuple[bytes, bool]:
    """The JSON reply for one document, and whether the worker should exit afterwards."""
    exit_after = False
    try:
        document = parser.parse(name, data)
        reply = json.dumps({"status": "ok", "document": _plain(document)}, ensure_ascii=False)
        del document
        payload = reply.encode("utf-8", "surrogatepass")
        if len(payload) <= max_result_bytes:
            return payload, False
        reply_obj: dict[str, Any] = {"status": "too_big", "bytes": len(payload)}
    except DocumentRejected as exc:
        reply_obj = {"status": "rejected", "reason": exc.reason, "kind": exc.kind}
    except MemoryError:
        reply_obj, exit_after = {"status": "memory"}, True  # a fresh process is cheaper than trusting this heap
    except RecursionError:
        reply_obj = {"status": "error", "error": "RecursionError"}
    except Exception as exc:  # an unexpected parser bug must not end the worker loop; the parent refuses the file
        log.warning("parser failed on %s: %s: %s", PurePosixPath(name).name, type(exc).__name__, exc)
        reply_obj = {"status": "error", "error": type(exc).__name__}
    return json.dumps(reply_obj).encode("utf-8"), exit_after


def _serve(
    conn, parser_factory: Callable[[], DocumentParser], memory_mb: int, cpu_seconds: int, max_result_bytes: int
) -> None:
    """Worker main loop: one request at a time until told to stop or the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal is for the parent to handle
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s parse-worker[%(process)d] %(name)s: %(message)s"
    )
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # damaged files make pypdf chatty; the outcome is reported
    _limit_worker(memory_mb)
    parser = parser_factory()
    try:
        conn.send_bytes(_READY)
    except OSError:
        return
    while True:
        try:
            request = json.loads(conn.recv_bytes())
            if request.get("op") != "parse":
                return
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        _grant_cpu_seconds(cpu_seconds)
        payload, exit_after = _parse_one(parser, request["name"], data, max_result_bytes)
        del data
        try:
            conn.send_bytes(payload)
        except OSError:
            return
        if exit_after:
            return


# --- in the service ------------------------------------------------------------------------------
@dataclass
class _Outcome:
    status: str  # reply | timeout | died | oversized | unreachable
    reply: dict | None = None
    exitcode: int | None = None


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, context, args: tuple) -> None:
        self._context = context
        self._args = args
        self.process: BaseProcess | None = None
        self.conn: Connection | None = None
        self.ready = False  # its ready message has been read

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def ensure_started(self) -> None:
        if self.process is not None and self.process.is_alive():
            return
        self.discard()
        parent_end, child_end = self._context.Pipe(duplex=True)
        process = self._context.Process(
            target=_serve, args=(child_end, *self._args), name="deskmate-parse-worker", daemon=True
        )
        process.start()
        child_end.close()
        self.process, self.conn, self.ready = process, parent_end, False

    def _pipe(self) -> Connection:
        if self.conn is None:
            raise RuntimeError("the parse worker has not been started")
        return self.conn

    def await_ready(self, timeout_s: float) -> bool:
        """Wait for a new worker's ready message (its imports done, its parser built); False if it died first."""
        if not self.ready:
            try:
                conn = self._pipe()
                self.ready = conn.poll(timeout_s) and conn.recv_bytes(len(_READY)) == _READY
            except (EOFError, OSError):
                self.ready = False
        return self.ready

    def discard(self) -> int | None:
        """Kill the process (hung, crashed or no longer trusted); returns its exit code."""
        exitcode = None
        if self.conn is not None:
            self.conn.close()
        if self.process is not None:
            if self.process.is_alive():
                self.process.kill()
            self.process.join(timeout=5)
            exitcode = self.process.exitcode
            if exitcode is not None:
                self.process.close()  # release its sentinel fd now rather than at garbage collection
        self.process, self.conn, self.ready = None, None, False
        return exitcode

    def stop(self) -> None:
        if self.process is not None and self.process.is_alive() and self.conn is not None:
            try:
                self.conn.send_bytes(b'{"op": "stop"}')
                self.process.join(timeout=2)
            except OSError:
                pass
        self.discard()

    def exchange(self, name: str, data: bytes, timeout_s: float, max_reply_bytes: int) -> _Outcome:
        self.ensure_started()
        if not self.await_ready(STARTUP_TIMEOUT_S):  # a worker that cannot start reads nothing
            return _Outcome("died", exitcode=self.discard())
        started = time.monotonic()
        conn = self._pipe()
        try:
            conn.send_bytes(json.dumps({"op": "parse", "name": name}).encode("utf-8"))
            conn.send_bytes(data)
        except OSError:  # the worker had died since its last job (e.g. killed from outside)
            self.discard()
            return _Outcome("unreachable")
        if not conn.poll(max(0.0, timeout_s - (time.monotonic() - started))):
            self.discard()
            return _Outcome("timeout")
        try:
            raw = conn.recv_bytes(max_reply_bytes)
        except (EOFError, ConnectionError):
            return _Outcome("died", exitcode=self.discard())
        except OSError:  # longer than max_reply_bytes: the pipe is now out of step, so the worker goes
            self.discard()
            return _Outcome("oversized")
        try:
            reply = json.loads(raw)
        except ValueError:
            self.discard()
            return _Outcome("reply", reply={"status": "error", "error": "unreadable reply"})
        if reply.get("status") == "memory":
            self.discard()  # it exits after a MemoryError; reap it now
        return _Outcome("reply", reply=reply)


def _document_from(plain: Any) -> ParsedDocument:
    """Rebuild the worker's JSON as records, checking every field: nothing unexpected gets through."""
    if (
        not isinstance(plain, dict)
        or not isinstance(plain.get("title"), str)
        or plain.get("content_type") not in _CONTENT_TYPES
        or not isinstance(plain.get("blocks"), list)
    ):
        raise ValueError("malformed document")
    blocks = []
    for item in plain["blocks"]:
        if not (
            isinstance(item, list)
            and len(item) == 5
            and item[0] in _BLOCK_KINDS
            and isinstance(item[1], str)
            and type(item[2]) is int
            and 0 <= item[2] <= 100
            and isinstance(item[3], bool)
            and isinstance(item[4], bool)
        ):
            raise ValueError("malformed block")
        blocks.append(Block(item[0], item[1], item[2], item[3], item[4]))
    return ParsedDocument(title=plain["title"], content_type=plain["content_type"], blocks=blocks)


class SandboxedParser:
    """A `DocumentParser` that parses in a small pool of time- and memory-limited worker processes."""

    def __init__(
        self,
        parser_factory: Callable[[], DocumentParser],
        *,
        timeout_s: float = 5.0,
        memory_mb: int = 512,
        workers: int = 1,
        cpu_seconds: int | None = None,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        start: bool = True,
    ) -> None:
        """`parser_factory` must be picklable (a class or module-level function): workers build their own.
        `start=False`: the workers start at `start()` or at the first parse (the service starts them once it is
        ready: the forkserver's imports would take a core from the start-up)."""
        if timeout_s <= 0 or memory_mb < 64 or workers < 1:
            raise ValueError("timeout_s > 0, memory_mb >= 64 and workers >= 1 are required")
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.max_result_bytes = max_result_bytes
        # CPU time cannot outrun wall-clock time in a single-threaded worker, so the parent's timeout
        # fires first; RLIMIT_CPU is the backstop for a worker whose parent is gone or stuck.
        self.cpu_seconds = cpu_seconds if cpu_seconds is not None else int(math.ceil(timeout_s)) + 1
        context = _start_context()
        self._context_name = context.get_start_method()
        args = (parser_factory, memory_mb, self.cpu_seconds, max_result_bytes)
        self._workers = [_Worker(context, args) for _ in range(workers)]
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._closed = threading.Event()
        self.restarts = 0
        # the workers start on a thread of their own (the forkserver imports the parsers: seconds on a busy
        # machine), so the service is ready before they are; the first parse waits for them (`_started`)
        self._starter = threading.Thread(target=self._start_workers, name="parse-sandbox-start", daemon=True)
        self._start_lock = threading.Lock()
        if start:
            self.start()

    def start(self) -> None:
        """Start the workers on their thread (once; a later call does nothing)."""
        with self._start_lock:
            if not self.started:
                self._starter.start()

    @property
    def started(self) -> bool:
        """True once the workers' start has begun (at once unless built with `start=False`)."""
        return self._starter.ident is not None

    def _start_workers(self) -> None:
        started = time.monotonic()
        for worker in self._workers:
            try:
                worker.ensure_started()
            except OSError as exc:  # the first parse tries again (`_return`'s restart, or the exchange's)
                log.error("could not start a parse worker: %s", exc)
            self._idle.put(worker)
        log.info(
            "parse sandbox: %d worker(s) via %s in %.2f s (timeout %g s, memory %d MB)",
            len(self._workers),
            self._context_name,
            time.monotonic() - started,
            self.timeout_s,
            self.memory_mb,
        )

    def _started(self) -> None:
        """Wait until the workers have been started (starting them if nothing has: at most once per sandbox)."""
        self.start()
        self._starter.join()

    def wait_ready(self, timeout_s: float = STARTUP_TIMEOUT_S) -> bool:
        """Wait until every idle worker has started (False if one could not; the next upload starts another)."""
        deadline = time.monotonic() + timeout_s
        self._started()
        return all(w.await_ready(max(0.0, deadline - time.monotonic())) for w in list(self._idle.queue))

    def worker_pids(self) -> list[int]:
        self._started()
        return [w.pid for w in self._workers if w.pid is not None]

    def parse(self, name: str, data: bytes) -> ParsedDocument:
        if self._closed.is_set():
            raise RuntimeError("the parse sandbox has been closed")
        filename = PurePosixPath(name).name or name
        self._started()
        try:  # bounded: every exchange ends within its timeout, so a queue of waiters drains
            worker = self._idle.get(timeout=self.timeout_s * (len(self._workers) + 2) + 30)
        except queue.Empty:
            raise DocumentRejected(
                "deskmate is busy reading other documents; try again in a minute.", kind="busy"
            ) from None
        started = time.monotonic()
        try:
            outcome = worker.exchange(name, data, self.timeout_s, self.max_result_bytes)
            if outcome.status == "unreachable":  # nothing was parsed yet, so one retry on a fresh worker is safe
                outcome = worker.exchange(name, data, self.timeout_s, self.max_result_bytes)
        finally:
            self._return(worker)
        elapsed = time.monotonic() - started
        if outcome.status == "reply" and outcome.reply is not None and outcome.reply.get("status") == "ok":
            try:
                return _document_from(outcome.reply.get("document"))
            except ValueError as exc:
                log.error("parse worker returned a malformed document for %s: %s", filename, exc)
                outcome = _Outcome("reply", reply={"status": "error", "error": "malformed reply"})
        rejection = self._rejection(filename, outcome)
        log.warning("refused %s after %.2f s: %s", filename, elapsed, rejection.reason)
        raise rejection

    def _return(self, worker: _Worker) -> None:
        if self._closed.is_set():
            worker.stop()
            return
        if worker.process is None or not worker.process.is_alive():
            self.restarts += 1
            try:  # warm again before the next upload needs it
                worker.ensure_started()
            except OSError as exc:
                log.error("could not start a parse worker (will retry on the next upload): %s", exc)
        self._idle.put(worker)

    def _rejection(self, filename: str, outcome: _Outcome) -> DocumentRejected:
        reply = outcome.reply or {}
        status = reply.get("status") if outcome.status == "reply" else outcome.status
        if status == "rejected":
            kind = str(reply["kind"]) if reply.get("kind") in _REJECTION_KINDS else "unparseable"
            return DocumentRejected(str(reply.get("reason") or "The document could not be read.")[:1000], kind=kind)
        if status == "timeout":
            return DocumentRejected(
                f"{filename} took longer than {self.timeout_s:g} s to read — {_REEXPORT}", kind="unparseable"
            )
        if status == "memory":
            return DocumentRejected(
                f"{filename} needed more than {self.memory_mb} MB of memory to read — it may "
                f"be a decompression bomb, or {_REEXPORT}",
                kind="unparseable",
            )
        if status in ("too_big", "oversized"):
            return DocumentRejected(
                f"{filename} produced more text than deskmate indexes as one document. "
                "Split it into smaller files and upload those.",
                kind="too_large",
            )
        if status == "died" and outcome.exitcode == -getattr(signal, "SIGXCPU", -1):
            return DocumentRejected(
                f"{filename} used more than {self.cpu_seconds} s of processing time to read — {_REEXPORT}",
                kind="unparseable",
            )
        if status == "died":
            log.warning("parse worker for %s exited with code %s", filename, outcome.exitcode)
            return DocumentRejected(
                f"The reader stopped unexpectedly while reading {filename} (it may have run out "
                f"of memory) — {_REEXPORT}",
                kind="unparseable",
            )
        detail = reply.get("error") or status
        return DocumentRejected(
            f"{filename} could not be read (the reader failed: {str(detail)[:80]}) — {_REEXPORT}", kind="unparseable"
        )

    def close(self) -> None:
        """Stop every worker; idempotent. A parse still running finishes and its worker is stopped after."""
        if self._closed.is_set():
            return
        self._closed.set()
        with self._start_lock:
            never_started = not self.started
        if never_started:
            return  # (no worker to stop)
        self._started()
        while True:
            try:
                self._idle.get_nowait().stop()
            except queue.Empty:
                break
