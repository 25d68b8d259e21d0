"""CPU per chat turn, split by node and phase, in-process (no HTTP): where a turn's CPU goes.

    python bench/turn_cpu.py                       # 200 turns, the bundled KB, the embedded defaults
    python bench/turn_cpu.py --turns 400 --distinct  # every message new: no query-embedding cache hits
    python bench/turn_cpu.py --threads 2           # DESKMATE_TORCH_THREADS=2, to compare
    python bench/turn_cpu.py --profile             # also the top functions by own time (cProfile), the turn
                                                   # thread's and the trace writer's

The real resources are built (app/resources.py: MiniLM, embedded Chroma with BM25 beside it, SQLite, the
redactors, the local trace store) in a scratch data dir, the bundled KB is indexed, and the turns are the
message mix of bench/chat_latency.py (half new conversations, half a short follow-up in the same session),
each through ChatService.ask plus what POST /chat adds (remembering cited chunks for feedback, the response
envelope serialised to JSON). Figures are CPU milliseconds per turn (time.thread_time of the thread running the
turn; time.process_time for the whole process, whose background threads write traces and checkpoints):

- each node of the support graph, and inside the nodes the adapters a turn calls (the embedding model,
  Chroma, BM25, the redactor), which are counted in their node too;
- LangGraph itself (the graph's invoke minus its nodes: channels, checkpoint, callbacks, tracer hooks);
- the session bookkeeping around the graph (claim, lock, prune), and the HTTP reply (envelope + JSON);
- other threads: process CPU minus the turn thread's (the trace writer's redaction, compression and insert).

Other programs on this machine share its cores: CPU time, unlike wall time, hardly depends on them, but spin
waits of a library's own threads do (see --threads). The nodes are timed by wrapping the functions the
graph is built from, here in the benchmark; nothing in the service changes.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from chat_latency import FOLLOW_UPS, QUESTIONS  # noqa: E402  (the same message mix)
from it_questions import distinct_questions  # noqa: E402  (> 1,000 different questions)

import app  # noqa: E402,F401  (offline defaults)

NODE_NAMES = (
    "redact",
    "classify",
    "translate",
    "embed_query",
    "retrieve",
    "decide",
    "check_status",
    "answer",
    "clarify",
    "converse",
    "troubleshoot",
    "ticket",
    "search_tickets",
    "use_integration",
    "localize",
    "respond",
)
# what the turn thread does after the graph, before the reply: the answer's cited chunks (for a vote) and the
# turn's outcome row (for insights)
RECORDS = ("answer record for feedback (remember_answer)", "outcome record (remember_outcome)")


class Meter:
    """Thread CPU seconds and calls per label; nested labels are counted in both."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.on = False

    def wrap(self, label: str, function):
        @functools.wraps(function)  # LangGraph reads the node's signature (runtime, config) through __wrapped__
        def timed(*args, **kwargs):
            if not self.on:
                return function(*args, **kwargs)
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.cpu[label] += time.thread_time() - started
                self.calls[label] += 1

        return timed

    def wrap_method(self, label: str, owner, name: str) -> None:
        setattr(owner, name, self.wrap(label, getattr(owner, name)))


def time_nodes(meter: Meter) -> None:
    """Replace the node functions graphs/support.py builds the graph from with timed ones (before it is built)."""
    import dataclasses

    import graphs.support as support

    for name in NODE_NAMES:  # the fixed nodes are added under their function's name
        if callable(getattr(support, name, None)):
            setattr(support, name, meter.wrap(f"node {name}", getattr(support, name)))
    # the action nodes come from the registry's rows (nodes/support/actions.py): their steps, wrapped
    rows = tuple(
        dataclasses.replace(row, step=meter.wrap(f"node {row.node}", row.step)) for row in support.registered_actions()
    )
    support.registered_actions = lambda: rows


