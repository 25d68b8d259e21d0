"""Cold start and idle memory of `deskmate serve` per embedding backend, on an already-indexed data dir.

    python bench/startup.py                    # onnx and torch, 3 starts each
    python bench/startup.py --starts 5 --backends onnx
    python bench/startup.py --names-model 2     # the redactors built with the names model before / after ready

For each backend a data dir is first indexed (the bundled KB: one `deskmate serve` started and stopped, which
also exports the ONNX model once into the data dir); then the server is started --starts times on it. Time to
ready is from process start to the first 200 of GET /ready (the models loaded, the stores open, the KB found
unchanged); idle RSS is the server process's resident memory (and its RssAnon/RssFile split) after the first
/ready and five questions, with no request in flight. Targets (onnx): idle RSS <= 600 MB, ready <= 5 s.
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

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from it_questions import distinct_questions  # noqa: E402
from stack import _CONFIG_PREFIXES, REPO, _stop, free_port  # noqa: E402


def start_once(data_dir: Path, backend: str, log: Path) -> tuple[float, float, float, float, bool]:
    """(seconds to ready, RSS MB, RssAnon MB, RssFile MB, torch loaded) of one start on `data_dir`."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CONFIG_PREFIXES)}
    env |= {"DESKMATE_DATA_DIR": str(data_dir), "DESKMATE_LOG_LEVEL": "WARNING", "DESKMATE_EMBEDDING_BACKEND": backend}
    url = f"http://127.0.0.1:{port}"
    with open(log, "ab") as out:
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
            env=env,
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        while True:
            if process.poll() is not None:
                sys.exit(f"deskmate serve exited with {process.returncode}: {log.read_text(errors='replace')[-2000:]}")
            try:
                if httpx.get(f"{url}/ready", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        ready_s = time.perf_counter() - started
        with httpx.Client(base_url=url, timeout=60) as client:
            for question in distinct_questions()[-5:]:
                client.post("/chat", json={"message": question}).raise_for_status()
        time.sleep(1.0)
        proc = psutil.Process(process.pid)
        rss = proc.memory_info().rss / 2**20
        fields = dict(
            line.split(":", 1)
            for line in Path(f"/proc/{process.pid}/status").read_text().splitlines()
            if line.startswith(("RssAnon:", "RssFile:"))
        )
        anon, mapped = (int(fields.get(n, "0 kB").split()[0]) / 1024 for n in ("RssAnon", "RssFile"))
        torch_loaded = any("libtorch" in m.path for m in proc.memory_maps())
        return ready_s, rss, anon, mapped, torch_loaded
    finally:
        _stop(process)


# what one child process of --names-model runs: the service's redactors built with the names model loaded in the
# foreground or on its own thread, then one text that needs it
_NAMES_CHILD = """
import sys, time
started = time.perf_counter()
from app.adapters.redaction import RedactionPolicy, build_engine, build_redactors
from app.settings import Settings
policy = RedactionPolicy.from_settings(Settings(_env_file=None))
imported = time.perf_counter()
redactors = build_redactors(policy, build_engine(policy, load_names_in_background=sys.argv[1] == "background"))
built = time.perf_counter()
redactors["trace"].redact("My colleague Naomi Ryan cannot print")
print(f"{imported - started:.1f} {built - imported:.1f} {time.perf_counter() - imported:.1f}")
"""


def compare_names_model_loading(rounds: int) -> None:
    """Foreground vs background names-model load, alternating in fresh processes (the same load for both)."""
    print(f"{'names model':<11} {'imports s':>9} {'redactors built s':>17} {'first name removed s':>20}")
    for _ in range(rounds):
        for mode in ("foreground", "background"):
            out = subprocess.run(
                [sys.executable, "-c", _NAMES_CHILD, mode], cwd=REPO, capture_output=True, text=True, check=True
            ).stdout.split()
            print(f"{mode:<11} {out[0]:>9} {out[1]:>17} {out[2]:>20}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default="onnx,torch")
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument(
        "--names-model", type=int, metavar="ROUNDS", help="only compare loading the names model before or after ready"
    )
    args = parser.parse_args()
    if args.names_model:
        print(f"cores {os.cpu_count()}, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        compare_names_model_loading(args.names_model)
        print(f"load average at the end {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return 0
    print(f"cores {os.cpu_count()}, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'backend':<8} {'first start s':>13} {'ready s (median)':>16} {'RSS MB':>7} {'anon':>6} {'file':>6} torch")
    with tempfile.TemporaryDirectory(prefix="deskmate-startup-") as tmp:
        for backend in [b for b in args.backends.split(",") if b]:
            data_dir = Path(tmp) / backend
            log = Path(tmp) / f"{backend}.log"
            first = start_once(data_dir, backend, log)  # indexes the KB (and exports the ONNX model)
            runs = [start_once(data_dir, backend, log) for _ in range(args.starts)]
            ready = statistics.median(r[0] for r in runs)
            rss, anon, mapped = (statistics.median(r[i] for r in runs) for i in (1, 2, 3))
            print(
                f"{backend:<8} {first[0]:>13.1f} {ready:>16.2f} {rss:>7.0f} {anon:>6.0f} {mapped:>6.0f} "
                f"{'yes' if any(r[4] for r in runs) else 'no'}",
                flush=True,
            )
    print(f"load average at the end {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
