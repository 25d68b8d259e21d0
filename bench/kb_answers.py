"""Answer quality on a real IT knowledge base: does the offline answer tell the employee what to do?

    python bench/kb_answers.py --data ../shared/data                      # the dev KB (it_kb_msdocs_dev)
    python bench/kb_answers.py --data ../shared/data --tv                 # + tv-test ROUGE-L/cite, s10 abstention
    python bench/kb_answers.py --data ../shared/data --routing            # + help-desk utterance routing
    python bench/kb_answers.py --data ../shared/data --all --json         # everything, and one line of JSON
    python bench/kb_answers.py --kb DIR --questions FILE.jsonl            # your own KB and questions

A knowledge-base folder is indexed through deskmate's own indexing service (the same path as `deskmate ingest`:
parse → chunk → embed → Chroma + BM25) into a temporary embedded store, then every question is one fresh
conversation through the real support graph, offline (no LLM), exactly as /chat runs it.

Questions are JSON lines: {id, question, answerable, gold_files, gold_section, question_type}. Figures per question
type and overall:

- answered: the reply cites a source (an answer or the first step of a walkthrough); abstained otherwise
  (not-found, ticket offer, clarifying question).
- article@1: the first cited source is one of the question's gold files (`strict`: the first gold file).
- section answered ("gold section answered"): the reply answers from the gold section, i.e. (a) the section it
  quotes is the gold section or one of its subsections (heading text compared without markup, case or
  punctuation), or (b) the gold section's own steps are in the reply (at least 60 % of its numbered or bulleted
  items, each counted present when 70 % of its words occur in the reply). Counted over answerable questions.
- abstention: share of unanswerable questions with no cited answer; answering: share of answerable ones answered.
- R-L gold: ROUGE-L recall of the reply against the gold section's text (its first 200 words).
- words: the reply's length without its Sources block; ms: wall time of the turn.

--tv adds the e-manual figures of bench/answers.py (tv-test ROUGE-L recall and citation-correct, s10 abstention);
--routing adds bench/routing.py (help-desk utterances, per intent) when present. Tune only on dev sets.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import app  # noqa: E402,F401  (offline defaults)

DEV_SET = "it_kb_msdocs_dev"
STEP_PRESENT = 0.7  # share of a gold item's words that must occur in the reply
STEPS_PRESENT = 0.6  # share of the gold section's items that must be present
GOLD_WORDS = 200

_TOKEN = re.compile(r"[a-z0-9]+")
_TAG = re.compile(r"<[^>]+>")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def heading_key(text: str) -> str:
    """A heading compared without markup, case or punctuation."""
    text = _TAG.sub(" ", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return " ".join(tokens(text))


def reply_body(text: str) -> str:
    return text.split("\nSources:")[0]


# --- the gold section of an article, read with deskmate's own parser ------------------------------------
def gold_section(path: Path, heading: str) -> tuple[str, list[str]]:
    """(text, items) of the section under `heading` (its subsections included), from the raw Markdown."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    key = heading_key(heading)
    body: list[str] = []
    level = None
    fence = False
    for line in lines:
        if line.strip().startswith("```"):
            fence = not fence
        match = None if fence else re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if match:
            if level is not None and len(match.group(1)) <= level:
                break
            if level is None and heading_key(match.group(2)) == key:
                level = len(match.group(1))
                continue
        if level is not None:
            body.append(line)
    items = [
        re.sub(r"^\s*(?:\d+[.)]|[-*+])\s+", "", line).strip()
        for line in body
        if re.match(r"^\s*(?:\d+[.)]|[-*+])\s+\S", line)
    ]
    items = [i for i in items if len(tokens(i)) >= 3]
    return "\n".join(body), items


def steps_present(items: list[str], reply: str) -> bool:
    if not items:
        return False
    words = set(tokens(reply))
    present = sum(1 for item in items if sum(1 for t in tokens(item) if t in words) >= STEP_PRESENT * len(tokens(item)))
    return present >= STEPS_PRESENT * len(items)


def lcs_length(a: list[str], b: list[str]) -> int:
    if not a or not b:
        return 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_recall(reply: str, reference: str) -> float:
    ref = tokens(reference)[:GOLD_WORDS]
    return lcs_length(tokens(reply), ref) / len(ref) if ref else 0.0


# --- running deskmate ------------------------------------------------------------------------------------
def build_kb(folder: Path, settings, embedder, store: str):
    """Index a folder through the indexing service, as `deskmate ingest` does; returns the hybrid index."""
    from app.adapters.lexical_index import HybridIndex
    from app.adapters.parsers import FileParser
    from app.adapters.tracing import NullTracer
    from app.adapters.vector_index import ChromaVectorIndex, make_client
    from app.indexing_service import IndexingService
    from graphs.indexing import IndexingContext, build_indexing_graph

    index = HybridIndex(ChromaVectorIndex(make_client("persistent", path=store), "bench_kb"))
    context = IndexingContext(
        embedder=embedder, index=index, parser=FileParser(), chunk_max_tokens=settings.ingestion.chunk_max_tokens
    )
    service = IndexingService(build_indexing_graph(), context, NullTracer())
    results = service.sync_directory(folder, prefix="kb")
    failed = [r for r in results if r.status == "failed"]
    for r in failed:
        print(f"  not indexed: {r.source}: {r.error}")
    return index, len(results) - len(failed)


