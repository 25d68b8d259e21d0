"""Document parsers: PDF (pypdf), HTML (BeautifulSoup), Markdown and plain text → structured blocks.

The type is decided by the bytes, not by trusting the extension: a `.pdf` that does not start
like a PDF, or a `.txt` full of binary, is refused with a message a person can act on.
"""

from __future__ import annotations

import io
import logging
import re
from collections import Counter
from pathlib import PurePosixPath

from graphs.errors import DocumentRejected
from graphs.records import Block, ParsedDocument

log = logging.getLogger(__name__)

SUPPORTED_EXTENSIONS = {".pdf": "pdf", ".html": "html", ".htm": "html", ".md": "markdown",
                        ".markdown": "markdown", ".txt": "text", ".text": "text"}
SUPPORTED_HUMAN = "PDF, HTML, Markdown (.md) or plain text (.txt)"
_HTML_SNIFF = re.compile(rb"<\s*(!doctype\s+html|html|head|body|h[1-6]|p|div|article|section|table|ul|ol)\b", re.I)


def _filename(name: str) -> str:
    return PurePosixPath(name).name or name


def decode_text(data: bytes, name: str) -> str:
    if b"\x00" in data[:8192]:
        raise DocumentRejected(f"{_filename(name)} looks like a binary file, not text. "
                               f"Upload {SUPPORTED_HUMAN}.", kind="unsupported_type")
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise DocumentRejected(f"{_filename(name)} is not valid UTF-8 text. Save it as UTF-8 and upload again.",
                           kind="unsupported_type")


def sniff_type(name: str, data: bytes) -> str:
    """The content type this upload really is, checked against its extension."""
    filename = _filename(name)
    ext = PurePosixPath(filename.lower()).suffix
    if ext not in SUPPORTED_EXTENSIONS:
        raise DocumentRejected(f"{filename}: files of type '{ext or 'without extension'}' are not supported. "
                               f"Upload {SUPPORTED_HUMAN}.", kind="unsupported_type")
    claimed = SUPPORTED_EXTENSIONS[ext]
    is_pdf = data[:1024].lstrip().startswith(b"%PDF-") or b"%PDF-" in data[:1024]
    if claimed == "pdf":
        if not is_pdf:
            raise DocumentRejected(f"{filename} is named .pdf but its content is not a PDF "
                                   "(it does not start with %PDF-).", kind="unsupported_type")
        return "pdf"
    if is_pdf:
        raise DocumentRejected(f"{filename} contains a PDF; rename it to .pdf and upload again.",
                               kind="unsupported_type")
    decode_text(data, name)  # raises for binary content posing as text
    if claimed == "html" and not _HTML_SNIFF.search(data[:65536]):
        raise DocumentRejected(f"{filename} is named .html but contains no HTML markup.", kind="unsupported_type")
    return claimed


# --- Markdown and plain text ----------------------------------------------------------------------
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ORDERED = re.compile(r"^(\s*)(\d+)[.)]\s+(.*)$")
_BULLET = re.compile(r"^(\s*)[-*+•]\s+(.*)$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
_UNDERLINE = re.compile(r"^\s*(=+|-+)\s*$")
_MD_INLINE = [(re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"), (re.compile(r"\[([^\]]+)\]\(([^)]+)\)"), r"\1 (\2)"),
              (re.compile(r"(\*\*|__)(.+?)\1"), r"\2"), (re.compile(r"`([^`]+)`"), r"\1")]


def _clean_inline(text: str) -> str:
    for pattern, repl in _MD_INLINE:
        text = pattern.sub(repl, text)
    return re.sub(r"\s+", " ", text).strip()


def _strip_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            return text[end + 4:].lstrip("\n")
    return text


