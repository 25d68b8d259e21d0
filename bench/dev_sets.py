"""Answer quality on both development knowledge bases, through the real app, beside the last landing's figures.

    python bench/dev_sets.py --data ../shared/data                   # both dev sets: targets, now vs last landing
    python bench/dev_sets.py --data ../shared/data --set docs -v     # one set, every question with its reply
    python bench/dev_sets.py --data ../shared/data --dump build/replies   # every reply as Markdown, for reading
    python bench/dev_sets.py --data ../shared/data --save            # record these figures as the landing's

The two sets are written in different styles: `it_kb_msdocs_dev` (Microsoft support articles, docs-platform
Markdown) and `it_kb_docs_dev` (Nextcloud's reStructuredText user manual and Zulip's Markdown help centre with
include and tab macros; its `corpus_includes/` are uploaded beside the pages, as a company would). Each set is
served by the real app on its embedded defaults (`create_app()`, a fresh data dir, the set as the bundled
knowledge-base folder, indexed at start-up exactly as `DESKMATE_KB_DIR` is), offline, with no LLM, and every
question is one new conversation through `POST /chat`, as an employee would ask it.

Figures per set (targets in brackets):
- article@1 [≥ .90]: the first cited source is one of the question's gold files (over answerable questions);
- section [≥ .80]: the reply answers from the gold section: the section it cites is the gold section or inside
  it, or the gold section's own steps are in the reply;
- abstention [≥ .90]: unanswerable questions that get no cited answer;
- procedure complete [≥ .95]: of the answered questions whose cited section holds a numbered procedure (two or
  more steps, as deskmate indexed it: `GET /documents/{id}/sections`), the share where every step is in the
  reply, or is reached by replying "next" to a walkthrough before it ends, with no ticket offered on the way;
- answering: answerable questions that get a cited answer; search@1: `GET /search` ranks a gold file first;
  chat=search: the first cited article is the article search ranks first (one retrieval for chat and search).

A step counts as present when 70 % of its words are in the text the employee was shown. Tune only on dev sets.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import app  # noqa: E402,F401  (offline defaults before any model library loads)

BASELINE = REPO / "bench" / "baselines" / "dev_sets.json"
TARGETS = {"article@1": 0.90, "section": 0.80, "abstention": 0.90, "procedure_complete": 0.95}
STEP_PRESENT = 0.7  # share of a step's words that must be in the text shown
GOLD_STEPS_PRESENT = 0.6  # share of the gold section's items that must be in the reply (section by content)
MAX_NEXT = 40  # "next" replies sent to one walkthrough at most
ADMIN_KEY = "bench-admin-key-" + "x" * 24

_TOKEN = re.compile(r"[a-z0-9]+")
_TAG = re.compile(r"<[^>]+>")
_NUMBERED = re.compile(r"^\s*(?:\d+[.)]|[a-z][.)]|#\.)\s+(\S.*)$")
_ITEM = re.compile(r"^\s*(?:\d+[.)]|[a-z][.)]|#\.|[-*+])\s+(\S.*)$")


@dataclass(frozen=True)
class DevSet:
    key: str
    folder: str
    gold_field: str
    includes: str | None  # a folder of include targets uploaded beside the pages, or None
    include_into: str = "include"  # where they go in the uploaded folder


SETS = {
    "msdocs": DevSet("msdocs", "it_kb_msdocs_dev", "gold_files", None),
    "docs": DevSet("docs", "it_kb_docs_dev", "gold", "corpus_includes"),
}


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def heading_key(text: str) -> str:
    """A heading compared without markup, case or punctuation."""
    text = _TAG.sub(" ", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    return " ".join(tokens(text))


def present(item: str, words: set[str]) -> bool:
    item_tokens = tokens(item)
    return bool(item_tokens) and sum(t in words for t in item_tokens) >= STEP_PRESENT * len(item_tokens)


# --- the gold section, read from the raw file (independently of deskmate's parsers) -------------------------
_RST_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+:._])\1{2,}\s*$")
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ZULIP_INCLUDE = re.compile(r"\{!([\w.\-/]+)!\}")


def expand_includes(text: str, includes: Path | None, depth: int = 0) -> str:
    if includes is None or depth > 6:
        return text

    def sub(match: re.Match) -> str:
        target = includes / Path(match.group(1)).name
        return expand_includes(target.read_text(encoding="utf-8"), includes, depth + 1) if target.is_file() else ""

    return _ZULIP_INCLUDE.sub(sub, text)


def headings(lines: list[str], rst: bool) -> list[tuple[int, int, str]]:
    """(line index of the body start, level, text) of every heading, in order."""
    found: list[tuple[int, int, str]] = []
    if rst:
        levels: list[str] = []
        i = 0
        while i < len(lines) - 1:
            over = _RST_ADORNMENT.match(lines[i])
            if over and i + 2 < len(lines) and _RST_ADORNMENT.match(lines[i + 2]) and lines[i + 1].strip():
                style, text, skip = "o" + over.group(1), lines[i + 1].strip(), 3
            elif lines[i].strip() and not lines[i].startswith(" ") and (under := _RST_ADORNMENT.match(lines[i + 1])):
                if len(lines[i + 1].strip()) < len(lines[i].strip()) * 0.6:
                    i += 1
                    continue
                style, text, skip = under.group(1), lines[i].strip(), 2
            else:
                i += 1
                continue
            if style not in levels:
                levels.append(style)
            found.append((i + skip, levels.index(style) + 1, text))
            i += skip
        return found
    fence = False
    for i, line in enumerate(lines):
        if line.strip().startswith(("```", "~~~")):
            fence = not fence
        match = None if fence else _MD_HEADING.match(line)
        if match:
            found.append((i + 1, len(match.group(1)), match.group(2)))
    return found


def gold_section(path: Path, heading: str, includes: Path | None) -> tuple[str, list[str]]:
    """(text, list items) of the section under `heading`, its subsections included."""
    text = expand_includes(path.read_text(encoding="utf-8", errors="replace"), includes)
    lines = text.splitlines()
    found = headings(lines, rst=path.suffix == ".rst")
    key = heading_key(heading)
    body: list[str] = []
    for n, (start, level, title) in enumerate(found):
        if heading_key(title) == key:
            end = len(lines)
            for later_start, later_level, _ in found[n + 1 :]:
                if later_level <= level:
                    end = later_start - 2
                    break
            body = lines[start:end]
            break
    items = [m.group(1).strip() for line in body if (m := _ITEM.match(line))]
    return "\n".join(body), [i for i in items if len(tokens(i)) >= 3]


# --- running the app ---------------------------------------------------------------------------------------
def stage(data: Path, dev: DevSet, into: Path) -> Path:
    """The folder a company would upload: the pages, and the include targets beside them."""
    kb = into / "kb"
    shutil.copytree(data / dev.folder / "corpus", kb)
    if dev.includes:
        shutil.copytree(data / dev.folder / dev.includes, kb / dev.include_into)
    return kb


class Session:
    def __init__(self, client) -> None:
        self.client = client

    def chat(self, message: str, session_id: str | None = None) -> dict:
        body = {"message": message} | ({"session_id": session_id} if session_id else {})
        response = self.client.post("/chat", json=body)
        response.raise_for_status()
        return response.json()

    def search(self, query: str) -> list[dict]:
        response = self.client.get(
            "/search", params={"q": query, "top_k": 10}, headers={"Authorization": f"Bearer {ADMIN_KEY}"}
        )
        response.raise_for_status()
        return response.json()["results"]

    def sections(self, doc_id: str) -> list[dict]:
        response = self.client.get(f"/documents/{doc_id}/sections")
        response.raise_for_status()
        return response.json()["sections"]


def numbered_steps(text: str) -> list[str]:
    """The numbered items of a section as deskmate indexed it, once each, in order."""
    seen: dict[str, None] = {}
    for line in text.splitlines():
        match = _NUMBERED.match(line)
        if match and len(tokens(match.group(1))) >= 2:
            seen.setdefault(match.group(1).strip(), None)
    return list(seen)


def walk(session: Session, first: dict) -> tuple[str, bool, int]:
    """The text shown over a walkthrough driven by "next" until it ends; (text, ticket offered on the way, turns)."""
    shown = [first["answer"]]
    reply, turns = first, 0
    while (reply.get("troubleshooting") or {}).get("status") == "in_progress" and turns < MAX_NEXT:
        reply = session.chat("next", first["session_id"])
        turns += 1
        shown.append(reply["answer"])
        if reply.get("ticket_offer") or reply.get("action") == "create_ticket":
            return "\n".join(shown), True, turns
    return "\n".join(shown), False, turns


def source_file(source: dict) -> str:
    return Path(source["source"]).name


def cited_text(sections: list[dict], source: dict) -> str:
    """The text of the section a source cites. An article may repeat a heading ("Known problems > Solution" once
    per problem): the cited chunk says which one — the section holding it, else the first of that name after it
    (a hit on a problem's own text cites the solution below it), else every section of that name."""
    named = [n for n, s in enumerate(sections) if s["section"] == source["section"]]
    at = next((n for n, s in enumerate(sections) if source.get("chunk_id") in s.get("chunk_ids", ())), None)
    if at is not None:
        after = [n for n in named if n >= at]
        if after:
            named = after[:1]
    return "\n".join(sections[n]["text"] for n in named)


def judge(session: Session, question: dict, dev: DevSet, corpus: Path, includes: Path | None) -> dict:
    started = time.perf_counter()
    reply = session.chat(question["question"])
    ms = (time.perf_counter() - started) * 1000
    sources = reply.get("sources") or []
    answered = bool(sources) and reply.get("action") in ("answer", "troubleshoot")
    row: dict = {
        "id": question["id"],
        "answerable": question["answerable"],
        "question": question["question"],
        "answered": answered,
        "action": reply.get("action"),
        "confidence": reply.get("confidence"),
        "question_type": reply.get("question_type"),
        "cited": f"{source_file(sources[0])} › {sources[0]['section']}" if sources else "",
        "reply": reply["answer"],
        "ms": ms,
        "words": len(reply["answer"].split("\nSources:")[0].split()),
    }
    hits = session.search(question["question"])
    ranked_docs = list(dict.fromkeys(source_file(h) for h in hits))
    row["search_first"] = ranked_docs[0] if ranked_docs else ""
    row["chat_is_search"] = answered and ranked_docs[:1] == [source_file(sources[0])]
    # the procedure the reply cites, as deskmate indexed it, and what the employee is shown of it
    shown, escalated, turns = walk(session, reply) if answered else (reply["answer"], False, 0)
    row.update(walkthrough_turns=turns, shown=shown if turns else "")
    steps: list[str] = []
    if answered and sources[0].get("doc_id"):
        steps = numbered_steps(cited_text(session.sections(sources[0]["doc_id"]), sources[0]))
    if len(steps) >= 2:
        words = set(tokens(shown))
        missing = [s for s in steps if not present(s, words)]
        row.update(procedure=True, procedure_complete=not missing and not escalated, steps=len(steps))
        row["missing_steps"] = missing[:3]
        row["escalated"] = escalated
    else:
        row["procedure"] = False
    if not question["answerable"]:
        return row
    gold = question[dev.gold_field]
    row["gold"] = f"{gold[0]} › {question['gold_section']}"
    row["useful_if"] = question.get("useful_if", "")
    row["search_rank"] = next((n for n, d in enumerate(ranked_docs, 1) if d in gold), 0)
    first = source_file(sources[0]) if answered else ""
    text, items = gold_section(corpus / gold[0], question["gold_section"], includes)
    key = heading_key(question["gold_section"])
    quoted = [heading_key(p) for p in sources[0]["section"].split(" > ")] if answered else []
    whole = answered and key == heading_key(sources[0]["title"])
    by_steps = bool(items) and sum(present(i, set(tokens(shown))) for i in items) >= GOLD_STEPS_PRESENT * len(items)
    row.update(
        article=first in gold,
        article_strict=first == gold[0],
        section=answered and first == gold[0] and (whole or key in quoted or by_steps),
    )
    return row


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else float("nan")


def summarise(rows: list[dict]) -> dict:
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    procedures = [r for r in answerable if r["answered"] and r.get("procedure")]
    return {
        "questions": len(rows),
        "article@1": mean(r["article"] for r in answerable),
        "section": mean(r["section"] for r in answerable),
        "abstention": mean(not r["answered"] for r in unanswerable),
        "procedure_complete": mean(r["procedure_complete"] for r in procedures),
        "procedures": len(procedures),
        "answering": mean(r["answered"] for r in answerable),
        "article@1_strict": mean(r["article_strict"] for r in answerable),
        "search@1": mean(r["search_rank"] == 1 for r in answerable),
        "chat=search": mean(r["chat_is_search"] for r in answerable if r["answered"]),
        "words_p50": statistics.median([r["words"] for r in rows if r["answered"]] or [0]),
        "ms_p50": round(statistics.median(r["ms"] for r in rows), 1),
    }


def run_set(data: Path, dev: DevSet, args) -> tuple[dict, list[dict]]:
    from fastapi.testclient import TestClient

    from app.main import create_app

    questions = [json.loads(line) for line in (data / dev.folder / "questions.jsonl").read_text().splitlines() if line]
    if args.ids:
        wanted = {i.strip() for i in args.ids.split(",")}
        questions = [q for q in questions if q["id"] in wanted]
    if args.limit:
        questions = questions[: args.limit]
    corpus = data / dev.folder / "corpus"
    includes = data / dev.folder / dev.includes if dev.includes else None
    with tempfile.TemporaryDirectory(prefix=f"devset-{dev.key}-") as tmp:
        kb = stage(data, dev, Path(tmp))
        environment = {
            "DESKMATE_DATA_DIR": str(Path(tmp) / "data"),
            "DESKMATE_KB_DIR": str(kb),
            "DESKMATE_ADMIN_KEY": ADMIN_KEY,
            "DESKMATE_LOG_LEVEL": "WARNING",
        }
        saved = {name: os.environ.get(name) for name in environment}
        os.environ.update(environment)
        try:
            started = time.perf_counter()
            with TestClient(create_app(), base_url="http://localhost") as client:
                indexed = time.perf_counter() - started
                calibration = probe_report(client.app.state.resources.retrieval_context)
                session = Session(client)
                rows = [judge(session, q, dev, corpus, includes) for q in questions]
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    print(f"{dev.folder}: {len(questions)} questions, start-up with indexing {indexed:.0f} s", file=sys.stderr)
    return summarise(rows) | calibration, rows


def probe_report(ctx) -> dict:
    """The collection's calibration (nodes/support/calibration.py): its unanswered probes and the threshold."""
    from nodes.support.calibration import NULL_QUANTILE, probe_scores, quantile

    if ctx.confidence_model is None:
        return {}
    scores = probe_scores(ctx)
    quantiles = {q: round(quantile(scores, q), 3) for q in (0.5, 0.7, NULL_QUANTILE, 0.9)}
    print(f"  probes {len(scores)}: answerable quantiles {quantiles}", file=sys.stderr)
    return {"null_quantile": quantile(scores, NULL_QUANTILE), "threshold": ctx.confidence_threshold()}


def show_rows(rows: list[dict], width: int) -> None:
    for r in rows:
        if r["answerable"]:
            mark = "ok " if r["section"] else "art" if r["article"] else "ans" if r["answered"] else "-- "
        else:
            mark = "abs" if not r["answered"] else "ANS"
        proc = ""
        if r.get("procedure"):
            proc = " proc=" + ("complete" if r["procedure_complete"] else f"CUT({len(r['missing_steps'])}+ missing)")
        print(
            f"\n[{mark}] {r['id']} conf={r['confidence']} action={r['action']} type={r.get('question_type')}{proc} search#={r.get('search_rank')}"
        )
        print(f"      q: {r['question']}")
        print(f"      cited: {r['cited'] or '(none)'}" + (f"\n      gold:  {r['gold']}" if r["answerable"] else ""))
        print("      " + r["reply"][:width].replace("\n", "\n      "))


def dump(rows: list[dict], path: Path) -> None:
    """Every question with what the employee was shown, for the reading check."""
    lines = []
    for r in rows:
        lines += [f"## {r['id']} — {r['question']}", ""]
        if r["answerable"]:
            lines += [f"- gold: {r['gold']}", f"- useful if: {r['useful_if']}"]
        lines += [
            f"- cited: {r['cited'] or '(none)'}; action {r['action']} ({r.get('question_type')}); confidence {r['confidence']}",
            "",
        ]
        lines += ["```text", r["reply"], "```", ""]
        if r.get("shown"):
            lines += ['After replying "next" until the walkthrough ended:', "", "```text", r["shown"], "```", ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def reading_sample(rows: list[dict], n: int, seed: int) -> list[str]:
    ids = sorted(r["id"] for r in rows if r["answerable"])
    return sorted(random.Random(seed).sample(ids, min(n, len(ids))))


def fmt(value) -> str:
    if value is None or value != value:
        return "    -"
    return f"{value:5.3f}" if isinstance(value, float) else f"{value:>5}"


def print_table(results: dict, baseline: dict) -> None:
    names = list(TARGETS) + ["procedures", "answering", "article@1_strict", "search@1", "chat=search"]
    names += ["threshold", "null_quantile"]
    for key, figures in results.items():
        before = baseline.get("sets", {}).get(key, {})
        print(f"\n== {SETS[key].folder} ({figures['questions']} questions) ==")
        print(f"{'figure':<20} {'now':>6} {'landed':>7} {'target':>7}")
        for name in names:
            target = TARGETS.get(name)
            verdict = "" if target is None else ("  met" if figures.get(name, 0) >= target else "  MISSED")
            print(
                f"{name:<20} {fmt(figures.get(name)):>6} {fmt(before.get(name)):>7} "
                f"{(f'≥{target:.2f}' if target else ''):>7}{verdict}"
            )
    if baseline:
        print(f"\n(landed: {baseline.get('commit', '?')[:10]} of {baseline.get('date', '?')})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="../shared/data")
    parser.add_argument("--set", choices=[*SETS, "both"], default="both")
    parser.add_argument("--limit", type=int, help="ask only the first N questions of each set")
    parser.add_argument("--ids", help="ask only these questions (comma-separated ids, e.g. d07,d32)")
    parser.add_argument("-v", "--verbose", action="store_true", help="every question, what was cited and the reply")
    parser.add_argument("--show", type=int, default=500, help="characters of each reply shown with --verbose")
    parser.add_argument("--dump", type=Path, help="write every reply to DIR/<set>.md for reading")
    parser.add_argument("--reading", type=int, default=15, help="size of the reading-check sample per set")
    parser.add_argument("--save", action="store_true", help=f"record these figures as the landing's ({BASELINE})")
    parser.add_argument("--json", action="store_true", help="print the figures as one last line of JSON")
    args = parser.parse_args()

    keys = list(SETS) if args.set == "both" else [args.set]
    results, all_rows = {}, {}
    for key in keys:
        results[key], all_rows[key] = run_set(args.data, SETS[key], args)
        if args.verbose:
            show_rows(all_rows[key], args.show)
        if args.dump:
            args.dump.mkdir(parents=True, exist_ok=True)
            dump(all_rows[key], args.dump / f"{key}.md")
            sample = reading_sample(all_rows[key], args.reading, seed=30)
            (args.dump / f"{key}-reading-sample.txt").write_text("\n".join(sample) + "\n")
    baseline = json.loads(BASELINE.read_text()) if BASELINE.is_file() else {}
    print_table(results, baseline)
    if args.save:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        merged = baseline.get("sets", {}) | results
        BASELINE.parent.mkdir(parents=True, exist_ok=True)
        BASELINE.write_text(
            json.dumps({"commit": commit, "date": time.strftime("%Y-%m-%d"), "sets": merged}, indent=1) + "\n"
        )
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
