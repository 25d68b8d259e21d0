"""Offline answers: quote what the knowledge base says, never invent it.

The best passage is quoted as written (numbered steps stay numbered), continued by the
retrieved chunks of the same section, and cited. Pure functions; the answer node calls them.
"""

from __future__ import annotations

import re

from core.lexicon import OS_LABELS, overlap_score
from core.records import RetrievedChunk, Source

_STEP = re.compile(r"^\s*\d+[.)]\s+\S")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
MAX_PASSAGE_CHARS = 900
MAX_SECTION_CHUNKS = 3
SEE_ALSO_MARGIN = 0.06


def has_steps(text: str) -> bool:
    return sum(1 for line in text.splitlines() if _STEP.match(line)) >= 2


def numbered_steps(text: str) -> list[str]:
    """The numbered steps of a passage, without their numbers."""
    return [re.sub(r"^\s*\d+[.)]\s+", "", line).strip() for line in text.splitlines() if _STEP.match(line)]


def label(chunk: RetrievedChunk | Source) -> str:
    return f"{chunk['title']} › {chunk['section']}" if chunk["section"] else chunk["title"]


def cite(n: int, chunk: RetrievedChunk | Source) -> str:
    return f"[{n}] {label(chunk)} — {chunk['source']}"


def to_source(n: int, chunk: RetrievedChunk) -> Source:
    return Source(
        n=n,
        title=chunk["title"],
        source=chunk["source"],
        section=chunk["section"],
        chunk_id=chunk["chunk_id"],
        score=round(float(chunk["score"]), 4),
        doc_id=chunk.get("doc_id", ""),
    )


def best_passage(query: str, text: str, limit: int = MAX_PASSAGE_CHARS) -> str:
    """The passage to quote: whole when short or step-shaped, else the paragraphs that match best."""
    if len(text) <= limit or has_steps(text):
        return text.strip()
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n|\n(?=\S)", text) if p.strip()]
    ranked = sorted(range(len(paragraphs)), key=lambda i: overlap_score(query, paragraphs[i]), reverse=True)
    chosen: list[int] = []
    used = 0
    for i in ranked:
        if used + len(paragraphs[i]) > limit and chosen:
            break
        chosen.append(i)
        used += len(paragraphs[i])
    passage = "\n\n".join(paragraphs[i] for i in sorted(chosen))
    if len(passage) > limit:  # one very long paragraph: cut at a sentence boundary
        sentences = _SENTENCE_END.split(passage)
        kept: list[str] = []
        for sentence in sentences:
            if sum(len(s) for s in kept) + len(sentence) > limit and kept:
                break
            kept.append(sentence)
        passage = " ".join(kept)
    return passage


def same_section_run(primary: RetrievedChunk, chunks: list[RetrievedChunk]) -> list[RetrievedChunk]:
    siblings = [c for c in chunks if c["doc_id"] == primary["doc_id"] and c["section"] == primary["section"]]
    siblings.sort(key=lambda c: c["chunk_index"])
    start = next(i for i, c in enumerate(siblings) if c["chunk_id"] == primary["chunk_id"])
    run = [siblings[start]]
    for chunk in siblings[start + 1 :]:  # only an unbroken run of following chunks reads as one text
        if chunk["chunk_index"] != run[-1]["chunk_index"] + 1 or len(run) >= MAX_SECTION_CHUNKS:
            break
        run.append(chunk)
    return run


def compose_answer(query: str, chunks: list[RetrievedChunk], user_os: str | None) -> tuple[str, list[Source]]:
    """Quote the best passage (and its section's continuation), cite it, and point at a close second."""
    primary = chunks[0]
    run = same_section_run(primary, chunks)
    body = "\n".join(best_passage(query, c["text"]) for c in run)
    sources = [to_source(1, primary)]
    lines = [f"From **{label(primary)}** [1]:", "", body]
    if primary["os"] and not user_os:
        others = sorted({c["os"] for c in chunks if c["doc_id"] == primary["doc_id"] and c["os"]} - {primary["os"]})
        hint = f" If you're on {' or '.join(OS_LABELS[o] for o in others)}, tell me." if others else ""
        lines += ["", f"These are the {OS_LABELS[primary['os']]} steps.{hint}"]
    runner_up = next(
        (
            c
            for c in chunks[1:]
            if c["doc_id"] != primary["doc_id"] and c["score"] >= primary["score"] - SEE_ALSO_MARGIN
        ),
        None,
    )
    if runner_up:
        sources.append(to_source(2, runner_up))
        lines += ["", f"See also [2] **{label(runner_up)}**."]
    lines += ["", "Sources:"] + [cite(s["n"], s) for s in sources]
    return "\n".join(lines), sources
