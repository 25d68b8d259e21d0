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
        batch = {
            source: file
            for root, files in batches
            for source, file in IndexingService.sources(files, root=root, prefix=args.prefix).items()
        }
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
                    # a done job's result always carries the index status ("new", "unchanged", …)
                    status = str((job["result"] or {}).get("status") if job["state"] == "done" else job["state"])
                    counts[status] = counts.get(status, 0) + 1
                    if job["state"] != "done":
                        tqdm.write(f"  skipped {queued[job_id]}: {job['error']}", file=sys.stderr)
                    bar.set_postfix_str(queued[job_id].rsplit("/", 1)[-1][-30:])
                    bar.update(1)
                pending = still
                if pending and not ran:  # the rest run on other workers: wait for them
                    time.sleep(0.5)
        words = {"included": "included in other files"}
        summary = (
            ", ".join(f"{n} {words.get(status, status)}" for status, n in sorted(counts.items()))
            or "no supported files"
        )
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
        log.info("worker %s: %s received; stopping after the current batch", worker.name, signal.Signals(signum).name)
        worker.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    thread = threading.Thread(target=worker.serve, name="job-worker", daemon=True)
    try:
        thread.start()
        log.info(
            "deskmate worker %s ready: database=%s, chroma=%s",
            worker.name,
            resources.database.describe(),
            settings.storage.chroma_mode,
        )
        while thread.is_alive() and not worker.stopping.is_set():
            thread.join(0.5)
        # a running job goes back to the queue at its next batch; one stuck longer is abandoned and its
        # lease runs out, so another worker runs it again from the start
        thread.join(settings.server.shutdown_timeout_s)
        if thread.is_alive():
            log.warning(
                "worker %s: job %s did not stop within %g s; abandoned to its lease",
                worker.name,
                worker.current,
                settings.server.shutdown_timeout_s,
            )
    finally:
        resources.close()
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    if args.local:
        return _ask_locally(args)
    from app.cli_client import ServerUnavailable, TurnRefused, ask_server, default_url, source_link

    settings = _settings(args)
    base_url = (args.url or default_url(settings)).rstrip("/")
    payload = {
        "message": args.question,
        "channel": "cli",
        **({"session_id": args.session} if args.session else {}),
        **({"user_os": args.os} if args.os else {}),
    }
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
        sys.stderr.write(
            f"deskmate: {exc}. Start one with `deskmate serve` (or `make run`), point --url or "
            f"DESKMATE_URL at yours, or add --local to load the models in this process (about 10 s).\n"
        )
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
    sys.stdout.write(
        f"\n(session {envelope.get('session_id')}, action {envelope.get('action')}; "
        f"continue with --session {envelope.get('session_id')})\n"
    )
    return 0


def _without_sources_footer(text: str) -> str:
    head, marker, _ = text.rpartition("\n\nSources:\n")
    return head if marker else text


def _ask_locally(args: argparse.Namespace) -> int:
    """--local: load the models in this process and answer without a server (about 10 s before the answer)."""
    from app.chat_service import TurnRequest
    from app.indexing_service import sync_bundled_kb
    from app.resources import build_resources
    from core.errors import InvalidRequest

    settings = _settings(args)
    resources = build_resources(settings)
    try:
        if not args.no_sync:
            sync_bundled_kb(resources)
        try:
            turn = resources.chat.ask(
                TurnRequest(args.question, session_id=args.session, user_os=args.os, channel="cli")
            )
        except InvalidRequest as exc:
            sys.stderr.write(f"deskmate: {exc}\n")
            return 1
        sys.stdout.write(turn.output.get("answer", "") + "\n")
        sys.stdout.write(
            f"\n(session {turn.session_id}, action {turn.output.get('action')}, {turn.duration_ms:.0f} ms)\n"
        )
        return 0
    finally:
        resources.close()


