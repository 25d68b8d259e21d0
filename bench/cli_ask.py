"""`deskmate ask` wall time per question: against a running server versus `--local` (models loaded per call).

    python bench/cli_ask.py --url http://127.0.0.1:8000     # a server you started (make run)
    python bench/cli_ask.py --url http://127.0.0.1:8000 --local-runs 1

Each run is the real command in a fresh process, as a user types it: Python start, imports, the question,
the streamed answer. Prints the median and the slowest of the server runs, and the `--local` runs' times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUESTIONS = [
    "Outlook keeps asking for my password",
    "How do I connect to the VPN on my Mac?",
    "what is the VPN server address?",
    "the printer on floor 3 is jammed",
    "my laptop is out of disk space",
]


def run(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "ask", *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=600
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"deskmate ask failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True, help="the running deskmate to ask")
    parser.add_argument("--rounds", type=int, default=2, help="times each question is asked of the server")
    parser.add_argument("--local-runs", type=int, default=2, help="`--local` runs (each loads the models)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DESKMATE_")} | {"PYTHONPATH": str(REPO)}

    server = [run(["--url", args.url, q], env) for _ in range(args.rounds) for q in QUESTIONS]
    print(f"server: {len(server)} asks, median {statistics.median(server):.2f} s, slowest {max(server):.2f} s")
    with tempfile.TemporaryDirectory() as data:  # --local indexes the bundled KB into its own folder
        local_env = env | {"DESKMATE_DATA_DIR": data}
        run(["--local", QUESTIONS[0]], local_env)  # the first run indexes the KB; not counted
        local = [run(["--local", q], local_env) for q in QUESTIONS[: args.local_runs]]
    print(
        f"--local: {len(local)} asks (KB already indexed), median {statistics.median(local):.2f} s, "
        f"slowest {max(local):.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
