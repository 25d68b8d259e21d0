"""The insights of a window, as every edge shows them (GET /admin/insights, its CSV, the admin page's tab and
`deskmate report`): the SQL figures, the knowledge-gap clusters and the articles never cited."""

from __future__ import annotations

import csv
import io
import logging
from datetime import UTC, datetime

from app.insights import figures
from app.insights.figures import Window
from app.insights.gaps import MAX_QUESTIONS, article_draft, knowledge_gaps
from app.storage import Database
from core.ports import Embedder

log = logging.getLogger(__name__)


def insights(db: Database, embedder: Embedder, window: Window, documents: list[dict] | None = None) -> dict:
    """Every figure of the window, in one read transaction of the outcome table."""
    with db.connect() as conn:
        volume = figures.volume(conn, window)
        deflection = figures.deflection(conn, window)
        tickets = figures.tickets(conn, window)
        articles = figures.articles(conn, window, documents)
        questions = figures.gap_questions(conn, window, MAX_QUESTIONS)
    first, last = window.days
    gaps = knowledge_gaps(questions, embedder, first_day=first, last_day=last)
    for gap in gaps:
        gap["draft"] = article_draft(gap)
    return {
        "window": {
            "from": window.first.isoformat(),
            "to": window.last.isoformat(),
            "days": window.length,
            "collection": window.collection,
        },
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "volume": volume,
        "deflection": deflection,
        "tickets": tickets,
        "knowledge_gaps": gaps,
        "gap_questions_considered": len(questions),
        "articles": articles,
    }


def as_csv(figures_: dict) -> str:
    """The figures as one CSV table: section, key, sub-key, value — a row per number, for a spreadsheet."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["figure", "key", "detail", "value"])
    volume = figures_["volume"]
    for row in volume["by_day"]:
        writer.writerow(["turns_per_day", row["day"], row["channel"], row["turns"]])
    for row in volume["by_hour"]:
        writer.writerow(["turns_per_hour_utc", row["hour"], row["channel"], row["turns"]])
    for outcome, n in volume["by_outcome"].items():
        writer.writerow(["turns_by_outcome", outcome, "", n])
    for key, value in figures_["deflection"].items():
        writer.writerow(["deflection", key, "", "" if value is None else value])
    tickets = figures_["tickets"]
    for category, n in tickets["by_category"].items():
        writer.writerow(["tickets_by_category", category, "", n])
    for priority, n in tickets["by_priority"].items():
        writer.writerow(["tickets_by_priority", priority, "", n])
    for gap in figures_["knowledge_gaps"]:
        writer.writerow(
            ["knowledge_gap", gap["label"], f"{gap['askers']} people, {gap['trend']['direction']}", gap["size"]]
        )
    articles = figures_["articles"]
    for row in articles["most_cited"]:
        writer.writerow(["article_citations", row["title"], row["doc_id"], row["citations"]])
    for row in articles["votes_by_section"]:
        where = f"{row['title']} › {row['section']}" if row["section"] else row["title"]
        writer.writerow(["section_helpful", where, row["doc_id"], row["helpful"]])
        writer.writerow(["section_not_helpful", where, row["doc_id"], row["not_helpful"]])
    for row in articles["walkthroughs_ending_in_ticket"]:
        writer.writerow(["walkthroughs_ending_in_ticket", row["title"], row["doc_id"], row["ended_in_ticket"]])
    for row in articles.get("never_cited", []):
        writer.writerow(["never_cited", row["title"], row["doc_id"], 0])
    return out.getvalue()
