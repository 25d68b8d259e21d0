"""POST /chat latency over real HTTP, no LLM: p50/p95 and requests/s per number of concurrent clients.

    python bench/chat_latency.py                 # starts `deskmate serve` on a free port with the bundled KB
    python bench/chat_latency.py --backends onnx,torch   # one server per embedding backend, side by side
    python bench/chat_latency.py --url http://127.0.0.1:8000   # measure a server you started yourself
    python bench/chat_latency.py --replicas 2 --database postgres
        # the embedded default, then 1 and 2 replicas on a scratch Postgres database and one `chroma run`,
        # at 1, 8 and 32 clients, side by side; with CPU seconds per turn and the ceiling they imply

The headline is **distinct questions**: every request is a new conversation with a question the server has not
seen before (bench/it_questions.py, > 1,000 sentences written for this bench), so the question is embedded
every time, as it is for real employees. The **repeated** figure is the old mix, separate and labelled: 15 fixed
questions in a loop, half of the turns a short follow-up in the same session; after the first round every
question vector comes from the embedder's cache, so it measures that cache. The same run times one question
embedded by the torch encoder on one thread in this process (the reference the 1-client p50 is held against). With several replicas every client sends its requests round-robin to
them, so a conversation's turns land on different replicas. CPU is the servers' own (psutil: user + system of
the deskmate processes, their parse workers and the Chroma server; not Postgres, which other programs on this
machine share). The ceiling is the turns/s the machine's cores could give at that CPU per turn.
Targets: distinct questions, 1 client p50 <= 2.5x one torch question embedding, 8 clients p95 <= 250 ms; with --replicas 2: 2 replicas >= 1.5x the requests/s of one at
32 clients, p95 <= 150 ms at 8 clients (where the ceiling allows).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from it_questions import distinct_questions  # noqa: E402  (bench/it_questions.py)
from stack import Stack, embedded, server_mode  # noqa: E402  (bench/stack.py)

QUESTIONS = [
    "How do I connect to the VPN on my Mac?",
    "My printer won't print",
    "how do I reset my password",
    "I lost my phone with the authenticator app",
    "where do I find my bitlocker recovery key",
    "How do I map the shared drive on windows",
    "my mic doesn't work in teams",
    "How do I report a phishing email",
    "how do I request software",
    "outlook is stuck in the outbox",
    "It's not working",
    "thanks!",
    "how do I find my MAC address",
    "laptop is very slow",
    "how do I connect to wifi on ubuntu",
]
FOLLOW_UPS = ["im on linux", "what about windows", "and on a mac?"]
DISTINCT = distinct_questions()
STAGES = ("embedding_ms", "retrieval_ms", "decision_ms", "generation_ms", "total_ms")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class QuestionSupply:
    """Hands out each distinct question once per server (thread-safe); running out is an error, never a repeat."""

    def __init__(self, questions: list[str]) -> None:
        self._questions = iter(questions)
        self._lock = threading.Lock()

    def next(self) -> str:
        with self._lock:
            question = next(self._questions, None)
        if question is None:
            sys.exit(f"out of distinct questions ({len(DISTINCT)}): ask for fewer --requests")
        return question


class Results:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.timings: list[dict] = []  # the replies' own per-stage timings, with the HTTP latency beside them


def client_loop(bases: list[str], n: int, offset: int, results: Results, supply: QuestionSupply | None) -> None:
    """`n` requests; with a `supply`, each a new conversation with a new question, else the repeated mix."""
    clients = [httpx.Client(base_url=base, timeout=60) for base in bases]
    try:
        session = None
        for i in range(n):
            question = supply.next() if supply else QUESTIONS[(offset + i) % len(QUESTIONS)]
            body: dict = {"message": question}
            if supply is None and i % 2 == 1 and session:
                body = {"message": FOLLOW_UPS[i % len(FOLLOW_UPS)], "session_id": session}
            client = clients[(offset + i) % len(clients)]  # round-robin: a session's turns alternate replicas
            started = time.perf_counter()
            try:
                response = client.post("/chat", json=body)
            except httpx.HTTPError as exc:
                with results.lock:
                    results.latencies.append((time.perf_counter() - started) * 1000)
                    results.errors.append(f"{type(exc).__name__}: {exc}")
                continue
            latency = (time.perf_counter() - started) * 1000
            with results.lock:
                results.latencies.append(latency)
                if response.status_code != 200:
                    results.errors.append(f"{response.status_code}: {response.text[:200]}")
                else:
                    reply = response.json()
                    session = reply["session_id"]
                    if reply.get("timings"):
                        results.timings.append(reply["timings"] | {"http_ms": latency})
    finally:
        for client in clients:
            client.close()


def run(bases: list[str], clients: int, per_client: int, supply: QuestionSupply | None) -> tuple[Results, float]:
    results = Results()
    threads = [
        threading.Thread(target=client_loop, args=(bases, per_client, c * 7, results, supply)) for c in range(clients)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, time.perf_counter() - started


def cpu_of(stack: Stack | None, replicas: int) -> float:
    """CPU seconds so far of the first `replicas` deskmate processes and everything beside them (Chroma)."""
    if stack is None:
        return 0.0
    used = Stack(stack.name, replicas=stack.replicas[:replicas], others=stack.others)
    return sum(used.cpu_seconds().values())


def wait_for_background_loads(bases: list[str], timeout_s: float = 180.0) -> None:
    """Wait until no server is still loading its names model: the first trace a server writes starts that load
    (seconds of CPU) beside the turns; measured then, the first scenario would pay for it."""
    deadline = time.monotonic() + timeout_s
    for base in bases:
        while time.monotonic() < deadline:
            try:
                state = httpx.get(f"{base}/ready", timeout=10).json().get("redaction", {}).get("names_model")
            except (httpx.HTTPError, ValueError):
                state = None
            if state != "loading":
                break
            time.sleep(0.5)


def measure(
    label: str,
    bases: list[str],
    stack: Stack | None,
    client_counts: list[int],
    requests: int,
    rows: list[dict],
    supply: QuestionSupply | None,
) -> None:
    run(bases, 1, 10, supply)  # warm-up: models, pooled connections (distinct questions: never asked again)
    wait_for_background_loads(bases)
    for clients in client_counts:
        per_client = max(3, requests // clients)
        cpu_before = cpu_of(stack, len(bases))
        results, seconds = run(bases, clients, per_client, supply)
        cpu = cpu_of(stack, len(bases)) - cpu_before
        ok = max(1, len(results.latencies) - len(results.errors))
        row = {
            "config": label,
            "clients": clients,
            "n": len(results.latencies),
            "p50": statistics.median(results.latencies),
            "p95": percentile(results.latencies, 95),
            "rps": len(results.latencies) / seconds,
            "errors": results.errors,
            "cpu_per_turn": cpu / ok if stack else None,
            "timings": results.timings,
        }
        rows.append(row)
        print_row(row)


def print_header() -> None:
    print(
        f"{'configuration':<20} {'clients':>7} {'p50 ms':>7} {'p95 ms':>7} {'req/s':>6} {'errors':>6} "
        f"{'CPU ms/turn':>11} {'ceiling req/s':>13}"
    )


def print_row(row: dict) -> None:
    cores = os.cpu_count() or 1
    cpu = row["cpu_per_turn"]
    cpu_text = f"{cpu * 1000:>11.1f}" if cpu else f"{'-':>11}"
    ceiling = f"{cores / cpu:>13.1f}" if cpu else f"{'-':>13}"
    print(
        f"{row['config']:<20} {row['clients']:>7} {row['p50']:>7.1f} {row['p95']:>7.1f} {row['rps']:>6.1f} "
        f"{len(row['errors']):>6} {cpu_text} {ceiling}",
        flush=True,
    )
    for error in row["errors"][:3]:
        print("   ", error)


def print_profile(row: dict) -> None:
    """Where a turn's time goes: the replies' own stage timings (medians) against the HTTP latency."""
    timings = row["timings"]
    if not timings:
        return
    medians = {stage: statistics.median(t[stage] for t in timings) for stage in STAGES + ("http_ms",)}
    outside = medians["http_ms"] - medians["total_ms"]
    parts = ", ".join(f"{stage[:-3]} {medians[stage]:.1f}" for stage in STAGES[:-1])
    print(
        f"  {row['config']} at {row['clients']} clients, median ms: {parts}; graph total {medians['total_ms']:.1f}; "
        f"outside the graph (HTTP, session lock, queueing for a core) {outside:.1f} of {medians['http_ms']:.1f}"
    )


def summarise(rows: list[dict], replicas: int) -> None:
    cores = os.cpu_count() or 1
    by = {(r["config"], r["clients"]): r for r in rows}
    one, many = by.get(("postgres x1", 32)), by.get((f"postgres x{replicas}", 32))
    print()
    if one and many:
        ratio = many["rps"] / one["rps"]
        print(
            f"32 clients: {replicas} replicas {many['rps']:.1f} req/s vs 1 replica {one['rps']:.1f} req/s = "
            f"{ratio:.2f}x (target >= 1.5x)"
        )
        cpu = many["cpu_per_turn"] or 0
        if cpu:
            print(
                f"CPU per turn with {replicas} replicas: {cpu * 1000:.1f} ms (deskmate + Chroma) -> ceiling "
                f"{cores / cpu:.1f} turns/s on {cores} cores; one replica alone reaches "
                f"{one['rps']:.1f} req/s using {one['rps'] * (one['cpu_per_turn'] or 0):.2f} of {cores} cores"
            )
    eight = by.get((f"postgres x{replicas}", 8))
    if eight:
        verdict = "met" if eight["p95"] <= 150 else "missed"
        print(f"p95 at 8 clients with {replicas} replicas: {eight['p95']:.1f} ms (target <= 150 ms: {verdict})")
    print(
        f"machine load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"(other programs share these {cores} cores)"
    )
    print("\nwhere the time goes (the replies' own stage timings):")
    for row in rows:
        if row["clients"] in (1, 8):
            print_profile(row)


def one_question_ms(backend: str, samples: int = 60) -> float:
    """Median ms the `backend` encoder takes for one question it has not seen, on one thread, in this process
    (questions from the end of the list, never sent to a server)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from app.adapters.encoders import build_embedder

    embedder = build_embedder(backend, threads=1, query_cache_size=0)
    embedder.embed_query("warm up")
    times = []
    for question in DISTINCT[-samples:]:
        started = time.perf_counter()
        embedder.embed_query(question)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def verdicts(rows: list[dict], torch_ms: float) -> None:
    """The targets, for each backend's distinct-question rows."""
    by = {(r["config"], r["clients"]): r for r in rows}
    for config in dict.fromkeys(r["config"] for r in rows if r["config"].endswith("distinct")):
        one, eight = by.get((config, 1)), by.get((config, 8))
        if one:
            ratio = one["p50"] / torch_ms
            print(
                f"{config}: 1 client p50 {one['p50']:.1f} ms = {ratio:.1f}x one torch question ({torch_ms:.1f} ms) "
                f"(target <= 2.5x: {'met' if ratio <= 2.5 else 'missed'})"
            )
        if eight:
            print(
                f"{config}: 8 clients p95 {eight['p95']:.1f} ms (target <= 250 ms: "
                f"{'met' if eight['p95'] <= 250 else 'missed'}), {eight['rps']:.1f} req/s"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="measure this running server instead of starting one")
    parser.add_argument("--requests", type=int, default=200, help="requests per scenario (default 200)")
    parser.add_argument("--replicas", type=int, default=1, help="server mode: up to this many replicas (default 1)")
    parser.add_argument(
        "--database",
        choices=("embedded", "postgres"),
        default="embedded",
        help="postgres: also run server mode (Postgres + chroma run) beside the embedded default",
    )
    parser.add_argument("--clients", help="comma-separated client counts (default 1,8; with postgres 1,8,32)")
    parser.add_argument(
        "--backends",
        default="",
        help="comma-separated DESKMATE_EMBEDDING_BACKEND values, one embedded server each (default: the server's "
        "default only)",
    )
    parser.add_argument("--no-repeated", action="store_true", help="skip the repeated-question (cache) figure")
    args = parser.parse_args()
    server_mode_run = args.database == "postgres" or args.replicas > 1
    client_counts = [int(c) for c in (args.clients or ("1,8,32" if server_mode_run else "1,8")).split(",")]
    backends = [b for b in args.backends.split(",") if b] or [""]

    rows: list[dict] = []
    if args.url:
        print(f"POST /chat over HTTP at {args.url}, no LLM, {args.requests} requests per scenario")
        print_header()
        measure("given distinct", [args.url], None, client_counts, args.requests, rows, QuestionSupply(DISTINCT))
        if not args.no_repeated:
            measure("given repeated", [args.url], None, client_counts, args.requests, rows, None)
        return 0
    torch_ms = one_question_ms("torch")
    print(f"one question, torch encoder, 1 thread, this process: median {torch_ms:.1f} ms")
    for backend in backends:
        if backend and backend != "torch":
            print(f"one question, {backend} encoder, 1 thread, this process: median {one_question_ms(backend):.1f} ms")
    with tempfile.TemporaryDirectory(prefix="deskmate-latency-") as tmp:
        root = Path(tmp)
        print(
            f"POST /chat over HTTP, no LLM, {args.requests} requests per scenario, {os.cpu_count()} cores, "
            f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )
        print_header()
        for backend in backends:
            name = backend or "embedded"
            settings = {"DESKMATE_EMBEDDING_BACKEND": backend} if backend else {}
            with embedded(root / (backend or "embedded"), settings) as single:
                supply = QuestionSupply(DISTINCT)
                measure(f"{name} distinct", single.urls, single, client_counts, args.requests, rows, supply)
                if not args.no_repeated:
                    measure(f"{name} repeated", single.urls, single, client_counts, args.requests, rows, None)
        if server_mode_run:
            print(f"starting server mode: {args.replicas} replica(s), Postgres, chroma run …", flush=True)
            with server_mode(root / "server", max(1, args.replicas)) as stack:
                for count in sorted({1, args.replicas}):
                    supply = QuestionSupply(DISTINCT)
                    label = f"postgres x{count}"
                    measure(label, stack.urls[:count], stack, client_counts, args.requests, rows, supply)
            summarise(rows, args.replicas)
        else:
            print()
            for row in rows:
                print_profile(row)
        print()
        verdicts(rows, torch_ms)
        print(f"machine load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