def time_adapters(meter: Meter, resources) -> None:
    context = resources.retrieval_context
    meter.wrap_method("  embedding model (embed_query)", context.embedder, "embed_query")
    for name in ("query", "similarities"):
        meter.wrap_method(f"  Chroma {name}", context.index, name)
    for name in ("search", "lexical_scores", "neighbours"):
        meter.wrap_method(f"  BM25 {name}", context.index, name)
    meter.wrap_method("  redactor (memory)", context.redactor, "redact")
    chat = resources.chat
    meter.wrap_method("graph invoke (nodes + LangGraph)", chat._graph, "invoke")
    for name in ("claim", "after_turn"):  # after_turn: prune and forget_aliases
        meter.wrap_method("session bookkeeping (claim, prune)", chat._sessions, name)
    meter.wrap_method(RECORDS[0], chat, "remember_answer")
    meter.wrap_method(RECORDS[1], chat, "remember_outcome")


def messages(turns: int, distinct: bool, start: int = 0):
    """(message, continues the previous turn's session): chat_latency's repeated mix, or with `distinct` a new
    conversation with a question never asked before (bench/it_questions.py, from position `start`)."""
    if distinct:
        questions = distinct_questions()
        if start + turns > len(questions):
            sys.exit(f"only {len(questions)} distinct questions: ask for fewer --turns")
        for text in questions[start : start + turns]:
            yield text, False
        return
    for i in range(turns):
        follow_up = i % 2 == 1
        text = FOLLOW_UPS[i % len(FOLLOW_UPS)] if follow_up else QUESTIONS[i % len(QUESTIONS)]
        yield text, follow_up


def thread_cpu() -> dict[str, float]:
    """CPU seconds so far of each thread of this process, by thread name (native threads without a Python
    name, such as a library's pool, are summed as "native")."""
    import threading

    import psutil

    names = {t.native_id: t.name for t in threading.enumerate()}
    cpu: dict[str, float] = defaultdict(float)
    for thread in psutil.Process().threads():
        name = names.get(thread.id, "native")
        cpu[name.split("-")[0] if name.startswith("ThreadPoolExecutor") else name] += (
            thread.user_time + thread.system_time
        )
    return cpu


def run_turns(resources, turns: int, distinct: bool, meter: Meter, start: int = 0) -> None:
    session = None
    for text, follow_up in messages(turns, distinct, start):
        turn = resources.chat.ask(text, session_id=session if follow_up else None)  # records it for feedback too
        session = turn.session_id
        started = time.thread_time()
        turn.envelope().model_dump_json()
        if meter.on:
            meter.cpu["HTTP reply (envelope, JSON)"] += time.thread_time() - started


