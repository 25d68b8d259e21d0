"""Answer quality on the e-manual tech-support benchmark: the fact path, the normal answer, the combined system.

    python bench/answers.py --data ../shared/data --split tv-dev --sweep     # tune DESKMATE_FACT_MIN_CONFIDENCE
    python bench/answers.py --data ../shared/data --split tv-test            # report once, with the tuned default
    python bench/answers.py --data ../shared/data --split s10                # abstention on the wrong manual
    python bench/answers.py --data ../shared/data --split all --json

The TV manual is indexed section by section through deskmate's indexing graph into a fresh embedded Chroma
with BM25 beside it (bench/retrieval.py's `build_index`, as the app does), and every question is one
fresh conversation through the real support graph (redact → classify → embed → retrieve → decide →
answer/clarify/troubleshoot), offline, with no LLM: the extractive default.

Each question runs twice on the same index: once with the fact path off (the normal answer) and once
with it on (the combined system, what users get). Figures, per split:

- ROUGE-L recall of the answer's text against the gold answer (longest common subsequence of lower-cased
  word tokens, implemented below; citations, "Sources:" and the "From **…** [1]:" header are removed first),
  for (a) the fact path's answers where it fires, (b) the normal answer on those same questions and on all,
  (c) the combined system on all. ROUGE-L precision and F1 are printed beside it: a one-sentence answer
  cannot recall a whole gold passage, so recall alone undersells it.
- the fact path's firing rate and precision: a fired answer is correct when ≥ 60% of its tokens appear in
  order in the gold answer (ROUGE-L precision ≥ 0.6; the gold answers quote the manual, so a right span
  is nearly a substring of it).
- citation-correct: the first cited section is one of the question's `answer_bearing_section_ids`
  (questions without any are left out; an abstention counts as not correct).
- s10: only the TV manual is indexed and the Galaxy S10 phone questions are asked; abstained = deskmate gave
  no cited answer (its "not found" reply, a clarifying question: no chunk reached DESKMATE_MIN_SCORE).

--sweep (tv-dev only) prints the fact-path figures for a range of DESKMATE_FACT_MIN_CONFIDENCE values,
simulated from the fact-off run (the fact path only changes the answer node, so the state before it is the
same) and picks the lowest threshold whose precision is ≥ TARGET_PRECISION. Tune on tv-dev only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval import base_context, build_index, load_split, section_of  # noqa: E402  (bench/retrieval.py)

import app  # noqa: E402,F401  (offline defaults)

DATASET = "techsupport_qa_emanual"
QA_FILE = "smart_tv_remote_qa_normalized.jsonl"
CORRECT_PRECISION = 0.6  # a fact answer is correct when ≥ this share of its tokens is in the gold answer
TARGET_PRECISION = 0.8  # --sweep picks the lowest threshold reaching this precision on tv-dev
SWEEP = [round(0.40 + 0.05 * i, 2) for i in range(12)]  # 0.40 … 0.95

_TOKEN = re.compile(r"[a-z0-9]+")
_HEADER = re.compile(r"^From \*\*.*\*\* \[\d+\]:\s*$")
_BOILERPLATE = re.compile(r"^(These are the .* steps\.|See also \[\d+\].*|_.*_)\s*$")


# --- ROUGE-L ------------------------------------------------------------------------------------------------
def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence (two-row dynamic programme)."""
    if not a or not b:
        return 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_l(prediction: str, reference: str) -> dict[str, float]:
    pred, ref = tokens(prediction), tokens(reference)
    lcs = lcs_length(pred, ref)
    recall = lcs / len(ref) if ref else 0.0
    precision = lcs / len(pred) if pred else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"recall": recall, "precision": precision, "f1": f1}


def answer_body(text: str) -> str:
    """What the answer says, without its citation apparatus."""
    text = text.split("\nSources:", 1)[0]
    lines = [line for line in text.splitlines() if not _HEADER.match(line) and not _BOILERPLATE.match(line)]
    return re.sub(r"\[\d+\]", "", "\n".join(lines)).replace("**", "").strip()


