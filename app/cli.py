"""The `deskmate` command: ingest documents, ask a question, or serve the API."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

log = logging.getLogger("deskmate")


def _settings(args: argparse.Namespace):
    from app.settings import Settings

    overrides = {}
    if getattr(args, "data_dir", None):
        overrides["data_dir"] = Path(args.data_dir)
    return Settings(**overrides)


def cmd_ingest(args: argparse.Namespace) -> int:
    """Index files through the job queue: each file is stored and queued like an upload, then run here (or by
    any `deskmate worker` that claims it first), and this command waits for all of them."""
    from tqdm import tqdm

    from app.includes import IncludeResolver
    from app.indexing_service import IndexingService, supported_files
    from app.job_worker import JobWorker, enqueue_index
    from app.resources import build_resources

    settings = _settings(args)
    resources = build_resources(settings)
    try:
        batches: list[tuple[Path, list[Path]]] = []
        for raw in args.paths:
            path = Path(raw).resolve()
            if not path.exists():
                sys.stderr.write(f"deskmate: {raw}: no such file or folder\n")
                return 2
            batches.append((path.parent, supported_files(path)))  # sources read "<prefix>/<folder>/<file>"
        # everything named on one command line is one batch: an article includes fragments from any of it
        batch = {source: file for root, files in batches
                 for source, file in IndexingService.sources(files, root=root, prefix=args.prefix).items()}
        includes = IncludeResolver.from_paths(batch)
        counts: dict[str, int] = {}
        queued: dict[str, str] = {}  # job id → source
        for source, path in batch.items():
            if includes.is_fragment(source):
                counts["included"] = counts.get("included", 0) + 1
                resources.indexer.skip_fragment(source)
                continue
            # stored with its includes resolved within this batch: what any worker indexes
            data = includes.expand(source, path.read_bytes())
            queued[enqueue_index(resources, source, path.name, data, {})["id"]] = source
        worker = JobWorker(resources, resources.jobs, resources.originals)
        pending = list(queued)
        with tqdm(total=len(queued), unit="file", desc="indexing", disable=args.quiet) as bar:
            while pending:
                ran = worker.run_next(ids=pending)
                still = []
                for job_id in pending:
                    job = resources.jobs.get(job_id)
                    if job["state"] in ("queued", "running"):
                        still.append(job_id)
                        continue
                    status = (job["result"] or {}).get("status") if job["state"] == "done" else job["state"]
                    counts[status] = counts.get(status, 0) + 1
                    if job["state"] != "done":
                        tqdm.write(f"  skipped {queued[job_id]}: {job['error']}", file=sys.stderr)
                    bar.set_postfix_str(queued[job_id].rsplit("/", 1)[-1][-30:])
                    bar.update(1)
                pending = still
                if pending and not ran:  # the rest run on other workers: wait for them
                    time.sleep(0.5)
        words = {"included": "included in other files"}
        summary = ", ".join(f"{n} {words.get(status, status)}" for status, n in sorted(counts.items())) \
            or "no supported files"
        sys.stdout.write(f"{summary}; the index now holds {resources.index.count()} chunks\n")
        return 1 if counts.get("failed") or counts.get("cancelled") else 0
    finally:
        resources.close()


def cmd_worker(args: argparse.Namespace) -> int:
    """Run ingestion jobs from the queue until SIGTERM or Ctrl-C (server mode: next to the replicas)."""
    import signal
    import threading

    from app.job_worker import JobWorker
    from app.resources import build_resources

    settings = _settings(args)
    resources = build_resources(settings)  # the models load here; an embedded data dir in use stops here
    worker = JobWorker(resources, resources.jobs, resources.originals, poll_s=args.poll)

    def stop(signum, _frame) -> None:
        log.info("worker %s: %s received; stopping after the current batch", worker.name,
                 signal.Signals(signum).name)
        worker.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    thread = threading.Thread(target=worker.serve, name="job-worker", daemon=True)
    try:
        thread.start()
        log.info("deskmate worker %s ready: database=%s, chroma=%s", worker.name, resources.database.describe(),
                 settings.chroma_mode)
        while thread.is_alive() and not worker.stopping.is_set():
            thread.join(0.5)
        # a running job goes back to the queue at its next batch; one stuck longer is abandoned and its
        # lease runs out, so another worker runs it again from the start
        thread.join(settings.shutdown_timeout_s)
        if thread.is_alive():
            log.warning("worker %s: job %s did not stop within %g s; abandoned to its lease", worker.name,
                        worker.current, settings.shutdown_timeout_s)
    finally:
        resources.close()
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    if args.local:
        return _ask_locally(args)
    from app.cli_client import ServerUnavailable, TurnRefused, ask_server, default_url, source_link

    settings = _settings(args)
    base_url = (args.url or default_url(settings)).rstrip("/")
    payload = {"message": args.question, **({"session_id": args.session} if args.session else {}),
               **({"user_os": args.os} if args.os else {})}
    headers = {"X-Deskmate-User": args.user_token} if args.user_token else {}
    streamed: list[str] = []

    def write(text: str) -> None:
        if not streamed:  # the reply's body: its "Sources:" footer is printed below as links
            text = _without_sources_footer(text)
        streamed.append(text)
        sys.stdout.write(text)
        sys.stdout.flush()

    try:
        turn = ask_server(base_url, payload, write, headers=headers)
    except ServerUnavailable as exc:
        sys.stderr.write(f"deskmate: {exc}. Start one with `deskmate serve` (or `make run`), point --url or "
                         f"DESKMATE_URL at yours, or add --local to load the models in this process (about 10 s).\n")
        return 2
    except TurnRefused as exc:
        sys.stderr.write(f"\ndeskmate: the server refused the question ({exc.status}): {exc.detail}\n")
        return 1
    envelope = turn.envelope
    body = _without_sources_footer(envelope.get("answer", ""))
    shown = "".join(streamed)
    if body.strip() != shown.strip():
        if shown and body.endswith(shown.strip()):  # notices (redaction, fallback) come before the reply
            sys.stdout.write("\n\n" + body[: len(body) - len(shown.strip())].strip())
        else:
            sys.stdout.write(("\n\n(deskmate replaced the reply above; this is its answer:)\n" if shown else "") + body)
    sys.stdout.write("\n")
    sources = envelope.get("sources") or []
    if sources:
        sys.stdout.write("\nSources:\n")
        for source in sources:
            title = source["title"] + (f" › {source['section'].replace(' > ', ' › ')}" if source.get("section") else "")
            sys.stdout.write(f"[{source['n']}] {title}\n    {source_link(base_url, source)}\n")
    sys.stdout.write(f"\n(session {envelope.get('session_id')}, action {envelope.get('action')}; "
                     f"continue with --session {envelope.get('session_id')})\n")
    return 0


def _without_sources_footer(text: str) -> str:
    head, marker, _ = text.rpartition("\n\nSources:\n")
    return head if marker else text


def _ask_locally(args: argparse.Namespace) -> int:
    """--local: load the models in this process and answer without a server (about 10 s before the answer)."""
    from app.resources import build_resources, sync_bundled_kb
    from app.schemas import clean_message

    settings = _settings(args)
    resources = build_resources(settings)
    try:
        if not args.no_sync:
            sync_bundled_kb(resources)
        turn = resources.chat.ask(clean_message(args.question), session_id=args.session, user_os=args.os)
        sys.stdout.write(turn.output.get("answer", "") + "\n")
        sys.stdout.write(f"\n(session {turn.session_id}, action {turn.output.get('action')}, "
                         f"{turn.duration_ms:.0f} ms)\n")
        return 0
    finally:
        resources.close()


def cmd_serve(args: argparse.Namespace) -> int:
    from app.data_dir_lock import hold_data_dir
    from app.main import create_app
    from app.resources import load_answer_policy
    from app.server import BoundedServer, uvicorn_config

    from app.memory_profile import limit_malloc_arenas, start_from_settings

    limit_malloc_arenas()  # first, before any thread: RSS stays flat under load (app/memory_profile.py)
    settings = _settings(args)
    start_from_settings(settings)  # DESKMATE_TRACEMALLOC_FILE: a memory investigation, on SIGUSR1
    load_answer_policy(settings)  # a broken DESKMATE_CONFIG stops here, listing every problem, before serving
    # a second process on the same embedded data directory stops here, before loading a model
    lock = hold_data_dir(settings.data_dir) if settings.chroma_mode == "persistent" else None
    try:
        config = uvicorn_config(create_app(settings), settings, host=args.host or settings.host,
                                port=args.port or settings.port)
        server = BoundedServer(config, hard_limit_s=settings.shutdown_timeout_s + 10)
        server.run()
    finally:
        if lock is not None:
            lock.release()
    return 0 if server.started else 3  # uvicorn has logged why start-up failed


def _no_embedding(text: str):
    raise RuntimeError("the vacuum pass never embeds")


def cmd_db_vacuum(args: argparse.Namespace) -> int:
    """Apply retention now and rewrite the SQLite stores compactly; safe while `deskmate serve` runs (SQLite
    locks each file for the moment it is rewritten; it needs about the store's size in free space)."""
    from app.adapters.feedback import FeedbackStore
    from app.adapters.memory import SessionStore
    from app.adapters.redactor import PatternRedactor
    from app.adapters.traces import TraceStore
    from app.readiness import store_sizes
    from app.retention import run_retention
    from app.storage import Database, database_url_for

    settings = _settings(args)
    if not settings.data_dir.is_dir() and not settings.database_url:
        print(f"deskmate: no data directory at {settings.data_dir}; nothing to vacuum", file=sys.stderr)
        return 2
    before = store_sizes(settings)
    database = Database.open(database_url_for(settings))
    sessions = SessionStore(database, checkpoints=settings.sessions_db)
    traces = TraceStore(database, redactor=PatternRedactor(), retention_days=settings.trace_retention_days,
                        max_runs=settings.trace_max_runs, max_bytes=int(settings.trace_max_mb * 1024 * 1024))
    # no embedder: pruning answers never embeds a question
    answers = FeedbackStore(database, embed=_no_embedding, vote_window_s=settings.feedback_vote_window_hours * 3600)
    try:
        report = run_retention(sessions, traces, session_idle_s=settings.session_idle_days * 86400, vacuum=True,
                               answers=answers)
    finally:
        sessions.close()
        traces.close()
        database.close()
    after = store_sizes(settings)
    sys.stdout.write(f"{report.sessions_expired} idle session(s) expired, {report.checkpoints_pruned} old "
                     f"checkpoint(s), {report.answers_pruned} unvoted answer(s) and {report.traces_pruned} "
                     f"trace(s) pruned in {report.duration_ms:.0f} ms\n")
    for name in ("sessions", "database", "data_dir_total"):
        sys.stdout.write(f"  {name}: {before[name]:,} -> {after[name]:,} bytes\n")
    return 0


def cmd_user_token(args: argparse.Namespace) -> int:
    """Print a signed X-Deskmate-User token, as the portal would send it (for trying sign-in out)."""
    from app.identity import IdentityError, make_user_token, verify_user_token

    settings = _settings(args)
    if settings.user_token_secret is None:
        print("deskmate: DESKMATE_USER_TOKEN_SECRET is not set, so there is nothing to sign with.", file=sys.stderr)
        return 2
    secret = settings.user_token_secret.get_secret_value()
    groups = [g for g in (args.groups or "").split(",") if g.strip()]
    token = make_user_token(secret, args.user, groups, ttl_s=args.ttl)
    try:
        # the same check the API makes: a bad user id or group, or a --ttl beyond the maximum, fails here
        verify_user_token(token, secret, max_ttl_s=settings.user_token_max_ttl_s)
    except IdentityError as exc:
        print(f"deskmate: {exc}", file=sys.stderr)
        return 2
    print(token)
    return 0


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    """Bring the configured database's schema to the newest revision (start-up does the same)."""
    from app.adapters.memory import SessionStore
    from app.storage import Database, DatabaseUnavailable, database_url_for

    settings = _settings(args)
    try:
        database = Database(database_url_for(settings))
        revision = database.upgrade()
        SessionStore(database, checkpoints=settings.sessions_db).close()  # the checkpointer's own tables
    except DatabaseUnavailable as exc:
        print(f"deskmate: {exc}", file=sys.stderr)
        return 1
    print(f"{database.describe()}: schema at revision {revision}")
    database.close()
    return 0


def cmd_db_migrate_from_sqlite(args: argparse.Namespace) -> int:
    """Copy an SQLite data dir's sessions, tickets, votes and traces into the configured database."""
    from app.adapters.memory import SessionStore
    from app.storage import Database, DatabaseUnavailable, database_url_for
    from app.storage.import_sqlite import import_data_dir

    settings = _settings(args)
    source = Path(args.path).resolve()
    try:
        database = Database.open(database_url_for(settings))
    except DatabaseUnavailable as exc:
        print(f"deskmate: {exc}", file=sys.stderr)
        return 1
    if not database.is_postgres and Path(settings.data_dir).resolve() == source:
        print("deskmate: the source is the data dir deskmate already uses; set DESKMATE_DATABASE_URL to the "
              "database to copy it into", file=sys.stderr)
        return 2
    sessions = SessionStore(database, checkpoints=settings.sessions_db)
    try:
        report = import_data_dir(source, database, sessions)
    except FileNotFoundError as exc:
        print(f"deskmate: {exc}", file=sys.stderr)
        return 2
    finally:
        sessions.close()
        database.close()
    print(f"copied {source} into {database.describe()}:")
    for line in report.lines():
        print(f"  {line}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="deskmate", description="Agentic IT-support assistant.")
    parser.add_argument("--data-dir", help="data folder (default: $DESKMATE_DATA_DIR or ./data)")
    sub = parser.add_subparsers(dest="command", required=True)

    ingest = sub.add_parser("ingest", help="index files or folders (PDF, HTML, Markdown, text)")
    ingest.add_argument("paths", nargs="+", help="files or folders to index")
    ingest.add_argument("--prefix", default="files", help="source prefix shown in citations (default: files)")
    ingest.add_argument("--quiet", action="store_true", help="no progress bar")
    ingest.set_defaults(func=cmd_ingest)

    ask = sub.add_parser("ask", help="ask a running deskmate one question and print the answer as it arrives")
    ask.add_argument("question")
    ask.add_argument("--url", help="the deskmate to ask (default: $DESKMATE_URL, else http://$DESKMATE_HOST:"
                                   "$DESKMATE_PORT, i.e. http://127.0.0.1:8000)")
    ask.add_argument("--session", help="continue this session id")
    ask.add_argument("--os", choices=["windows", "macos", "linux"], help="your operating system")
    ask.add_argument("--user-token", help="a signed X-Deskmate-User token, when the server has sign-in on")
    ask.add_argument("--local", action="store_true",
                     help="no server: load the models in this process and answer from the local data folder")
    ask.add_argument("--no-sync", action="store_true",
                     help="with --local: do not index the bundled knowledge base first")
    ask.set_defaults(func=cmd_ask)

    worker = sub.add_parser("worker", help="run ingestion jobs (uploads, source syncs) from the queue until stopped")
    worker.add_argument("--poll", type=float, default=1.0, help="seconds between looks at an empty queue (default 1)")
    worker.set_defaults(func=cmd_worker)

    serve = sub.add_parser("serve", help="run the HTTP API")
    serve.add_argument("--host", help="bind address (default: $DESKMATE_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: $DESKMATE_PORT or 8000)")
    serve.set_defaults(func=cmd_serve)

    db = sub.add_parser("db", help="the relational store: upgrade its schema, copy an SQLite data dir into it, "
                                   "or vacuum it")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    db_sub.add_parser("upgrade", help="run the schema migrations ($DESKMATE_DATABASE_URL, or the embedded "
                                      "SQLite file)").set_defaults(func=cmd_db_upgrade)
    migrate = db_sub.add_parser("migrate-from-sqlite", help="copy an SQLite data dir (sessions, tickets, votes, "
                                                            "traces) into $DESKMATE_DATABASE_URL")
    migrate.add_argument("path", help="the data dir to copy from (it is only read)")
    migrate.set_defaults(func=cmd_db_migrate_from_sqlite)
    vacuum = db_sub.add_parser("vacuum", help="expire idle sessions, prune checkpoints and traces, compact the files "
                                              "(safe while serving)")
    vacuum.set_defaults(func=cmd_db_vacuum)

    token = sub.add_parser("user-token", help="print a signed X-Deskmate-User token (needs DESKMATE_USER_TOKEN_SECRET)")
    token.add_argument("--user", required=True, help="the user id (the token's sub)")
    token.add_argument("--groups", help="comma-separated groups, e.g. finance,hr")
    token.add_argument("--ttl", type=int, default=3600, help="seconds until it expires (default: 3600)")
    token.set_defaults(func=cmd_user_token)
    return parser


def main(argv: list[str] | None = None) -> int:
    from app.logging_setup import configure_logging

    from pydantic import ValidationError

    from app.config_file import ConfigError
    from app.data_dir_lock import DataDirInUse

    args = build_parser().parse_args(argv)
    configure_logging("INFO" if args.command in ("serve", "worker") else "WARNING")
    try:
        return args.func(args)
    except ValidationError as exc:  # a setting is wrong: say which and why, no traceback
        problems = "; ".join(  # the variable, then why (never its value: it may be a key)
            (f"{e['loc'][0]}: " if e.get("loc") else "") + str(e.get("msg", "")).removeprefix("Value error, ")
            for e in exc.errors())
        print(f"deskmate: configuration refused: {problems}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(f"deskmate: configuration file refused: {exc}", file=sys.stderr)
        return 2
    except DataDirInUse as exc:
        if args.command == "ingest":  # the running server has the queue: hand it the files instead
            print(f"deskmate: cannot ingest here: {exc}. Upload the files to that deskmate (POST /documents or the "
                  "admin page), or stop it and run `deskmate ingest` again.", file=sys.stderr)
            return 3
        print(f"deskmate: not starting: {exc}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    raise SystemExit(main())
