"""Does learning from votes help? Votes are simulated on tv-dev; the effect is measured on tv-test.

    python bench/feedback.py --data ../shared/data/techsupport_qa_emanual [--voters 3] [--noise 0.1]

Each tv-dev question is asked by `voters` simulated users. Each gets deskmate's answer (the default
pipeline, no feedback yet): the confident chunks among the top-k are cited, as the answer step cites
them, and the message is recorded in a real FeedbackStore (SQLite) exactly as POST /chat records it.
The user votes up when the first cited passage is from a relevant section, down otherwise (or when
nothing was confident), and a share `noise` of the votes is flipped at random (a careless user).
Then tv-test — different questions over the same manual — is searched with the learned multipliers,
and tv-dev again (the voted questions asked once more: what repeat questions gain).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import app  # noqa: E402,F401  (offline defaults)

CITED = 3  # passages an answer cites at most (the best one and its companions)


def simulate_votes(
    data: Path, context, embedder, db_path: Path, settings, *, voters: int = 3, noise: float = 0.1, seed: int = 7
):
    """Votes on tv-dev answers into a fresh FeedbackStore; returns (store, one-line summary)."""
    from retrieval import load_split, section_of

    from app.adapters.feedback import CitedChunk, FeedbackStore
    from nodes.support.retrieval import feedback_key, search_chunks

    _, queries, qrels = load_split(data, "tv-dev")
    store = FeedbackStore(
        db_path,
        embed=embedder.embed_query,
        min_votes=settings.feedback.feedback_min_votes,
        max_multiplier=settings.feedback.feedback_max_multiplier,
        similarity=settings.feedback.feedback_similarity,
        cache_s=settings.feedback.feedback_cache_s,
    )
    plain = dataclasses.replace(context, feedback=None)
    rng = random.Random(seed)
    up = down = 0
    for qid, text in queries.items():
        hits = search_chunks(plain, text, embedder.embed_query(text), k=plain.top_k, groups=None)
        cited = [h for h in hits if h["score"] >= plain.min_score][:CITED]
        good = bool(cited) and section_of(cited[0]["source"]) in qrels[qid]
        for voter in range(voters):
            message_id, session_id = f"{qid}#{voter}", f"simulated-user-{voter}"
            store.record_answer(
                message_id,
                session_id,
                text,
                [
                    CitedChunk(key=feedback_key(c), chunk_id=c["chunk_id"], label=c["title"], source=c["source"])
                    for c in cited
                ],
            )
            vote_up = good if rng.random() >= noise else not good
            store.vote(message_id, session_id, "up" if vote_up else "down")
            up, down = up + vote_up, down + (not vote_up)
    stats = store.stats()
    summary = (
        f"{up + down} simulated votes on {len(queries)} tv-dev questions ({up} up, {down} down, "
        f"{noise:.0%} flipped); {stats['chunks_adjusted']} chunks adjusted"
    )
    return store, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="folder of techsupport_qa_emanual")
    parser.add_argument("--voters", type=int, default=3, help="simulated users asking each tv-dev question")
    parser.add_argument("--noise", type=float, default=0.1, help="share of votes flipped at random")
    args = parser.parse_args()

    from retrieval import base_context, build_index, deskmate_system, evaluate, load_split, print_table

    from app.adapters.embeddings import SentenceTransformerEmbedder
    from app.settings import Settings

    settings = Settings(_env_file=None)
    embedder = SentenceTransformerEmbedder()
    corpus, queries, qrels = load_split(args.data, "tv-test")
    _, dev_queries, dev_qrels = load_split(args.data, "tv-dev")
    with tempfile.TemporaryDirectory() as tmp:
        _, index = build_index(corpus, settings, embedder, tmp)
        base = base_context(index, embedder, settings)
        before = evaluate(deskmate_system(base, embedder), queries, qrels)
        dev_before = evaluate(deskmate_system(base, embedder), dev_queries, dev_qrels)
        store, summary = simulate_votes(
            args.data, base, embedder, Path(tmp) / "feedback.sqlite", settings, voters=args.voters, noise=args.noise
        )
        voted = dataclasses.replace(base, feedback=store)
        after = evaluate(deskmate_system(voted, embedder), queries, qrels)
        dev_after = evaluate(deskmate_system(voted, embedder), dev_queries, dev_qrels)
        store.close()
    print(summary)
    print_table("tv-test (new questions)", [("deskmate, no votes", before), ("deskmate, votes from tv-dev", after)])
    print_table(
        "tv-dev again (the voted questions repeated)",
        [("deskmate, no votes", dev_before), ("deskmate, votes from tv-dev", dev_after)],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