def parse_markdown_lines(lines: list[str], *, underlined_headings: bool) -> list[Block]:
    blocks: list[Block] = []
    paragraph: list[str] = []
    in_code = False
    code: list[str] = []

    def flush_paragraph() -> None:
        if paragraph:
            blocks.append(Block("paragraph", _clean_inline(" ".join(paragraph))))
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if line.strip().startswith("```"):
            if in_code:
                blocks.append(Block("code", "\n".join(code)))
                code.clear()
            else:
                flush_paragraph()
            in_code = not in_code
            i += 1
            continue
        if in_code:
            code.append(line)
            i += 1
            continue
        nxt = lines[i + 1].rstrip() if i + 1 < len(lines) else ""
        if underlined_headings and line.strip() and _UNDERLINE.match(nxt) and not _BULLET.match(line):
            flush_paragraph()
            blocks.append(Block("heading", line.strip(), level=1 if nxt.strip().startswith("=") else 2))
            i += 2
            continue
        heading = _MD_HEADING.match(line)
        if heading:
            flush_paragraph()
            blocks.append(Block("heading", _clean_inline(heading.group(2)), level=len(heading.group(1))))
        elif (ordered := _ORDERED.match(line)):
            flush_paragraph()
            blocks.append(Block("list_item", _clean_inline(ordered.group(3)), level=len(ordered.group(1)) // 2,
                                ordered=True))
        elif (bullet := _BULLET.match(line)):
            flush_paragraph()
            blocks.append(Block("list_item", _clean_inline(bullet.group(2)), level=len(bullet.group(1)) // 2))
        elif line.strip().startswith("|"):
            flush_paragraph()
            if not _TABLE_RULE.match(line):
                cells = [_clean_inline(c) for c in line.strip().strip("|").split("|")]
                blocks.append(Block("table", " | ".join(cells)))
        elif not line.strip():
            flush_paragraph()
        elif line.startswith("  ") and blocks and blocks[-1].kind == "list_item" and not paragraph:
            last = blocks.pop()  # a list item's continuation line
            blocks.append(Block("list_item", f"{last.text} {_clean_inline(line)}", last.level, last.ordered))
        else:
            paragraph.append(line.strip())
        i += 1
    flush_paragraph()
    if in_code and code:
        blocks.append(Block("code", "\n".join(code)))
    return blocks


def _title_from(blocks: list[Block], name: str) -> str:
    for block in blocks:
        if block.kind == "heading" and block.level == 1:
            return block.text
    for block in blocks:
        if block.kind == "heading":
            return block.text
    stem = PurePosixPath(_filename(name)).stem
    return stem.replace("-", " ").replace("_", " ").strip().capitalize() or "Untitled"


def parse_markdown(name: str, data: bytes) -> ParsedDocument:
    text = _strip_front_matter(decode_text(data, name))
    blocks = parse_markdown_lines(text.splitlines(), underlined_headings=True)
    return ParsedDocument(title=_title_from(blocks, name), content_type="markdown", blocks=blocks)


def parse_text(name: str, data: bytes) -> ParsedDocument:
    blocks = parse_markdown_lines(decode_text(data, name).splitlines(), underlined_headings=True)
    # plain text has no '#' syntax; a '#' line is content (a comment, a channel name), not a heading
    blocks = [Block("paragraph", b.text) if b.kind == "heading" and b.level > 2 else b for b in blocks]
    return ParsedDocument(title=_title_from(blocks, name), content_type="text", blocks=blocks)


# --- HTML ---------------------------------------------------------------------------------------
_DROP_TAGS = ("script", "style", "noscript", "template", "iframe", "svg", "canvas", "nav", "footer",
              "form", "button", "object", "embed", "head")
_SPACED_TAGS = {"p", "div", "br", "li", "ul", "ol", "pre", "table", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5",
                "h6", "section", "article", "blockquote", "dt", "dd"}
_BLOCK_TAGS = {"p", "div", "section", "article", "main", "header", "aside", "blockquote", "figure",
               "figcaption", "dl", "dt", "dd", "details", "summary", "body", "html", "span", "center"}


def parse_html(name: str, data: bytes) -> ParsedDocument:
    from bs4 import BeautifulSoup, NavigableString, Tag

    soup = BeautifulSoup(decode_text(data, name), "html.parser")
    title_tag = soup.find("title")
    page_title = title_tag.get_text(" ", strip=True) if title_tag else ""
    for tag in soup(list(_DROP_TAGS)):
        tag.decompose()
    blocks: list[Block] = []

    def text_of(tag) -> str:
        """Text as a reader sees it: inline tags glued (no "Report phishing ."), block tags spaced."""
        parts: list[str] = []

        def collect(node) -> None:
            for child in node.children:
                if isinstance(child, NavigableString):
                    if child.__class__.__name__ not in ("Comment", "Doctype", "Declaration", "ProcessingInstruction"):
                        parts.append(str(child))
                elif isinstance(child, Tag):
                    spaced = child.name.lower() in _SPACED_TAGS
                    if spaced:
                        parts.append(" ")
                    collect(child)
                    if spaced:
                        parts.append(" ")

        collect(tag)
        return re.sub(r"\s+", " ", "".join(parts)).strip()

    def walk(node, list_depth: int = -1, ordered: bool = False) -> None:
        inline: list[str] = []

        def flush() -> None:
            text = re.sub(r"\s+", " ", "".join(inline)).strip()
            if text:
                blocks.append(Block("paragraph", text))
            inline.clear()

        for child in node.children:
            if isinstance(child, NavigableString):
                if child.__class__.__name__ in ("Comment", "Doctype", "Declaration", "ProcessingInstruction"):
                    continue
                inline.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name_ = child.name.lower()
            if re.fullmatch(r"h[1-6]", name_):
                flush()
                if (text := text_of(child)):
                    blocks.append(Block("heading", text, level=int(name_[1])))
            elif name_ in ("ul", "ol"):
                flush()
                walk(child, list_depth + 1, ordered=name_ == "ol")
            elif name_ == "li":
                flush()
                nested = child.find_all(["ul", "ol"], recursive=False)
                for sub in nested:
                    sub.extract()
                if (text := text_of(child)):
                    blocks.append(Block("list_item", text, level=max(0, list_depth), ordered=ordered))
                for sub in nested:
                    walk(sub, list_depth + 1, ordered=sub.name == "ol")
            elif name_ == "pre":
                flush()
                if (text := child.get_text().strip("\n")):
                    blocks.append(Block("code", text))
            elif name_ == "table":
                flush()
                for row in child.find_all("tr"):
                    cells = [text_of(c) for c in row.find_all(["th", "td"])]
                    if any(cells):
                        blocks.append(Block("table", " | ".join(cells)))
            elif name_ == "br":
                inline.append(" ")
            elif name_ in _BLOCK_TAGS:
                flush()
                walk(child, list_depth, ordered)
            else:  # inline element: a, strong, code, em …
                inline.append(text_of(child) if child.name.lower() in _SPACED_TAGS else child.get_text())
        flush()

    walk(soup.body or soup)
    title = page_title or _title_from(blocks, name)
    h1 = next((b for b in blocks if b.kind == "heading" and b.level == 1), None)
    if h1 is not None:
        title = h1.text  # the article's own title beats the page <title> ("… - Intranet")
    return ParsedDocument(title=title, content_type="html", blocks=blocks)


# --- PDF ----------------------------------------------------------------------------------------
def parse_pdf(name: str, data: bytes) -> ParsedDocument:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    filename = _filename(name)
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            try:
                reader.decrypt("")
            except Exception as exc:
                raise DocumentRejected(f"{filename} is password-protected; upload an unprotected copy.",
                                       kind="unparseable") from exc
        lines: list[tuple[str, float]] = []
        for page in reader.pages:
            lines.extend(_pdf_page_lines(page))
    except DocumentRejected:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError,
            ZeroDivisionError, OSError, NotImplementedError, AssertionError) as exc:
        raise DocumentRejected(f"{filename} could not be read as a PDF ({type(exc).__name__}: {exc}). "
                               "Re-export it from the original application and upload again.",
                               kind="unparseable") from exc
    blocks = _pdf_blocks(lines)
    meta_title = ""
    try:
        meta_title = (reader.metadata.title or "").strip() if reader.metadata else ""
    except Exception:  # broken info dictionaries are common and harmless
        meta_title = ""
    title = next((b.text for b in blocks if b.kind == "heading"), "") or meta_title or _title_from([], name)
    return ParsedDocument(title=title, content_type="pdf", blocks=blocks)


def _pdf_page_lines(page) -> list[tuple[str, float]]:
    """(text, font size) per visual line, from pypdf's text visitor."""
    fragments: list[tuple[float, str, float]] = []

    def visit(text, cm, tm, font_dict, font_size):
        if text and text.strip():
            y = tm[5] * cm[3] + cm[5] if cm else tm[5]
            size = abs(font_size * (tm[3] or 1) * (cm[3] if cm else 1)) or font_size
            fragments.append((round(y, 1), text, round(size, 1)))

    page.extract_text(visitor_text=visit)
    lines: list[tuple[str, float]] = []
    current_y: float | None = None
    parts: list[str] = []
    sizes: list[float] = []
    for y, text, size in fragments:
        if current_y is not None and abs(y - current_y) > 1.0 and parts:
            lines.append(("".join(parts).strip(), max(sizes)))
            parts, sizes = [], []
        current_y = y
        for piece in text.split("\n"):
            if parts and not piece:
                continue
            parts.append(piece)
        sizes.append(size)
    if parts:
        lines.append(("".join(parts).strip(), max(sizes)))
    return [(t, s) for t, s in lines if t]


def _pdf_blocks(lines: list[tuple[str, float]]) -> list[Block]:
    if not lines:
        return []
    body_size = Counter(round(s) for _, s in lines).most_common(1)[0][0]
    heading_sizes = sorted({round(s) for _, s in lines if round(s) >= body_size * 1.15}, reverse=True)
    levels = {size: i + 1 for i, size in enumerate(heading_sizes)}
    blocks: list[Block] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            blocks.append(Block("paragraph", " ".join(paragraph)))
            paragraph.clear()

    for text, size in lines:
        level = levels.get(round(size))
        if level and len(text) <= 120:
            flush()
            if blocks and blocks[-1].kind == "heading" and blocks[-1].level == level:
                blocks[-1] = Block("heading", f"{blocks[-1].text} {text}", level=level)  # wrapped heading
            else:
                blocks.append(Block("heading", text, level=level))
        elif (ordered := _ORDERED.match(text)):
            flush()
            blocks.append(Block("list_item", ordered.group(3).strip(), ordered=True))
        elif (bullet := _BULLET.match(text)):
            flush()
            blocks.append(Block("list_item", bullet.group(2).strip()))
        elif blocks and blocks[-1].kind == "list_item" and not paragraph and (
                not text[:1].isupper() or not blocks[-1].text.rstrip().endswith((".", "!", "?", ":", ")"))):
            last = blocks.pop()  # a wrapped step: the previous line did not end its sentence
            blocks.append(Block("list_item", f"{last.text} {text}", last.level, last.ordered))
        else:
            paragraph.append(text)
            if text.endswith((".", ":", "?", "!")) and len(text) < 60:
                flush()
    flush()
    return blocks


class FileParser:
    """Dispatches on the sniffed content type. Stateless; safe to share."""

    def parse(self, name: str, data: bytes) -> ParsedDocument:
        if not data:
            raise DocumentRejected(f"{_filename(name)} is empty.", kind="empty")
        kind = sniff_type(name, data)
        parser = {"pdf": parse_pdf, "html": parse_html, "markdown": parse_markdown, "text": parse_text}[kind]
        return parser(name, data)
