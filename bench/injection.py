"""How well core/injection.py flags prompt injections, and how often it cries wolf.

    python bench/injection.py --data ../shared/data                        # report half
    python bench/injection.py --data ../shared/data --half tune --misses 30

Data: `prompt_injection_injecguard/combined_labeled.jsonl` (InjecGuard's evaluation sets). Recall on
the injections (BIPIA indirect payloads, and the PINT/direct ones in InjecGuard's validation mix);
false-alarm rate on NotInject (benign sentences built around trigger words — "ignore", "bypass",
"override" — the over-defence test that matters for a help desk) and on WildGuard's benign prompts.
Split in halves by a seeded hash of the row id; tune on `tune`, quote `report`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.injection import injection_signals  # noqa: E402


def half_of(key: str, seed: int) -> str:
    return "tune" if int(hashlib.sha256(f"{seed}:{key}".encode()).hexdigest(), 16) % 2 == 0 else "report"


def group(row: dict) -> str:
    source = row["source"]
    if source.startswith("InjecGuard_valid"):
        return "valid (mixed, incl. PINT)"
    if source.startswith("NotInject"):
        return "NotInject"
    return source


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the shared data folder (../shared/data)")
    parser.add_argument("--half", choices=["tune", "report", "all"], default="report")
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--misses", type=int, default=0, help="print up to N misses and false alarms")
    args = parser.parse_args()

    path = args.data / "prompt_injection_injecguard" / "combined_labeled.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if args.half == "all" or half_of(str(r["id"]), args.seed) == args.half]

    flagged: Counter = Counter()
    total: Counter = Counter()
    by_category: dict[str, Counter] = defaultdict(Counter)
    signal_hits: Counter = Counter()
    misses, alarms, times = [], [], []
    for row in rows:
        started = time.perf_counter()
        signals = injection_signals(row["text"])
        times.append((time.perf_counter() - started) * 1000)
        key = (group(row), row["label"])
        total[key] += 1
        flagged[key] += bool(signals)
        signal_hits.update(signals)
        if row["label"] == 1:
            by_category[row.get("category") or group(row)]["n"] += 1
            by_category[row.get("category") or group(row)]["hit"] += bool(signals)
            if not signals:
                misses.append(f"[{group(row)} / {row.get('category')}] {row['text'][:140]!r}")
        elif signals:
            alarms.append(f"[{group(row)}] {signals} {row['text'][:140]!r}")

    print(f"half={args.half} seed={args.seed}: {len(rows)} rows")
    positives = sum(v for (g, label), v in total.items() if label == 1)
    hits = sum(v for (g, label), v in flagged.items() if label == 1)
    print(f"\nRECALL on injections: {hits}/{positives} = {hits / positives:.3f}")
    for g, label in sorted(total):
        if label == 1:
            print(f"  {g:30} {flagged[(g, 1)]:>4}/{total[(g, 1)]:<4} {flagged[(g, 1)] / total[(g, 1)]:.3f}")
    print("  by category:")
    for category, c in sorted(by_category.items(), key=lambda kv: kv[1]["hit"] / kv[1]["n"]):
        print(f"    {category:48} {c['hit']:>3}/{c['n']:<3}")
    print("\nFALSE-ALARM RATE on benign text:")
    for g, label in sorted(total):
        if label == 0:
            print(f"  {g:30} {flagged[(g, 0)]:>4}/{total[(g, 0)]:<4} {flagged[(g, 0)] / total[(g, 0)]:.3f}")
    print("\nsignals fired:", ", ".join(f"{name} {n}" for name, n in signal_hits.most_common()))
    times.sort()
    print(f"latency per text: p50 {statistics.median(times):.3f} ms, p95 {times[int(0.95 * (len(times) - 1))]:.3f} ms")
    if args.misses:
        print("\nmissed:")
        for line in misses[: args.misses]:
            print("  ", line)
        print("\nfalse alarms:")
        for line in alarms[: args.misses]:
            print("  ", line)


if __name__ == "__main__":
    main()