def report(
    meter: Meter, turns: int, thread_s: float, process_s: float, wall_s: float, threads: dict[str, float]
) -> None:
    per = 1000 / turns
    print(
        f"{turns} turns: process CPU {process_s * per:.1f} ms/turn, turn thread {thread_s * per:.1f} ms/turn, "
        f"wall {wall_s * per:.1f} ms/turn; load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(f"{'phase':<48} {'ms/turn':>8} {'share':>6} {'calls/turn':>10}")

    def row(label: str, seconds: float, calls: int | None = None) -> None:
        calls_text = f"{calls / turns:>10.2f}" if calls is not None else f"{'':>10}"
        print(f"{label:<48} {seconds * per:>8.2f} {seconds / process_s:>6.0%} {calls_text}")

    nodes = {k: v for k, v in meter.cpu.items() if k.startswith("node ")}
    invoke = meter.cpu.get("graph invoke (nodes + LangGraph)", 0.0)
    for label in sorted(nodes, key=lambda k: -nodes[k]):
        row(label, nodes[label], meter.calls[label])
        if label == "node embed_query":
            row(
                "  embedding model (embed_query)",
                meter.cpu.get("  embedding model (embed_query)", 0.0),
                meter.calls.get("  embedding model (embed_query)", 0),
            )
        if label == "node retrieve":
            for sub in sorted(k for k in meter.cpu if k.startswith(("  Chroma", "  BM25"))):
                row(sub, meter.cpu[sub], meter.calls[sub])
        if label == "node redact":
            row(
                "  redactor (memory)",
                meter.cpu.get("  redactor (memory)", 0.0),
                meter.calls.get("  redactor (memory)", 0),
            )
    row("LangGraph (invoke minus nodes: channels, checkpoint, callbacks)", invoke - sum(nodes.values()))
    row("session bookkeeping (claim, prune)", meter.cpu.get("session bookkeeping (claim, prune)", 0.0))
    for label in RECORDS:
        row(label, meter.cpu.get(label, 0.0))
    row(
        "HTTP reply (envelope, JSON)",
        meter.cpu.get("HTTP reply (envelope, JSON)", 0.0),
    )
    accounted = (
        invoke
        + meter.cpu.get("session bookkeeping (claim, prune)", 0.0)
        + meter.cpu.get("HTTP reply (envelope, JSON)", 0.0)
        + sum(meter.cpu.get(label, 0.0) for label in RECORDS)
    )
    row("rest of the turn thread (session lock, run config, logging)", thread_s - accounted)
    row("other threads (trace and outcome writers, checkpoints, torch)", process_s - thread_s)
    for name, seconds in sorted(threads.items(), key=lambda item: -item[1]):
        if name != "MainThread" and seconds * per >= 0.05:
            row(f"  thread {name}", seconds)


def profile_writer(store, profile):
    """Profile every batch the trace store's writer thread writes from now on (cProfile sees one thread)."""
    write = store._write

    def profiled(batch):
        profile.enable()
        try:
            return write(batch)
        finally:
            profile.disable()

    store._write = profiled
    return profile


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=200, help="measured turns (default 200), after 20 warm-up ones")
    parser.add_argument("--distinct", action="store_true", help="make every message new (no embedding cache hits)")
    parser.add_argument("--threads", type=int, default=None, help="DESKMATE_TORCH_THREADS for this run")
    parser.add_argument("--profile", action="store_true", help="also print the top functions by own CPU (cProfile)")
    args = parser.parse_args()
    if args.turns < 1:
        parser.error("--turns must be at least 1")

    from app.indexing_service import sync_bundled_kb
    from app.resources import build_resources
    from app.settings import Settings

    meter = Meter()
    time_nodes(meter)
    with tempfile.TemporaryDirectory(prefix="deskmate-turn-cpu-") as tmp:
        overrides = {"DESKMATE_TORCH_THREADS": str(args.threads)} if args.threads else {}
        env = {"DESKMATE_DATA_DIR": tmp, "DESKMATE_LOG_LEVEL": "WARNING"} | overrides
        os.environ.update(env)
        settings = Settings(_env_file=None)
        resources = build_resources(settings)
        try:
            counts = sync_bundled_kb(resources)
            print(
                f"bundled KB: {sum(counts.values())} files, {resources.index.count()} chunks; torch threads "
                f"{settings.embeddings.torch_threads}; {'distinct messages' if args.distinct else 'chat_latency messages'}"
            )
            time_adapters(meter, resources)
            run_turns(resources, 20, args.distinct, meter)  # warm-up: caches, pooled connections
            time.sleep(1.0)
            profile = writer_profile = None
            if args.profile:
                import cProfile

                profile = cProfile.Profile()
                if resources.traces is not None:
                    writer_profile = profile_writer(resources.traces, cProfile.Profile())
            meter.on = True
            threads0 = thread_cpu()
            process0, thread0, wall0 = time.process_time(), time.thread_time(), time.perf_counter()
            if profile:
                profile.enable()
            run_turns(resources, args.turns, args.distinct, meter, start=20)  # after the warm-up's questions
            if profile:
                profile.disable()
            thread_s = time.thread_time() - thread0
            wall_s = time.perf_counter() - wall0
            if resources.traces is not None:  # the trace writer finishes the last turns' records (all of them)
                resources.traces.flush(timeout=120)
            outcomes = getattr(resources, "outcome_writer", None)
            if outcomes is not None:  # and the outcome writer its rows
                outcomes.flush(timeout=120)
            time.sleep(1.0)
            process_s = time.process_time() - process0
            meter.on = False
            threads = {name: seconds - threads0.get(name, 0.0) for name, seconds in thread_cpu().items()}
            report(meter, args.turns, thread_s, process_s, wall_s, threads)
            if profile:
                import pstats

                print()
                pstats.Stats(profile).sort_stats("tottime").print_stats(30)
                if writer_profile is not None:
                    print("trace writer thread:")
                    pstats.Stats(writer_profile).sort_stats("cumulative").print_stats(30)
        finally:
            resources.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