def cmd_slack(args: argparse.Namespace) -> int:
    """Answer Slack over Socket Mode: deskmate opens the connection, so no inbound call from Slack is needed.
    Over HTTP (`POST /slack/events`) `deskmate serve` answers Slack by itself."""
    import threading

    settings = _settings(args)
    if not args.socket:
        print("deskmate serve answers Slack at POST /slack/events; use `deskmate slack --socket` for Socket Mode.")
        return 2
    if not settings.integrations.slack_enabled or settings.integrations.slack_app_token is None:
        print(
            "error: Socket Mode needs DESKMATE_SLACK_BOT_TOKEN, DESKMATE_SLACK_SIGNING_SECRET and "
            "DESKMATE_SLACK_APP_TOKEN (an app-level token with connections:write).",
            file=sys.stderr,
        )
        return 2
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    from app.channels.setup import build_slack
    from app.resources import build_resources

    resources = build_resources(settings)
    slack = build_slack(resources, settings)
    stopping = threading.Event()

    def tell_ticket_changes() -> None:
        while not stopping.wait(settings.integrations.channel_ticket_poll_s or 60):
            if settings.integrations.channel_ticket_poll_s:
                try:
                    slack.tell_ticket_changes(resources.tickets)
                except Exception as exc:  # the next round tries again
                    log.warning("ticket updates for Slack threads failed: %s", exc)

    threading.Thread(target=tell_ticket_changes, name="slack-ticket-updates", daemon=True).start()
    handler = SocketModeHandler(
        slack.app, settings.integrations.slack_app_token.get_secret_value(), web_client=slack.client
    )
    try:
        log.info("deskmate answers Slack over Socket Mode; Ctrl-C stops")
        handler.start()  # until Ctrl-C
    finally:
        stopping.set()
        slack.close()
        resources.close()
    return 0