def support_context(index, embedder, settings):
    from retrieval import base_context  # bench/retrieval.py

    from app.adapters.redactor import PatternRedactor

    return dataclasses.replace(
        base_context(index, embedder, settings),
        redactor=PatternRedactor(),
        fact_path=settings.retrieval.fact_path,
        fact_min_confidence=settings.retrieval.fact_min_confidence,
    )


class Deskmate:
    """The support graph over one index; `ask` runs one fresh conversation and returns its state and time."""

    def __init__(self, context) -> None:
        from langgraph.checkpoint.memory import InMemorySaver

        from graphs.support import build_support_graph

        self.context = context
        self.graph = build_support_graph(InMemorySaver())

    def ask(self, question: str) -> tuple[dict, float]:
        from graphs.support import turn_input

        config = {"configurable": {"thread_id": uuid.uuid4().hex}}
        started = time.perf_counter()
        self.graph.invoke(turn_input(question), config, context=self.context)
        elapsed = (time.perf_counter() - started) * 1000
        values = dict(self.graph.get_state(config).values)
        return values | values.get("turn", {}), elapsed  # the turn record's keys read flat


def source_file(source: dict) -> str:
    return Path(source["source"]).name


def judge(question: dict, state: dict, ms: float, corpus: Path) -> dict:
    sources = state.get("sources") or []
    reply = reply_body(state.get("answer", ""))
    answered = bool(sources) and state.get("action") in ("answer", "troubleshoot")
    row = {
        "id": question["id"],
        "type": question.get("question_type", "?"),
        "answerable": question["answerable"],
        "question": question["question"],
        "answered": answered,
        "action": state.get("action"),
        "confidence": state.get("confidence"),
        "words": len(reply.split()),
        "ms": ms,
        "cited": f"{source_file(sources[0])} › {sources[0]['section']}" if sources else "",
        "reply": reply,
    }
    if not question["answerable"]:
        return row
    gold_files = question["gold_files"]
    first = source_file(sources[0]) if answered else ""
    text, items = gold_section(corpus / gold_files[0], question["gold_section"])
    key = heading_key(question["gold_section"])
    quoted_path = [heading_key(p) for p in sources[0]["section"].split(" > ")] if answered else []
    whole = key == heading_key(sources[0]["title"]) if answered else False  # the gold "section" is the article
    row.update(
        article=first in gold_files,
        article_strict=first == gold_files[0],
        section=answered and first == gold_files[0] and (whole or key in quoted_path or steps_present(items, reply)),
        rouge=rouge_recall(reply, text) if answered else 0.0,
        gold=f"{gold_files[0]} › {question['gold_section']}",
    )
    return row


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else float("nan")


def summarise(rows: list[dict]) -> dict:
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    answered_rows = [r for r in rows if r["answered"]]
    return {
        "questions": len(rows),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "answering": mean(r["answered"] for r in answerable),
        "article@1": mean(r["article"] for r in answerable),
        "article@1_strict": mean(r["article_strict"] for r in answerable),
        "section_answered": mean(r["section"] for r in answerable),
        "rougeL_gold": mean(r["rouge"] for r in answerable),
        "abstention": mean(not r["answered"] for r in unanswerable),
        "words_p50": statistics.median([r["words"] for r in answered_rows]) if answered_rows else 0,
        "ms_p50": statistics.median([r["ms"] for r in rows]),
        "ms_p95": sorted(r["ms"] for r in rows)[int(0.95 * (len(rows) - 1))],
    }


def print_kb_report(name: str, rows: list[dict]) -> dict:
    by_type: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_type[r["type"]].append(r)
    report = {"all": summarise(rows)} | {t: summarise(rs) for t, rs in sorted(by_type.items())}
    print(f"\n== {name}: {len(rows)} questions ==")
    print(
        f"{'type':<10} {'n':>4} {'answ.':>6} {'art@1':>6} {'strict':>6} {'section':>8} {'R-L':>6} "
        f"{'abst.':>6} {'words':>6} {'ms p50':>7}"
    )
    for t, s in report.items():

        def f(x):
            return "   -  " if x != x else f"{x:6.3f}"

        print(
            f"{t:<10} {s['questions']:>4} {f(s['answering'])} {f(s['article@1'])} {f(s['article@1_strict'])} "
            f"  {f(s['section_answered'])} {f(s['rougeL_gold'])} {f(s['abstention'])} {s['words_p50']:>6} "
            f"{s['ms_p50']:>7.0f}"
        )
    return report


