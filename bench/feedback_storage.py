"""Bytes the feedback store keeps per answer: a row per citation (revision 0002) against today's layout
(a passage once, an answer keeping its passages' ids), on the embedded SQLite file.

    python bench/feedback_storage.py               # 2,000 answers each citing 1, 5 and 20 passages
    python bench/feedback_storage.py --answers 10000

Answers cite passages drawn from a pool the size of a small knowledge base, with the lengths a soak's data
dir shows (32-character message, session and chunk ids, `doc:hash` keys, "title › section" labels). Bytes are
the pages SQLite's dbstat counts for the feedback tables and their indexes, after a VACUUM.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from app.adapters.feedback import CitedChunk, FeedbackStore  # noqa: E402
from app.storage import Database  # noqa: E402

FEEDBACK_TABLES = ("answers", "answer_chunks", "cited_chunks", "votes")
QUESTIONS = [
    "How do I connect to the VPN on my Mac?",
    "my printer won't print",
    "how do I reset my password",
    "where do I find my bitlocker recovery key",
    "outlook is stuck in the outbox",
]


def passages(count: int, rng: random.Random) -> list[CitedChunk]:
    out = []
    for i in range(count):
        doc = uuid.UUID(int=rng.getrandbits(128)).hex
        key = f"{doc[:16]}:{uuid.UUID(int=rng.getrandbits(128)).hex[:16]}"
        label = f"Article {i} about a common IT problem › Windows > Settings app, step {i % 7}"
        out.append(
            CitedChunk(
                key=key, chunk_id=uuid.UUID(int=rng.getrandbits(128)).hex, label=label, source=f"kb/article-{i}.md"
            )
        )
    return out


def feedback_bytes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        conn.execute("VACUUM")
        names = {
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE tbl_name IN (%s)" % ",".join("?" * len(FEEDBACK_TABLES)),
                FEEDBACK_TABLES,
            )
        }
        return sum(
            size for name, size in conn.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name") if name in names
        )


def old_layout(path: Path, answers: list[tuple[str, str, list[CitedChunk]]]) -> int:
    db = Database(f"sqlite:///{path}")
    db.upgrade("0002")
    db.close()
    now = datetime.now(UTC).isoformat(timespec="seconds")
    with sqlite3.connect(path) as conn:  # what the store wrote before: an answer row and a row per citation
        for message_id, question, cited in answers:
            conn.execute("INSERT INTO answers VALUES (?, ?, ?, ?)", (message_id, uuid.uuid4().hex, question, now))
            conn.executemany(
                "INSERT INTO answer_chunks VALUES (?, ?, ?, ?, ?)",
                [(message_id, c.key, c.chunk_id, c.label, c.source) for c in cited],
            )
    return feedback_bytes(path)


def new_layout(path: Path, answers: list[tuple[str, str, list[CitedChunk]]]) -> int:
    store = FeedbackStore(path, embed=lambda text: [0.0] * 384)
    for message_id, question, cited in answers:
        store.record_answer(message_id, uuid.uuid4().hex, question, cited)
    store.close()
    return feedback_bytes(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=2000)
    parser.add_argument("--passages", type=int, default=300, help="distinct passages answers cite")
    args = parser.parse_args()
    rng = random.Random(7)
    pool = passages(args.passages, rng)
    print(f"{args.answers} answers over {args.passages} passages; bytes per answer (feedback tables + indexes)")
    print(f"{'cited':>5} {'row per citation':>16} {'compact':>8} {'ratio':>6}")
    with tempfile.TemporaryDirectory(prefix="deskmate-feedback-bench-") as scratch:
        for cited_per_answer in (1, 5, 20):
            answers = [
                (uuid.uuid4().hex, rng.choice(QUESTIONS), rng.sample(pool, cited_per_answer))
                for _ in range(args.answers)
            ]
            before = old_layout(Path(scratch) / f"old-{cited_per_answer}.sqlite", answers) / args.answers
            after = new_layout(Path(scratch) / f"new-{cited_per_answer}.sqlite", answers) / args.answers
            print(f"{cited_per_answer:>5} {before:>16.0f} {after:>8.0f} {before / after:>6.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