def cmd_teams_package(args: argparse.Namespace) -> int:
    """Build the Teams app package (manifest.json + icons, zipped) from DESKMATE_TEAMS_APP_ID and
    DESKMATE_PUBLIC_URL, checked against what Teams requires."""
    from app.channels.teams_package import PackageError, PackageInput, build_package

    settings = _settings(args)
    app_id, public_url = settings.integrations.teams_app_id, settings.integrations.public_url
    if not app_id or not public_url:
        print(
            "error: the Teams package needs DESKMATE_TEAMS_APP_ID (the Azure Bot's app id) and DESKMATE_PUBLIC_URL "
            "(https://… where Teams reaches deskmate).",
            file=sys.stderr,
        )
        return 2
    spec = PackageInput(
        app_id=app_id,
        public_url=public_url,
        short_name=args.name,
        developer=args.developer,
        version=args.version,
    )
    try:
        build_package(spec, Path(args.icons), Path(args.out))
    except (PackageError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{args.out}: upload it in Teams (Apps → Manage your apps → Upload an app) or the Teams admin center.")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from app.data_dir_lock import hold_data_dir
    from app.main import create_app
    from app.memory_profile import limit_malloc_arenas, start_from_settings
    from app.resources import load_answer_policy
    from app.server import BoundedServer, uvicorn_config

    limit_malloc_arenas()  # first, before any thread: RSS stays flat under load (app/memory_profile.py)
    settings = _settings(args)
    if args.host:  # the host names the server answers to by default follow the address it binds to
        settings = settings.model_copy(update={"host": args.host})
    start_from_settings(settings)  # DESKMATE_TRACEMALLOC_FILE: a memory investigation, on SIGUSR1
    load_answer_policy(settings)  # a broken DESKMATE_CONFIG stops here, listing every problem, before serving
    # a second process on the same embedded data directory stops here, before loading a model
    lock = hold_data_dir(settings.storage.data_dir) if settings.storage.chroma_mode == "persistent" else None
    try:
        config = uvicorn_config(
            create_app(settings),
            settings,
            host=args.host or settings.server.host,
            port=args.port or settings.server.port,
        )
        server = BoundedServer(config, hard_limit_s=settings.server.shutdown_timeout_s + 10)
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
    from app.insights.outcomes import OutcomeStore
    from app.readiness import store_sizes
    from app.retention import run_retention
    from app.storage import Database, database_url_for

    settings = _settings(args)
    if not settings.storage.data_dir.is_dir() and not settings.storage.database_url:
        print(f"deskmate: no data directory at {settings.storage.data_dir}; nothing to vacuum", file=sys.stderr)
        return 2
    before = store_sizes(settings)
    database = Database.open(database_url_for(settings))
    sessions = SessionStore(database, checkpoints=settings.storage.sessions_db)
    traces = TraceStore(
        database,
        redactor=PatternRedactor(),
        retention_days=settings.retention.trace_retention_days,
        max_runs=settings.retention.trace_max_runs,
        max_bytes=int(settings.retention.trace_max_mb * 1024 * 1024),
    )
    # no embedder: pruning answers never embeds a question
    answers = FeedbackStore(
        database, embed=_no_embedding, vote_window_s=settings.feedback.feedback_vote_window_hours * 3600
    )
    outcomes = OutcomeStore(
        database,
        retention_days=settings.retention.insights_retention_days,
        question_days=settings.retention.trace_retention_days,
    )
    try:
        report = run_retention(
            sessions,
            traces,
            session_idle_s=settings.retention.session_idle_days * 86400,
            vacuum=True,
            answers=answers,
            outcomes=outcomes,
        )
    finally:
        sessions.close()
        traces.close()
        database.close()
    after = store_sizes(settings)
    sys.stdout.write(
        f"{report.sessions_expired} idle session(s) expired, {report.checkpoints_pruned} old "
        f"checkpoint(s), {report.answers_pruned} unvoted answer(s) and {report.traces_pruned} "
        f"trace(s) pruned, {report.outcomes_pruned} turn outcome(s) past their retention, in "
        f"{report.duration_ms:.0f} ms\n"
    )
    for name in ("sessions", "database", "data_dir_total"):
        sys.stdout.write(f"  {name}: {before[name]:,} -> {after[name]:,} bytes\n")
    return 0


def cmd_user_token(args: argparse.Namespace) -> int:
    """Print a signed X-Deskmate-User token, as the portal would send it (for trying sign-in out)."""
    from app.identity import IdentityError, make_user_token, verify_user_token

    settings = _settings(args)
    if settings.security.user_token_secret is None:
        print("deskmate: DESKMATE_USER_TOKEN_SECRET is not set, so there is nothing to sign with.", file=sys.stderr)
        return 2
    secret = settings.security.user_token_secret.get_secret_value()
    groups = [g for g in (args.groups or "").split(",") if g.strip()]
    token = make_user_token(secret, args.user, groups, ttl_s=args.ttl)
    try:
        # the same check the API makes: a bad user id or group, or a --ttl beyond the maximum, fails here
        verify_user_token(token, secret, max_ttl_s=settings.security.user_token_max_ttl_s)
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
        SessionStore(database, checkpoints=settings.storage.sessions_db).close()  # the checkpointer's own tables
    except DatabaseUnavailable as exc:
        print(f"deskmate: {exc}", file=sys.stderr)
        return 1
    print(f"{database.describe()}: schema at revision {revision}")
    database.close()
    return 0


def cmd_db_rebuild_insights(args: argparse.Namespace) -> int:
    """Recompute the insights rollups from the turn outcome rows (all days, or the last --days), in one
    transaction: after rows reached `turn_outcomes` another way than the server (a restore of that table). With
    the server stopped: turns written meanwhile could be counted twice or not at all."""
    import time

    from app.insights import rollup
    from app.storage import Database, DatabaseUnavailable, database_url_for

    settings = _settings(args)
    first = int(time.time() // 86400) - args.days + 1 if args.days else None
    try:
        database = Database.open(database_url_for(settings))
        started = time.perf_counter()
        with database.begin() as conn:
            rollup.rebuild(conn, first)
    except DatabaseUnavailable as exc:
        print(f"deskmate: {exc}", file=sys.stderr)
        return 1
    span = f"the last {args.days} day(s)" if args.days else "every day"
    print(f"insights rollups of {span} rebuilt in {time.perf_counter() - started:.1f} s")
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
    if not database.is_postgres and Path(settings.storage.data_dir).resolve() == source:
        print(
            "deskmate: the source is the data dir deskmate already uses; set DESKMATE_DATABASE_URL to the "
            "database to copy it into",
            file=sys.stderr,
        )
        return 2
    sessions = SessionStore(database, checkpoints=settings.storage.sessions_db)
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


def cmd_report(args: argparse.Namespace) -> int:
    """Write the insights of the last `--since` days as one self-contained HTML page."""
    from app.insights.report import render_report, window_since

    settings = _settings(args)
    try:
        first, last = window_since(args.since)
    except ValueError as exc:
        print(f"deskmate: {exc}", file=sys.stderr)
        return 2
    figures = (
        _local_insights(settings, first, last, args) if args.local else _served_insights(settings, first, last, args)
    )
    if figures is None:
        return 2
    out = Path(args.out)
    out.write_text(render_report(figures), encoding="utf-8")
    deflection = figures["deflection"]
    rate = deflection["deflection_rate"]
    sys.stdout.write(
        f"{out}: {figures['window']['from']} – {figures['window']['to']}, {figures['volume']['turns']} turns, "
        f"{deflection['conversations']} conversations, deflection "
        f"{'–' if rate is None else f'{rate:.0%}'}, {figures['tickets']['created']} ticket(s), "
        f"{len(figures['knowledge_gaps'])} knowledge gap(s)\n"
    )
    return 0


def _served_insights(settings, first, last, args) -> dict | None:
    """GET /admin/insights of the running deskmate (with DESKMATE_ADMIN_KEY when it has one)."""
    import httpx

    from app.cli_client import default_url

    base_url = (args.url or default_url(settings)).rstrip("/")
    key = settings.security.admin_key.get_secret_value() if settings.security.admin_key else None
    params = {"from": first.isoformat(), "to": last.isoformat()} | (
        {"collection": args.collection} if args.collection else {}
    )
    try:
        response = httpx.get(
            f"{base_url}/admin/insights",
            params=params,
            headers={"Authorization": f"Bearer {key}"} if key else {},
            timeout=120,
        )
    except httpx.HTTPError as exc:
        print(
            f"deskmate: no deskmate at {base_url} ({exc}). Start one with `deskmate serve`, point --url or "
            "DESKMATE_URL at yours, or add --local to read the data folder directly.",
            file=sys.stderr,
        )
        return None
    if response.status_code != 200:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text[:300]
        print(f"deskmate: {base_url} refused the insights ({response.status_code}): {detail}", file=sys.stderr)
        return None
    return response.json()


def _local_insights(settings, first, last, args) -> dict:
    """--local: the figures read from the database itself (no server; the articles never cited are left out,
    since listing the documents needs the vector store the server holds)."""
    from app.adapters.embeddings import SentenceTransformerEmbedder
    from app.insights.figures import Window
    from app.insights.service import insights
    from app.storage import Database, database_url_for

    database = Database.open(database_url_for(settings))
    try:
        embedder = SentenceTransformerEmbedder(
            settings.embeddings.embedding_model_path, threads=settings.embeddings.torch_threads
        )
        return insights(database, embedder, Window.of(first, last, args.collection))
    finally:
        database.close()


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
    ask.add_argument(
        "--url",
        help="the deskmate to ask (default: $DESKMATE_URL, else http://$DESKMATE_HOST:"
        "$DESKMATE_PORT, i.e. http://127.0.0.1:8000)",
    )
    ask.add_argument("--session", help="continue this session id")
    ask.add_argument("--os", choices=["windows", "macos", "linux"], help="your operating system")
    ask.add_argument("--user-token", help="a signed X-Deskmate-User token, when the server has sign-in on")
    ask.add_argument(
        "--local",
        action="store_true",
        help="no server: load the models in this process and answer from the local data folder",
    )
    ask.add_argument(
        "--no-sync", action="store_true", help="with --local: do not index the bundled knowledge base first"
    )
    ask.set_defaults(func=cmd_ask)

    worker = sub.add_parser("worker", help="run ingestion jobs (uploads, source syncs) from the queue until stopped")
    worker.add_argument("--poll", type=float, default=1.0, help="seconds between looks at an empty queue (default 1)")
    worker.set_defaults(func=cmd_worker)

    serve = sub.add_parser("serve", help="run the HTTP API")
    serve.add_argument("--host", help="bind address (default: $DESKMATE_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: $DESKMATE_PORT or 8000)")
    serve.set_defaults(func=cmd_serve)

    slack = sub.add_parser("slack", help="answer Slack over Socket Mode (no inbound calls from Slack needed)")
    slack.add_argument("--socket", action="store_true", help="connect to Slack over Socket Mode")
    slack.set_defaults(func=cmd_slack)

    teams = sub.add_parser(
        "teams-package", help="build the Teams app package (manifest + icons, zipped) to upload to Teams"
    )
    teams.add_argument("--out", default="deskmate-teams.zip", help="the zip to write (default deskmate-teams.zip)")
    teams.add_argument(
        "--icons",
        default=str(Path(__file__).resolve().parent.parent / "deploy" / "teams"),
        help="folder with color.png (192×192) and outline.png (32×32); default: deploy/teams of this checkout",
    )
    teams.add_argument("--name", default="deskmate", help="the app's name in Teams (at most 30 characters)")
    teams.add_argument("--developer", default="IT support", help="who publishes it (at most 32 characters)")
    teams.add_argument("--version", default="1.0.0", help="the package version; raise it for each upload")
    teams.set_defaults(func=cmd_teams_package)

    db = sub.add_parser(
        "db", help="the relational store: upgrade its schema, copy an SQLite data dir into it, or vacuum it"
    )
    db_sub = db.add_subparsers(dest="db_command", required=True)
    db_sub.add_parser(
        "upgrade", help="run the schema migrations ($DESKMATE_DATABASE_URL, or the embedded SQLite file)"
    ).set_defaults(func=cmd_db_upgrade)
    migrate = db_sub.add_parser(
        "migrate-from-sqlite",
        help="copy an SQLite data dir (sessions, tickets, votes, traces) into $DESKMATE_DATABASE_URL",
    )
    migrate.add_argument("path", help="the data dir to copy from (it is only read)")
    migrate.set_defaults(func=cmd_db_migrate_from_sqlite)
    vacuum = db_sub.add_parser(
        "vacuum", help="expire idle sessions, prune checkpoints and traces, compact the files (safe while serving)"
    )
    vacuum.set_defaults(func=cmd_db_vacuum)
    rebuild = db_sub.add_parser(
        "rebuild-insights",
        help="recompute the insights' per-day rollups from the turn outcome rows (with the server stopped)",
    )
    rebuild.add_argument("--days", type=int, default=0, help="only the last DAYS days, today included (default: all)")
    rebuild.set_defaults(func=cmd_db_rebuild_insights)

    report = sub.add_parser(
        "report", help="write the insights of the last days (deflection, gaps, articles) as one HTML page"
    )
    report.add_argument("--since", default="7d", help="how far back: 7d, 30d, 4w … (default 7d, today included)")
    report.add_argument("--out", default="report.html", help="the page to write (default report.html)")
    report.add_argument("--collection", help="only the turns asked of this knowledge collection")
    report.add_argument(
        "--url", help="the deskmate to ask (default: $DESKMATE_URL, else http://$DESKMATE_HOST:$DESKMATE_PORT)"
    )
    report.add_argument("--local", action="store_true", help="no server: read the database of the data folder directly")
    report.set_defaults(func=cmd_report)

    token = sub.add_parser("user-token", help="print a signed X-Deskmate-User token (needs DESKMATE_USER_TOKEN_SECRET)")
    token.add_argument("--user", required=True, help="the user id (the token's sub)")
    token.add_argument("--groups", help="comma-separated groups, e.g. finance,hr")
    token.add_argument("--ttl", type=int, default=3600, help="seconds until it expires (default: 3600)")
    token.set_defaults(func=cmd_user_token)
    return parser


def main(argv: list[str] | None = None) -> int:
    from pydantic import ValidationError

    from app.config_file import ConfigError
    from app.data_dir_lock import DataDirInUse
    from app.logging_setup import configure_logging

    args = build_parser().parse_args(argv)
    configure_logging("INFO" if args.command in ("serve", "worker") else "WARNING")
    try:
        return args.func(args)
    except ValidationError as exc:  # a setting is wrong: say which and why, no traceback
        problems = "; ".join(  # the variable, then why (never its value: it may be a key)
            (f"{e['loc'][0]}: " if e.get("loc") else "") + str(e.get("msg", "")).removeprefix("Value error, ")
            for e in exc.errors()
        )
        print(f"deskmate: configuration refused: {problems}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(f"deskmate: configuration file refused: {exc}", file=sys.stderr)
        return 2
    except DataDirInUse as exc:
        if args.command == "ingest":  # the running server has the queue: hand it the files instead
            print(
                f"deskmate: cannot ingest here: {exc}. Upload the files to that deskmate (POST /documents or the "
                "admin page), or stop it and run `deskmate ingest` again.",
                file=sys.stderr,
            )
            return 3
        print(f"deskmate: not starting: {exc}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    raise SystemExit(main())
