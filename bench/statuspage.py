"""The status-page parser against 162 real githubstatus.com summary.json captures and their expected parses.

    python bench/statuspage.py --data ../shared/data/statuspage_github_summary_history
    python bench/statuspage.py --data ../shared/data/statuspage_github_summary_history --via parser

`--via http` (default) serves every snapshot from a local HTTP server on 127.0.0.1 and runs the whole
status graph through the real Statuspage client (fetch → parse → summarise); `--via parser` calls
the parser on the decoded JSON only. Each report is written in index.csv's notation and compared
field by field: indicator, description, non-operational components with their states, active
incidents (name, status, impact) and maintenances (name, status). Prints per-field agreement, the
agreement per category, every mismatch, and the time per check.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import app  # noqa: E402,F401  (offline defaults)
from app.adapters.status_page import StatuspageSource  # noqa: E402
from core.records import StatusReport  # noqa: E402
from core.status import parse_summary  # noqa: E402
from graphs.status import (
    StatusContext,  # noqa: E402
    build_status_graph,  # noqa: E402
)

FIELDS = (
    "status_indicator",
    "status_description",
    "non_operational_components",
    "active_incidents",
    "scheduled_maintenances",
)


def as_index_row(report: StatusReport) -> dict[str, str]:
    """A report in index.csv's notation (components sorted by name, incidents in page order)."""
    return {
        "status_indicator": report["indicator"],
        "status_description": report["description"],
        "non_operational_components": "; ".join(
            f"{c['name']}={c['status']}"
            for c in sorted(report["components"], key=lambda c: c["name"])
            if c["status"] != "operational"
        ),
        "active_incidents": "; ".join(
            f"{i['name']} [status={i['status']}, impact={i['impact']}]" for i in report["incidents"]
        ),
        "scheduled_maintenances": "; ".join(f"{m['name']} [status={m['status']}]" for m in report["maintenances"]),
    }


class _SnapshotHandler(BaseHTTPRequestHandler):
    """Serves the snapshot named by the current request's path prefix: /<file stem>/api/v2/summary.json."""

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        stem = self.path.strip("/").split("/", 1)[0]
        path = self.server.snapshots / f"{stem}.json"  # type: ignore[attr-defined]
        if not path.is_file():
            self.send_response(404)
            self.end_headers()
            return
        body = path.read_bytes()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def check_via_http(rows: list[dict], data: Path) -> tuple[list[StatusReport], list[float]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SnapshotHandler)
    server.snapshots = data / "snapshots"  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    graph = build_status_graph()
    reports, seconds = [], []
    try:
        for row in rows:
            source = StatuspageSource(f"http://127.0.0.1:{server.server_port}/{Path(row['file']).stem}")
            started = time.perf_counter()
            out = graph.invoke({"page_url": source.page_url}, context=StatusContext(source=source))
            seconds.append(time.perf_counter() - started)
            reports.append(out["report"])
    finally:
        server.shutdown()
        server.server_close()
    return reports, seconds


def check_via_parser(rows: list[dict], data: Path) -> tuple[list[StatusReport], list[float]]:
    reports, seconds = [], []
    for row in rows:
        summary = json.loads((data / row["file"]).read_bytes())
        started = time.perf_counter()
        reports.append(parse_summary(summary, page_url="https://www.githubstatus.com", checked_at=""))
        seconds.append(time.perf_counter() - started)
    return reports, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="statuspage_github_summary_history folder")
    parser.add_argument("--via", choices=("http", "parser"), default="http")
    args = parser.parse_args()
    with open(args.data / "index.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))

    reports, seconds = (check_via_http if args.via == "http" else check_via_parser)(rows, args.data)
    agree: Counter[str] = Counter()
    per_category: Counter[str] = Counter()
    category_size = Counter(row["category"] for row in rows)
    mismatches = []
    for row, report in zip(rows, reports):
        if not report["ok"]:
            mismatches.append((row["file"], "ok", "True", f"False: {report['error']}"))
            continue
        got = as_index_row(report)
        row_ok = True
        for field in FIELDS:
            if got[field] == row[field]:
                agree[field] += 1
            else:
                row_ok = False
                mismatches.append((row["file"], field, row[field], got[field]))
        per_category[row["category"]] += row_ok

    total = len(rows)
    print(f"snapshots: {total} (via {args.via})")
    print(f"parsed ok: {sum(r['ok'] for r in reports)}/{total}")
    for field in FIELDS:
        print(f"  {field:28s} {agree[field]:4d}/{total}")
    print(f"all fields agree: {sum(per_category.values())}/{total}")
    for category, size in sorted(category_size.items()):
        print(f"  {category:30s} {per_category[category]:3d}/{size}")
    ms = sorted(s * 1000 for s in seconds)
    print(
        f"time per check: median {statistics.median(ms):.2f} ms, p95 {ms[int(0.95 * (len(ms) - 1))]:.2f} ms, "
        f"max {ms[-1]:.2f} ms"
    )
    print(f"mismatches: {len(mismatches)}")
    for file, field, expected, got in mismatches:
        print(f"  {file} [{field}]\n    expected: {expected}\n    got:      {got}")


if __name__ == "__main__":
    main()
