"""The `deskmate` command: ingest documents, ask a question, or serve the API."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

log = logging.getLogger("deskmate")


def _settings(args: argparse.Namespace):
    from app.settings import Settings

    overrides = {}
    if getattr(args, "data_dir", None):
        overrides["data_dir"] = Path(args.data_dir)
    return Settings(**overrides)


def cmd_ingest(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from app.indexing_service import supported_files
    from app.resources import build_resources

    settings = _settings(args)
    resources = build_resources(settings)
    try:
        jobs: list[tuple[Path, Path]] = []
        for raw in args.paths:
            path = Path(raw).resolve()
            if not path.exists():
                sys.stderr.write(f"deskmate: {raw}: no such file or folder\n")
                return 2
            root = path.parent  # sources read "<prefix>/<folder>/<file>"
            jobs.extend((root, f) for f in supported_files(path))
        failed = 0
        counts: dict[str, int] = {}
        with tqdm(total=len(jobs), unit="file", desc="indexing", disable=args.quiet) as bar:
            for root, file in jobs:
                result = resources.indexer.index_paths([file], root=root, prefix=args.prefix)[0]
                counts[result.status] = counts.get(result.status, 0) + 1
                if result.status == "failed":
                    failed += 1
                    tqdm.write(f"  skipped {result.source}: {result.error}", file=sys.stderr)
                bar.set_postfix_str(file.name[-30:])
                bar.update(1)
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no supported files"
        sys.stdout.write(f"{summary}; the index now holds {resources.index.count()} chunks\n")
        return 1 if failed else 0
    finally:
        resources.close()


def cmd_ask(args: argparse.Namespace) -> int:
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
    import uvicorn

    from app.main import create_app

    settings = _settings(args)
    host = args.host or settings.host
    port = args.port or settings.port
    app = create_app(settings)
    uvicorn.run(app, host=host, port=port, log_level=settings.log_level.lower())
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

    ask = sub.add_parser("ask", help="ask one question and print the answer")
    ask.add_argument("question")
    ask.add_argument("--session", help="continue this session id")
    ask.add_argument("--os", choices=["windows", "macos", "linux"], help="your operating system")
    ask.add_argument("--no-sync", action="store_true", help="do not index the bundled knowledge base first")
    ask.set_defaults(func=cmd_ask)

    serve = sub.add_parser("serve", help="run the HTTP API")
    serve.add_argument("--host", help="bind address (default: $DESKMATE_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: $DESKMATE_PORT or 8000)")
    serve.set_defaults(func=cmd_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    from app.logging_setup import configure_logging

    args = build_parser().parse_args(argv)
    configure_logging("WARNING" if args.command != "serve" else "INFO")
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