# --- running deskmate ---------------------------------------------------------------------------------------
def load_gold(data: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (data / QA_FILE).read_text().splitlines() if line.strip()]
    return {r["qid"]: r for r in rows}


def load_s10_questions(data: Path) -> dict[str, str]:
    rows = [json.loads(line) for line in (data / "s10_queries.jsonl").read_text().splitlines() if line.strip()]
    return {r["_id"]: r["text"] for r in rows}


class Deskmate:
    """The support graph over one index; `ask` runs one fresh conversation and returns its whole state."""

    def __init__(self, context) -> None:
        from langgraph.checkpoint.memory import InMemorySaver

        from graphs.support import build_support_graph

        self.context = context
        self.graph = build_support_graph(InMemorySaver())

    def ask(self, question: str, **context_changes) -> dict:
        from graphs.support import turn_input

        config = {"configurable": {"thread_id": uuid.uuid4().hex}}
        context = dataclasses.replace(self.context, **context_changes)
        self.graph.invoke(turn_input(question), config, context=context)
        values = dict(self.graph.get_state(config).values)
        return values | values.get("turn", {})  # read flat; `turn` stays for the steps (fact_reply) that take a state


def fact_candidate(state: dict, context) -> tuple[float, str, str] | None:
    """(confidence, span, cited section) the fact path would offer for this state at any threshold, or None
    when it would not run (not a fact question, no confident chunk, or the answer node was not reached)."""
    from nodes.support.fact import extract_span, fact_reply

    if state.get("action") != "answer":
        return None
    reply = fact_reply(state, dataclasses.replace(context, fact_path=True, fact_min_confidence=0.0))
    if reply is None:
        return None
    confident = [c for c in state.get("retrieved_chunks", []) if c["score"] >= context.min_score]
    found = extract_span(state["query"], confident)
    return found.confidence, reply["answer"], section_of(reply["sources"][0]["source"])


def first_section(state: dict) -> str | None:
    sources = state.get("sources") or []
    return section_of(sources[0]["source"]) if sources else None


def run_tv(deskmate: Deskmate, queries: dict[str, str], gold: dict[str, dict], threshold: float) -> list[dict]:
    rows = []
    for qid, question in queries.items():
        normal = deskmate.ask(question, fact_path=False)
        combined = deskmate.ask(question, fact_path=True, fact_min_confidence=threshold)
        rows.append(
            {
                "qid": qid,
                "question": question,
                "gold": gold[qid]["answer"],
                "bearing": set(gold[qid].get("answer_bearing_section_ids") or []),
                "normal": answer_body(normal.get("answer", "")),
                "normal_section": first_section(normal),
                "combined": answer_body(combined.get("answer", "")),
                "combined_section": first_section(combined),
                "fired": combined.get("answer_path") == "fact",
                "candidate": fact_candidate(normal, deskmate.context),
            }
        )
    return rows


# --- figures ------------------------------------------------------------------------------------------------
def mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else float("nan")


def fact_figures(rows: list[dict], threshold: float) -> dict:
    """The fact path at `threshold`, simulated from each question's candidate."""
    fired = [r for r in rows if r["candidate"] and r["candidate"][0] >= threshold]
    fact_scores = [rouge_l(answer_body(r["candidate"][1]), r["gold"]) for r in fired]
    normal_scores = [rouge_l(r["normal"], r["gold"]) for r in fired]
    return {
        "threshold": threshold,
        "fired": len(fired),
        "firing_rate": mean([float(bool(r["candidate"] and r["candidate"][0] >= threshold)) for r in rows]),
        "precision": mean([float(s["precision"] >= CORRECT_PRECISION) for s in fact_scores]),
        "fact_rougeL_recall": mean([s["recall"] for s in fact_scores]),
        "fact_rougeL_f1": mean([s["f1"] for s in fact_scores]),
        "normal_rougeL_recall_same_questions": mean([s["recall"] for s in normal_scores]),
        "normal_rougeL_f1_same_questions": mean([s["f1"] for s in normal_scores]),
        "fact_citation_correct": mean([float(r["candidate"][2] in r["bearing"]) for r in fired if r["bearing"]]),
        "normal_citation_correct_same_questions": mean(
            [float(r["normal_section"] in r["bearing"]) for r in fired if r["bearing"]]
        ),
    }