def run_kb(kb: Path, questions: list[dict], settings, embedder, args) -> tuple[dict, list[dict]]:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        index, documents = build_kb(kb, settings, embedder, str(args.store or tmp))
        print(f"{kb}: {documents} documents, {index.count()} chunks, indexed in {time.perf_counter() - started:.0f} s")
        deskmate = Deskmate(support_context(index, embedder, settings))
        deskmate.ask("warm up")
        rows = [judge(q, *deskmate.ask(q["question"]), kb) for q in questions]
    if args.verbose:
        for r in rows:
            mark = (
                ("ok " if r.get("section") else "art" if r.get("article") else "-- ")
                if r["answerable"]
                else ("abs" if not r["answered"] else "ANS")
            )
            print(f"\n[{mark}] {r['id']} ({r['type']}) conf={r['confidence']} {r['question']}")
            print(f"      cited: {r['cited'] or '(none)'}" + (f"\n      gold:  {r['gold']}" if r["answerable"] else ""))
            print("      " + r["reply"][: args.show].replace("\n", "\n      "))
    return print_kb_report(kb.name, rows), rows


def load_questions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, help="../shared/data: the dev KB, the e-manual and the intents")
    parser.add_argument("--kb", type=Path, help="a knowledge-base folder to index (with --questions)")
    parser.add_argument("--questions", type=Path, help="questions as JSON lines (see the module docstring)")
    parser.add_argument("--limit", type=int, default=None, help="ask only the first N questions")
    parser.add_argument(
        "--store",
        type=Path,
        default=None,
        help="keep the indexed KB in this folder and reuse it next time (unchanged files are skipped)",
    )
    parser.add_argument("--tv", action="store_true", help="also the e-manual figures (tv-test, s10)")
    parser.add_argument("--routing", action="store_true", help="also the help-desk routing figures")
    parser.add_argument("--all", action="store_true", help="the dev KB, --tv and --routing")
    parser.add_argument("--verbose", action="store_true", help="print every question, what was cited and the reply")
    parser.add_argument("--show", type=int, default=400, help="characters of each reply shown with --verbose")
    parser.add_argument("--json", action="store_true", help="also print the figures as one last line of JSON")
    args = parser.parse_args()
    if not args.data and not (args.kb and args.questions):
        parser.error("give --data, or --kb and --questions")

    from app.adapters.embeddings import SentenceTransformerEmbedder
    from app.settings import Settings

    settings = Settings(_env_file=None)
    embedder = SentenceTransformerEmbedder()
    results: dict = {}
    if args.kb:
        kb, questions = args.kb, load_questions(args.questions)
    else:
        kb, questions = args.data / DEV_SET / "corpus", load_questions(args.data / DEV_SET / "questions.jsonl")
    questions = questions[: args.limit] if args.limit else questions
    results["kb"], _ = run_kb(kb, questions, settings, embedder, args)
    if (args.tv or args.all) and args.data:
        results["tv"] = run_tv(args.data, settings, embedder)
    if (args.routing or args.all) and args.data:
        try:
            from routing import routing_report  # bench/routing.py
        except ImportError:
            print("\n(routing: bench/routing.py is not there yet)")
        else:
            results["routing"] = routing_report(args.data)
    if args.json:
        print(json.dumps(results, default=str))
    return 0


def run_tv(data: Path, settings, embedder) -> dict:
    """tv-test ROUGE-L recall (mean, and share ≥ 0.5) and citation-correct; s10 abstention (bench/answers.py)."""
    import answers  # bench/answers.py
    from retrieval import build_index, load_split

    folder = data / answers.DATASET
    gold = answers.load_gold(folder)
    corpus, _, _ = load_split(folder, "tv-dev")
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        _, index = build_index(corpus, settings, embedder, tmp)
        deskmate = answers.Deskmate(support_context(index, embedder, settings))
        _, queries, _ = load_split(folder, "tv-test")
        scores, cited = [], []
        for qid, question in queries.items():
            if qid not in gold:
                continue
            state = deskmate.ask(question)
            score = answers.rouge_l(answers.answer_body(state.get("answer", "")), gold[qid]["answer"])
            scores.append(score["recall"])
            bearing = set(gold[qid].get("answer_bearing_section_ids") or [])
            if bearing:
                cited.append(answers.first_section(state) in bearing)
        s10 = answers.load_s10_questions(folder)
        abstained = sum(not deskmate.ask(q).get("sources") for q in s10.values())
    out = {
        "tv_test_questions": len(scores),
        "tv_test_rougeL_recall": mean(scores),
        "tv_test_rougeL_ge_0.5": mean(s >= 0.5 for s in scores),
        "tv_test_cite_correct": mean(cited),
        "s10_abstention": abstained / len(s10),
    }
    print(
        f"\n== e-manual: tv-test {len(scores)} questions: ROUGE-L recall {out['tv_test_rougeL_recall']:.3f}, "
        f"≥ 0.5 on {out['tv_test_rougeL_ge_0.5']:.3f}; cite-correct {out['tv_test_cite_correct']:.3f}; "
        f"s10 abstention {out['s10_abstention']:.3f} ({len(s10)} questions) =="
    )
    return out


if __name__ == "__main__":
    raise SystemExit(main())
