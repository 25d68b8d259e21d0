"""`deskmate report`: the insights of a window as one self-contained HTML page, for an IT lead to forward.

The page holds everything it shows: the figures as JSON, the stylesheet, Chart.js and the script that draws
the admin page's Insights tab (app/ui/static/insights.js) — no request leaves it, so it opens offline, from
a mail attachment or a file share."""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "ui" / "static"
CHART_JS = "chart.umd.min.js"  # Chart.js 4.6.1, vendored (app/ui/vendor/README.md)
CHART_JS_VERSION = "4.6.1"
_SINCE = re.compile(r"^\s*(\d{1,3})\s*([dw])\s*$", re.I)


def window_since(since: str, today: date | None = None) -> tuple[date, date]:
    """`7d`, `30d`, `2w` → (first day, today), both included; ValueError otherwise."""
    match = _SINCE.match(since or "")
    if not match:
        raise ValueError(f"--since {since!r}: give a number of days or weeks, like 7d or 4w")
    days = int(match.group(1)) * (7 if match.group(2).lower() == "w" else 1)
    if days < 1:
        raise ValueError("--since must be at least 1d")
    today = today or datetime.now(UTC).date()
    return today - timedelta(days=days - 1), today


def _inline_script(text: str) -> str:
    # a script's text ends at the first "</script"; the vendored and our own code never close it early
    return text.replace("</script", "<\\/script")


def render_report(figures: dict) -> str:
    """The page: the figures' charts and tables, drawn by the same script as the admin tab."""
    window = figures["window"]
    title = f"deskmate insights {window['from']} – {window['to']}"
    data = json.dumps(figures, ensure_ascii=False).replace("</", "<\\/")
    css = (STATIC / "app.css").read_text(encoding="utf-8")
    chart = (STATIC / CHART_JS).read_text(encoding="utf-8")
    draw = (STATIC / "insights.js").read_text(encoding="utf-8")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{css}
body.report {{ padding: 24px; max-width: 1200px; margin: 0 auto; }}
</style>
</head>
<body class="admin-page report">
<h1>{html.escape(title)}</h1>
<p class="muted">Written by <code>deskmate report</code> at {html.escape(figures.get("generated_at", ""))}. What deskmate
answered without a ticket, what it handed to the service desk, and what the knowledge base is missing.</p>
<div id="insight-body"></div>
<script id="insight-data" type="application/json">{data}</script>
<script>{_inline_script(chart)}</script>
<script>{_inline_script(draw)}</script>
<script>
window.DeskmateInsights.render(document.getElementById("insight-body"),
  JSON.parse(document.getElementById("insight-data").textContent));
</script>
</body>
</html>
"""