def system_figures(rows: list[dict], answer_key: str, section_key: str) -> dict:
    scores = [rouge_l(r[answer_key], r["gold"]) for r in rows]
    labelled = [r for r in rows if r["bearing"]]
    return {
        "rougeL_recall": mean([s["recall"] for s in scores]),
        "rougeL_precision": mean([s["precision"] for s in scores]),
        "rougeL_f1": mean([s["f1"] for s in scores]),
        "citation_correct": mean([float(r[section_key] in r["bearing"]) for r in labelled]),
        "labelled": len(labelled),
        "answered": mean([float(r[section_key] is not None) for r in rows]),
    }


def tv_report(split: str, rows: list[dict], threshold: float) -> dict:
    fired = [r for r in rows if r["fired"]]
    fact = fact_figures(rows, threshold)
    fact_questions = sum(1 for r in rows if r["candidate"] is not None)
    real_fact = [rouge_l(r["combined"], r["gold"]) for r in fired]
    report = {
        "split": split,
        "questions": len(rows),
        "threshold": threshold,
        "fact_questions_with_candidate": fact_questions,
        "fact": fact
        | {
            "fired_in_graph": len(fired),
            "precision_in_graph": mean([float(s["precision"] >= CORRECT_PRECISION) for s in real_fact]),
        },
        "normal": system_figures(rows, "normal", "normal_section"),
        "combined": system_figures(rows, "combined", "combined_section"),
    }
    print(f"\n== {split}: {len(rows)} questions, DESKMATE_FACT_MIN_CONFIDENCE={threshold} ==")
    print(
        f"fact path: classified fact + confident chunk on {fact_questions} questions; fired on {len(fired)} "
        f"(firing rate {len(fired) / len(rows):.3f}); precision {fact['precision']:.3f} "
        f"(span ROUGE-L precision ≥ {CORRECT_PRECISION} vs gold)"
    )
    print(f"{'system':<44} {'R-L rec':>8} {'R-L prec':>9} {'R-L F1':>7} {'cite ok':>8} {'answered':>9}")
    print(
        f"{'(a) fact path, where it fires':<44} {fact['fact_rougeL_recall']:>8.3f} {'':>9} "
        f"{fact['fact_rougeL_f1']:>7.3f} {fact['fact_citation_correct']:>8.3f} {'':>9}"
    )
    print(
        f"{'(b) normal answer, same questions':<44} {fact['normal_rougeL_recall_same_questions']:>8.3f} {'':>9} "
        f"{fact['normal_rougeL_f1_same_questions']:>7.3f} {fact['normal_citation_correct_same_questions']:>8.3f}"
    )
    for name, key in (("(b) normal answer (fact path off), all", "normal"), ("(c) combined system, all", "combined")):
        s = report[key]
        print(
            f"{name:<44} {s['rougeL_recall']:>8.3f} {s['rougeL_precision']:>9.3f} {s['rougeL_f1']:>7.3f} "
            f"{s['citation_correct']:>8.3f} {s['answered']:>9.3f}"
        )
    return report


def sweep(rows: list[dict]) -> float:
    print("\nsweep on tv-dev (simulated from the fact-off run):")
    print(
        f"{'threshold':>9} {'fired':>6} {'rate':>6} {'precision':>9} {'fact R-L rec':>12} {'normal R-L rec':>14} "
        f"{'fact F1':>8} {'normal F1':>9} {'cite ok':>8}"
    )
    chosen = None
    for t in SWEEP:
        f = fact_figures(rows, t)
        print(
            f"{t:>9.2f} {f['fired']:>6} {f['firing_rate']:>6.3f} {f['precision']:>9.3f} "
            f"{f['fact_rougeL_recall']:>12.3f} "
            f"{f['normal_rougeL_recall_same_questions']:>14.3f} {f['fact_rougeL_f1']:>8.3f} "
            f"{f['normal_rougeL_f1_same_questions']:>9.3f} {f['fact_citation_correct']:>8.3f}"
        )
        if chosen is None and f["fired"] >= 5 and f["precision"] >= TARGET_PRECISION:
            chosen = t
    print(f"lowest threshold with precision ≥ {TARGET_PRECISION} (and ≥ 5 firings): {chosen}")
    return chosen if chosen is not None else SWEEP[-1]


