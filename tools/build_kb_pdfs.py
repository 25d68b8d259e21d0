"""Build the PDF articles of the bundled knowledge base (kb/*.pdf).

The sources are small Markdown-like files in tools/kb_pdf_src/*.md. Each one
becomes kb/<same-name>.pdf with real, extractable text:

* ``# Title``        -> 18 pt bold title (first line of the source)
* ``## Heading``     -> 14 pt bold section heading
* ``### Heading``    -> 12 pt bold sub-heading
* ``1. step``        -> numbered step with a hanging indent, printed as "1. step"
* ``- item``         -> bullet item, printed as "- item"
* other lines        -> 11 pt body text; consecutive lines form one wrapped paragraph

Sources must be plain ASCII (the PDF uses the built-in Helvetica font).
Inline markup is kept to a minimum: backticks and ``**`` are stripped.

Rebuild (from the repository root):

    pip install fpdf2 && python tools/build_kb_pdfs.py

Options: ``--src DIR`` and ``--out DIR`` override the default folders.
The output is reproducible: the creation date is fixed, so rebuilding an
unchanged source gives a byte-identical PDF.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import re
import sys
from pathlib import Path

from fpdf import FPDF

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SRC = ROOT / "tools" / "kb_pdf_src"
DEFAULT_OUT = ROOT / "kb"

FONT = "Helvetica"
TITLE_PT, H2_PT, H3_PT, BODY_PT = 18, 14, 12, 11
BODY_LINE_H = 5.6  # mm, line height for 11 pt text
FIXED_DATE = _dt.datetime(2025, 1, 1, tzinfo=_dt.UTC)

NUMBERED = re.compile(r"^(\d+)\.\s+(.*)$")
BULLET = re.compile(r"^[-*]\s+(.*)$")


def clean(text: str) -> str:
    """Strip the little inline Markdown we allow in sources."""
    return text.replace("**", "").replace("`", "")


def parse(source: str) -> list[tuple[str, str]]:
    """Turn a source file into a list of (kind, text) blocks."""
    blocks: list[tuple[str, str]] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            blocks.append(("p", " ".join(para)))
            para.clear()

    for raw in source.splitlines():
        line = raw.strip()
        if not line:
            flush()
            continue
        if line.startswith("### "):
            flush()
            blocks.append(("h3", line[4:].strip()))
        elif line.startswith("## "):
            flush()
            blocks.append(("h2", line[3:].strip()))
        elif line.startswith("# "):
            flush()
            blocks.append(("title", line[2:].strip()))
        elif m := NUMBERED.match(line):
            flush()
            blocks.append(("step:" + m.group(1), m.group(2)))
        elif m := BULLET.match(line):
            flush()
            blocks.append(("bullet", m.group(1)))
        else:
            para.append(line)
    flush()
    return [(kind, clean(text)) for kind, text in blocks]


class ArticlePDF(FPDF):
    def __init__(self) -> None:
        super().__init__(orientation="P", unit="mm", format="A4")
        self.set_margins(left=20, top=20, right=20)
        self.set_auto_page_break(auto=True, margin=20)
        self.set_creation_date(FIXED_DATE)

    def heading(self, text: str, size: int, before: float, after: float) -> None:
        # Keep a heading together with at least two lines of what follows.
        if self.get_y() + before + size * 0.5 + 2 * BODY_LINE_H > self.page_break_trigger:
            self.add_page()
        elif self.get_y() > self.t_margin:
            self.ln(before)
        self.set_font(FONT, "B", size)
        self.multi_cell(0, size * 0.5, text, align="L", new_x="LMARGIN", new_y="NEXT")
        self.ln(after)

    def paragraph(self, text: str) -> None:
        self.set_font(FONT, "", BODY_PT)
        self.multi_cell(0, BODY_LINE_H, text, align="L", new_x="LMARGIN", new_y="NEXT")
        self.ln(2.5)

    def list_item(self, marker: str, text: str) -> None:
        """Print 'marker text' with continuation lines aligned after the marker."""
        self.set_font(FONT, "", BODY_PT)
        indent = 5.0
        marker_w = max(self.get_string_width("00. "), self.get_string_width(marker + " "))
        if self.get_y() + BODY_LINE_H > self.page_break_trigger:
            self.add_page()
        self.set_x(self.l_margin + indent)
        # The trailing space is part of the text, so extractors see "1. step".
        self.cell(marker_w, BODY_LINE_H, marker + " ")
        self.multi_cell(0, BODY_LINE_H, text, align="L", new_x="LMARGIN", new_y="NEXT")
        self.ln(1.2)


def build(src: Path, out_dir: Path) -> Path:
    text = src.read_text(encoding="utf-8")
    try:
        text.encode("ascii")
    except UnicodeEncodeError as exc:
        bad = text[exc.start : exc.end]
        line_no = text.count("\n", 0, exc.start) + 1
        raise SystemExit(f"{src}:{line_no}: non-ASCII character {bad!r}; use plain ASCII") from None

    blocks = parse(text)
    if not blocks or blocks[0][0] != "title":
        raise SystemExit(f"{src}: the first line must be '# Title'")

    pdf = ArticlePDF()
    title = blocks[0][1]
    pdf.set_title(title)
    pdf.set_author("Brightwave IT Service Desk")
    pdf.set_subject("Brightwave IT help article")
    pdf.set_creator("tools/build_kb_pdfs.py")
    pdf.add_page()

    previous = ""
    for kind, body in blocks:
        if kind == "title":
            pdf.heading(body, TITLE_PT, before=0, after=4)
        elif kind == "h2":
            pdf.heading(body, H2_PT, before=4, after=2)
        elif kind == "h3":
            pdf.heading(body, H3_PT, before=2, after=1.5)
        elif kind.startswith("step:"):
            pdf.list_item(kind.split(":", 1)[1] + ".", body)
        elif kind == "bullet":
            pdf.list_item("-", body)
        else:
            if previous.startswith("step:") or previous == "bullet":
                pdf.ln(1.5)
            pdf.paragraph(body)
        previous = kind

    out = out_dir / (src.stem + ".pdf")
    pdf.output(str(out))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=DEFAULT_SRC, help="folder with *.md sources")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the PDFs")
    args = parser.parse_args(argv)

    sources = sorted(p for p in args.src.glob("*.md") if p.name.lower() != "readme.md")
    if not sources:
        print(f"no sources found in {args.src}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for src in sources:
        out = build(src, args.out)
        print(f"{src.relative_to(ROOT) if src.is_relative_to(ROOT) else src} -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
