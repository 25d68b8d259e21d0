"""The attacker's probe, kept as a regression suite: pathological inputs through every pattern, every redaction
destination, the log filter and the Markdown clean-up, and (with --serve) through a real `deskmate serve`.

    python bench/security.py                 # in-process: patterns, redactors, log filter, parsers
    python bench/security.py --serve         # also a real server: hostile requests beside /health and /chat

Prints times, never asserts them (tests/unit/test_bounded_text_work.py and tests/e2e/test_bounded_requests.py
are the checks). What each part shows:

- patterns: every compiled pattern of app/, core/ and nodes/ matched at the start of long runs of one
  character (spaces, tabs, `b.`, digits, brackets, …) at two sizes; the growth is the cost ratio for 8x the
  input: about 8 is linear, 64 quadratic. Patterns over 24 are listed (none is the target).
- redactors: each destination's redactor on 20,000-character pathological texts (the longest chat message).
- log filter: uvicorn access lines whose path is 24,000 pathological characters (the line is cut first).
- parsers: Markdown, reStructuredText, text and HTML files of long runs, through the file parser (what the
  parse sandbox runs) and the include scan (what the upload request itself runs).
- serve: a 24,000-character URL, a 60 KB Markdown file of spaces and a 2.2 MB nested list, each with a
  /health and a /chat sent while it is in flight; target: each quick reply within 1 s (+10% of the hostile one).
Needs nothing outside the repository.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import app  # noqa: E402,F401  (offline defaults before any model library loads)

REPO = Path(__file__).resolve().parent.parent
GROWTH_LIMIT = 24


def runs(n: int) -> dict[str, str]:
    """Long runs of one character or pair: what makes a backtracking pattern try every split."""
    half = n // 2
    return {
        "spaces": " " * n + "x",
        "tabs": "\t" * n + "x",
        "newlines": "\n" * n + "x",
        "letters": "a" * n,
        "b.@": "b." * half + "@",
        "a@": "a@" * half,
        "digits": "1" * n,
        "1.": "1." * half,
        "1 ": "1 " * half,
        "[": "[" * n,
        "[]": "[" * half + "]" * half,
        "(": "(" * n,
        "a=": "a=" * half,
        "a:": "a:" * half,
        "a-": "a-" * half,
        "> ": "> " * half + "x",
        " |": " |" * half + "x",
        "`": "`" * n,
        "*": "*" * n,
        "_": "_" * n,
        "<": "<" * n,
        "\\": "\\" * n,
        "a/": "a/" * half,
        "%2": "%2" * half,
        "Aa": "Aa" * half,
        "x ": "x " * half + "!",
    }


def best_of(run, text: str, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run(text)
        best = min(best, time.perf_counter() - started)
    return best


def all_patterns() -> dict[str, re.Pattern[str]]:
    """Every compiled text pattern at module level (and in module-level tables of rules) of our code."""
    found: dict[str, re.Pattern[str]] = {}
    for root in ("app", "core", "nodes", "graphs"):
        for path in sorted((REPO / root).rglob("*.py")):
            name = ".".join(path.relative_to(REPO).with_suffix("").parts)
            if "migrations" in name or name.endswith("__main__"):
                continue
            try:
                module = importlib.import_module(name)
            except Exception:  # noqa: BLE001 — an optional integration not installed: its patterns are not reachable
                continue
            for key, value in vars(module).items():
                if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                    found[f"{name}.{key}"] = value
                elif isinstance(value, (tuple, list)):
                    for i, row in enumerate(value):
                        pattern = getattr(row, "pattern", None)
                        if isinstance(pattern, re.Pattern) and isinstance(pattern.pattern, str):
                            found[f"{name}.{key}[{getattr(row, 'name', i)}]"] = pattern
    return found


def bench_patterns() -> list[tuple[str, str, float]]:
    patterns = all_patterns()
    small, large = runs(2_000), runs(16_000)
    worst: list[tuple[str, str, float, float]] = []
    started = time.perf_counter()
    for name, pattern in patterns.items():
        for kind, text in small.items():
            cost = best_of(pattern.match, text)
            if cost < 0.0005:
                continue  # too cheap to grow into a problem at 8x
            big = best_of(pattern.match, large[kind])
            worst.append((name, kind, big / max(cost, 1e-6), big))
    worst.sort(key=lambda w: -w[2])
    print(f"patterns: {len(patterns)} checked on {len(small)} runs in {time.perf_counter() - started:.1f} s")
    print(f"  {'pattern':<60} {'input':<8} {'growth x8':>9} {'s at 16k':>9}")
    for name, kind, growth, big in worst[:8]:
        print(f"  {name:<60} {kind:<8} {growth:>9.1f} {big:>9.4f}")
    over = [w for w in worst if w[2] > GROWTH_LIMIT]
    print(f"  over {GROWTH_LIMIT}x (super-linear): {len(over)} {[w[0] for w in over]}")
    return [(w[0], w[1], w[2]) for w in over]


def bench_redactors(size: int) -> float:
    from app.adapters.redaction import RedactionPolicy, build_engine, build_redactors
    from app.adapters.redaction.kinds import parse_pii_kinds

    policy = RedactionPolicy(memory=parse_pii_kinds("EMAIL,PHONE,CREDIT_CARD,IBAN,US_SSN,IP_ADDRESS"))
    redactors = build_redactors(policy, build_engine(policy))
    texts = runs(size)
    print(f"redactors: {len(texts)} pathological texts of {size:,} characters, seconds (each seen once)")
    print(f"  {'destination':<11} {'max':>7} {'mean':>7}  slowest input")
    worst = 0.0
    for destination, redactor in redactors.items():
        # one run per text, each text distinct: the redactor caches what it has seen (a repeat would time the cache)
        costs = {
            kind: best_of(redactor.redact, f"{text} {destination}{i}", 1)
            for i, (kind, text) in enumerate(texts.items())
        }
        slowest = max(costs, key=costs.get)
        worst = max(worst, costs[slowest])
        print(f"  {destination:<11} {costs[slowest]:>7.3f} {sum(costs.values()) / len(costs):>7.3f}  {slowest}")
    return worst


def bench_log_filter(size: int) -> float:
    from app.adapters.redaction import RedactionPolicy, build_engine, build_redactors
    from app.adapters.redaction.kinds import parse_pii_kinds
    from app.logging_setup import RedactingFilter

    policy = RedactionPolicy(memory=parse_pii_kinds("EMAIL,PHONE,CREDIT_CARD,IBAN,US_SSN,IP_ADDRESS"))
    log_filter = RedactingFilter(build_redactors(policy, build_engine(policy))["log"])
    costs: dict[str, float] = {}
    for i, (kind, text) in enumerate(runs(size).items()):
        record = logging.LogRecord(
            "uvicorn.access",
            logging.INFO,
            __file__,
            1,
            '%s - "%s %s HTTP/%s" %d',
            ("127.0.0.1:5000", "GET", f"/health?n={i}&q={text}", "1.1", 200),
            None,
        )
        started = time.perf_counter()
        log_filter.filter(record)
        costs[kind] = time.perf_counter() - started
    slowest = max(costs, key=costs.get)
    print(
        f"log filter: access lines with a {size:,}-character path: max {costs[slowest]:.3f} s ({slowest}), "
        f"mean {sum(costs.values()) / len(costs):.3f} s"
    )
    return costs[slowest]


def hostile_files() -> dict[str, bytes]:
    return {
        "spaces.md": ("# Spaces\n\nwombat text\n" + " " * 60_000 + "x\n").encode(),
        "tabs.md": ("# Tabs\n\n" + "\t" * 60_000 + "x\n").encode(),
        "nested-list.md": ("# Nested\n\n" + "".join("  " * i + f"- item {i}\n" for i in range(1500))).encode(),
        "quotes.md": ("# Quotes\n\n" + "> " * 30_000 + "x\n").encode(),
        "pipes.md": ("# Pipes\n\n| a |\n" + " |" * 30_000 + "\n").encode(),
        "brackets.md": ("# Brackets\n\n" + "[" * 30_000 + "x" + "]" * 30_000 + "\n").encode(),
        "stars.md": ("# Stars\n\n" + "*" * 60_000 + "\n").encode(),
        "backticks.md": ("# Ticks\n\n" + "`" * 60_000 + "\n").encode(),
        "spaces.rst": ("Title\n=====\n\n" + " " * 60_000 + "x\n").encode(),
        "role.rst": ("Title\n=====\n\n:ref:`a" + "\t" * 60_000 + "<x>`\n").encode(),
        "spaces.txt": (" " * 60_000 + "x\n").encode(),
        "spaces.html": ("<html><body><p>" + " " * 60_000 + "x</p></body></html>").encode(),
    }


def bench_parsers() -> tuple[float, float]:
    from app.adapters.parsers import FileParser, sniff_type
    from app.includes import IncludeResolver
    from core.errors import DocumentRejected

    parser = FileParser()
    print("parsers: hostile files; seconds in the upload request (type check, include scan) and in the parse")
    print(f"  {'file':<16} {'bytes':>9} {'request':>8} {'parse':>7}  outcome")
    worst_request = worst_parse = 0.0
    for name, data in hostile_files().items():
        started = time.perf_counter()
        sniff_type(name, data)
        IncludeResolver.from_bytes({name: data}).expand(name, data)
        request_s = time.perf_counter() - started
        started = time.perf_counter()
        try:
            outcome = f"{len(parser.parse(name, data).blocks)} blocks"
        except DocumentRejected as exc:
            outcome = f"refused: {exc.reason[:50]}"
        parse_s = time.perf_counter() - started
        worst_request, worst_parse = max(worst_request, request_s), max(worst_parse, parse_s)
        print(f"  {name:<16} {len(data):>9,} {request_s:>8.3f} {parse_s:>7.3f}  {outcome}")
    return worst_request, worst_parse


def _beside(client, hostile, quick) -> tuple[float, float, str]:
    outcome: dict = {}

    def run() -> None:
        started = time.perf_counter()
        try:
            outcome["status"] = str(hostile().status_code)
        except Exception as exc:  # noqa: BLE001 — reported, the probe goes on
            outcome["status"] = type(exc).__name__
        outcome["s"] = time.perf_counter() - started

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.3)
    started = time.perf_counter()
    quick()
    quick_s = time.perf_counter() - started
    thread.join()
    return outcome["s"], quick_s, outcome["status"]


def bench_server() -> bool:
    import httpx

    from tests.e2e.deskmate_process import DeskmateProcess

    files = hostile_files()
    with (
        tempfile.TemporaryDirectory() as tmp,
        DeskmateProcess(
            Path(tmp) / "data", Path(tmp) / "serve.log", DESKMATE_KB_DIR=str(REPO / "tests" / "fixtures" / "kb")
        ) as server,
        httpx.Client(base_url=server.url, timeout=600) as hostile,
        httpx.Client(base_url=server.url, timeout=600) as client,
    ):
        probes = {
            "GET 24,001-char URL": lambda: hostile.get("/health", params={"q": "b." * 12_000 + "@"}),
            "GET 24,000-char path": lambda: hostile.get("/" + "a." * 12_000),
            "upload 60 KB spaces": lambda: hostile.post(
                "/documents?wait=true", files={"file": ("spaces.md", files["spaces.md"], "text/markdown")}
            ),
            "upload 2.2 MB nested list": lambda: hostile.post(
                "/documents?wait=true", files={"file": ("nested.md", files["nested-list.md"], "text/markdown")}
            ),
        }
        print(f"serve: hostile requests to {server.url}, each with /health then /chat sent beside it")
        print(f"  {'hostile request':<28} {'status':>6} {'hostile s':>9} {'health s':>8} {'chat s':>7}")
        met = True
        for name, probe in probes.items():
            times: dict[str, float] = {}

            def quick(times: dict[str, float] = times) -> None:
                started = time.perf_counter()
                client.get("/health")
                times["health"] = time.perf_counter() - started
                started = time.perf_counter()
                client.post("/chat", json={"message": "How do I connect to the VPN?"})
                times["chat"] = time.perf_counter() - started

            hostile_s, _, status = _beside(client, probe, quick)
            ok = all(t <= 1.0 + 0.1 * hostile_s for t in times.values())
            met = met and ok
            print(
                f"  {name:<28} {status:>6} {hostile_s:>9.2f} {times['health']:>8.3f} {times['chat']:>7.3f}"
                f"{'' if ok else '  SLOW'}"
            )
    print(f"target (/health and /chat within 1 s beside each hostile request): {'MET' if met else 'NOT MET'}")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", action="store_true", help="also probe a real `deskmate serve`")
    parser.add_argument("--size", type=int, default=20_000, help="characters per pathological redaction input")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    over = bench_patterns()
    print()
    worst_redaction = bench_redactors(args.size)
    print()
    worst_log = bench_log_filter(24_000)
    print()
    worst_request, worst_parse = bench_parsers()
    logging.disable(logging.NOTSET)
    print()
    print(
        f"summary: super-linear patterns {len(over)}; slowest redaction {worst_redaction:.3f} s; "
        f"slowest log line {worst_log:.3f} s; slowest upload request {worst_request:.3f} s; "
        f"slowest parse {worst_parse:.3f} s"
    )
    met = True
    if args.serve:
        print()
        met = bench_server()
    return 0 if met and not over else 1


if __name__ == "__main__":
    raise SystemExit(main())