def s10_report(deskmate: Deskmate, questions: dict[str, str], threshold: float) -> dict:
    abstained = fact_fired = 0
    for question in questions.values():
        state = deskmate.ask(question, fact_path=True, fact_min_confidence=threshold)
        abstained += not state.get("sources")
        fact_fired += state.get("answer_path") == "fact"
    n = len(questions)
    print(f"\n== s10 (Galaxy S10 questions against the TV manual only): {n} questions ==")
    print(
        f"abstained (no cited answer): {abstained}/{n} = {abstained / n:.3f}; answered from the wrong manual: "
        f"{n - abstained}; of which by the fact path: {fact_fired}"
    )
    return {
        "split": "s10",
        "questions": n,
        "abstention_rate": round(abstained / n, 4),
        "answered_wrong_manual": n - abstained,
        "fact_path_fired": fact_fired,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help=f"../shared/data (or its {DATASET} folder itself)")
    parser.add_argument("--split", choices=("tv-dev", "tv-test", "s10", "all"), default="tv-dev")
    parser.add_argument("--limit", type=int, default=None, help="ask only the first N questions of each split")
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="DESKMATE_FACT_MIN_CONFIDENCE to run with (default: the settings' default)",
    )
    parser.add_argument("--sweep", action="store_true", help="tv-dev: sweep the fact-path threshold and use the pick")
    parser.add_argument("--json", action="store_true", help="also print the figures as one last line of JSON")
    args = parser.parse_args()
    data = args.data / DATASET if (args.data / DATASET).is_dir() else args.data
    if args.sweep and args.split not in ("tv-dev", "all"):
        parser.error("--sweep tunes on tv-dev only")

    from app.adapters.embeddings import SentenceTransformerEmbedder
    from app.adapters.redactor import PatternRedactor
    from app.settings import Settings

    settings = Settings(_env_file=None)
    threshold = args.threshold if args.threshold is not None else settings.retrieval.fact_min_confidence
    gold = load_gold(data)
    splits = ["tv-dev", "tv-test", "s10"] if args.split == "all" else [args.split]
    corpus, _, _ = load_split(data, "tv-dev")  # the TV manual: every split is asked against it
    embedder = SentenceTransformerEmbedder()
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        _, index = build_index(corpus, settings, embedder, tmp)
        print(
            f"TV manual: {len(corpus)} sections, {index.count()} chunks, indexed in "
            f"{time.perf_counter() - started:.0f} s; min_score={settings.retrieval.min_score}, no LLM (extractive)"
        )
        context = dataclasses.replace(
            base_context(index, embedder, settings),
            redactor=PatternRedactor(),
            fact_path=settings.retrieval.fact_path,
            fact_min_confidence=threshold,
        )
        deskmate = Deskmate(context)
        for split in splits:
            started = time.perf_counter()
            if split == "s10":
                questions = load_s10_questions(data)
                questions = dict(list(questions.items())[: args.limit]) if args.limit else questions
                results[split] = s10_report(deskmate, questions, threshold)
            else:
                _, queries, _ = load_split(data, split)
                queries = {qid: q for qid, q in queries.items() if qid in gold}
                queries = dict(list(queries.items())[: args.limit]) if args.limit else queries
                rows = run_tv(deskmate, queries, gold, threshold)
                if args.sweep and split == "tv-dev":
                    picked = sweep(rows)
                    results["sweep_pick"] = {"threshold": picked}  # type: ignore[assignment]
                    if picked != threshold:
                        print(f"re-running tv-dev with the pick {picked}")
                        threshold = picked
                        deskmate.context = dataclasses.replace(deskmate.context, fact_min_confidence=picked)
                        rows = run_tv(deskmate, queries, gold, threshold)
                results[split] = tv_report(split, rows, threshold)
            print(f"({split} took {time.perf_counter() - started:.0f} s)")
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
