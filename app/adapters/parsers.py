"""Document parsers: PDF (pypdf), HTML (BeautifulSoup), Markdown and plain text → structured blocks.

The type is decided by the bytes, not by trusting the extension: a `.pdf` that does not start
like a PDF, or a `.txt` full of binary, is refused with a message a person can act on.

Everything here is bounded (pages, extracted text, decompressed stream size) and nothing executable
survives into block text: scripts, event-handler attributes and `javascript:` URLs are dropped, so a
later UI that renders chunk text cannot be made to run an uploader's code. The app runs these parsers
in a resource-limited worker process (app/adapters/parse_sandbox.py); the limits here are the first
line of defence, the worker's time and memory limits the second.
"""

from __future__ import annotations

import io
import logging
import re
from collections import Counter
from pathlib import PurePosixPath

from app.adapters.boilerplate import is_boilerplate, remove_phrases
from app.adapters.html_reader import DROP_TAGS, html_blocks
from app.adapters.markdown_reader import markdown_blocks
from app.adapters.markup import clean_inline, normalise_source, split_alert
from app.adapters.office_reader import OFFICE_EXTENSIONS, ZIP_MAGIC, parse_office
from core.errors import DocumentRejected
from core.records import Block, BlockKind, ContentType, ParsedDocument
from core.text import CONTROL, INVISIBLE

log = logging.getLogger(__name__)

SUPPORTED_EXTENSIONS: dict[str, ContentType] = {
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".txt": "text",
    ".text": "text",
    ".rst": "rst",
    ".rest": "rst",
    **OFFICE_EXTENSIONS,
}
SUPPORTED_HUMAN = (
    "PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), HTML, Markdown (.md, .mdx), "
    "reStructuredText (.rst) or plain text (.txt)"
)
MAX_PDF_PAGES = 2000
MAX_TEXT_CHARS = 5_000_000  # ~2,500 pages of prose; more is not one help-desk article
MAX_STREAM_BYTES = 32 * 1024 * 1024  # one PDF stream, once decompressed
_HTML_SNIFF = re.compile(rb"<\s*(!doctype\s+html|html|head|body|h[1-6]|p|div|article|section|table|ul|ol)\b", re.I)


def _filename(name: str) -> str:
    return PurePosixPath(name).name or name


_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def decode_text(data: bytes, name: str) -> str:
    for bom, encoding in _BOMS:  # what Windows Notepad saves as "Unicode": UTF-16 with a byte-order mark
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(encoding)
            except UnicodeDecodeError:
                raise DocumentRejected(
                    f"{_filename(name)} starts like {encoding.upper()} text but is not valid "
                    f"{encoding.upper()}. Save it as UTF-8 and upload again.",
                    kind="unsupported_type",
                ) from None
            if "\x00" in text:
                break  # a binary file that happens to start with those bytes
            return text
    if b"\x00" in data[:8192]:
        raise DocumentRejected(
            f"{_filename(name)} looks like a binary file, not text. Upload {SUPPORTED_HUMAN}.", kind="unsupported_type"
        )
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise DocumentRejected(
        f"{_filename(name)} is not valid UTF-8 text. Save it as UTF-8 and upload again.", kind="unsupported_type"
    )


# AsciiDoc is refused on purpose: the Python AsciiDoc processor on PyPI (asciidoc-py) runs shell commands a
# document asks for ({sys:…}, sys::[], filters) unless in safe mode, and its safe mode stops on its own
# backends; Asciidoctor is Ruby. Converting to HTML or Markdown first keeps that out of the service.
ASCIIDOC_EXTENSIONS = (".adoc", ".asciidoc", ".asc")
ASCIIDOC_REFUSAL = (
    "{filename}: AsciiDoc is not read by deskmate yet. Convert it first — `asciidoctor {filename}` "
    "(HTML) or `asciidoctor -b docbook {filename} -o - | pandoc -f docbook -t gfm` (Markdown) — "
    "and upload the result."
)


def sniff_type(name: str, data: bytes) -> ContentType:
    """The content type this upload really is, checked against its extension."""
    filename = _filename(name)
    ext = PurePosixPath(filename.lower()).suffix
    if ext in ASCIIDOC_EXTENSIONS:
        raise DocumentRejected(ASCIIDOC_REFUSAL.format(filename=filename), kind="unsupported_type")
    if ext not in SUPPORTED_EXTENSIONS:
        raise DocumentRejected(
            f"{filename}: files of type '{ext or 'without extension'}' are not supported. Upload {SUPPORTED_HUMAN}.",
            kind="unsupported_type",
        )
    claimed = SUPPORTED_EXTENSIONS[ext]
    if claimed in OFFICE_EXTENSIONS.values():
        return claimed  # the package itself is checked (type, macros, bombs) before any library opens it
    if data.startswith(ZIP_MAGIC):
        raise DocumentRejected(
            f"{filename} is a ZIP package (an Office file or an archive), not {claimed} text. "
            f"Upload {SUPPORTED_HUMAN}; archives are not unpacked.",
            kind="unsupported_type",
        )
    is_pdf = data[:1024].lstrip().startswith(b"%PDF-") or b"%PDF-" in data[:1024]
    if claimed == "pdf":
        if not is_pdf:
            raise DocumentRejected(
                f"{filename} is named .pdf but its content is not a PDF (it does not start with %PDF-).",
                kind="unsupported_type",
            )
        return "pdf"
    if is_pdf:
        raise DocumentRejected(
            f"{filename} contains a PDF; rename it to .pdf and upload again.", kind="unsupported_type"
        )
    text = decode_text(data, name)  # raises for binary content posing as text
    if claimed == "html" and not _HTML_SNIFF.search(text[:65536].encode("utf-8", "replace")):
        raise DocumentRejected(f"{filename} is named .html but contains no HTML markup.", kind="unsupported_type")
    return claimed


# --- nothing executable in block text -----------------------------------------------------------
# Markup can reach block text through HTML entities (&lt;script&gt;), raw HTML in Markdown, or plain
# text and PDFs that contain it. Harmless angle brackets stay (`<username>`, `<BROADCAST,UP>`); what
# goes: elements that run or load something, any tag carrying attributes (event handlers, hrefs),
# comments, and script-scheme URLs.
_RUNNABLE = (
    "script|style|iframe|frame|frameset|object|embed|applet|svg|math|template|noscript|noembed|noframes|"
    "xmp|plaintext|textarea|base|meta|form|portal|marquee|bgsound|isindex|param"
)
_LOADERS = "img|image|video|audio|source|track|input|link|a|area|body|button|select|option|details"
_WITH_CONTENT = (
    "script",
    "style",
    "iframe",
    "template",
    "svg",
    "math",
    "object",
    "textarea",
    "xmp",
    "noembed",
    "noframes",
    "noscript",
    "applet",
    "select",
)
# every pattern below runs in time linear in the text (bounded or non-overlapping repeats): hostile
# input must not turn the sanitiser itself into the slow part
_OPENER = re.compile(rf"<\s*({'|'.join(_WITH_CONTENT)})\b[^>]{{0,1024}}>", re.I)
_RUNNABLE_TAG = re.compile(rf"<\s*/?\s*(?:{_RUNNABLE})\b[^<>]*>", re.I)
_TAG_WITH_ATTRIBUTES = re.compile(r"<\s*/?\s*[a-zA-Z][\w:.-]*\s[^<>=]*=[^<>]*(?:>|$)")
# what is left of a runnable element's tag (unclosed, or '<' inside an attribute value) loses its '<';
# so does a loader's opener never closed in this text ("<img src=x onerror=…" at its end)
_RUNNABLE_LEFTOVER = re.compile(rf"<(?=\s*/?\s*(?:{_RUNNABLE})\b)", re.I)
_DANGLING_OPENER = re.compile(rf"<(?=\s*/?\s*(?:{_LOADERS})\b[^<>]*$)", re.I)
_COMMENT = re.compile(r"<!--.*?(?:-->|$)|<!\[CDATA\[.*?(?:\]\]>|$)", re.S)
_SCRIPT_URL = re.compile(
    r"\b(?:javascript|vbscript|livescript|mocha)\s*:(?=\S)[^\s<>\"'\]]*"
    r"|\bdata\s*:\s*(?:text/html|application/|image/svg)[^\s<>\"')\]]*",
    re.I,
)


def remove_runnable_elements(text: str) -> str:
    """Drop <script>…</script> and its kin with their content; linear in the text's length."""
    if "<" not in text:
        return text
    out: list[str] = []
    position = 0
    unclosed: set[str] = set()  # element names with no closing tag after some point: never search again
    for opener in _OPENER.finditer(text):
        if opener.start() < position:
            continue
        element = opener.group(1).lower()
        out.append(text[position : opener.start()])
        closer = None if element in unclosed else re.compile(rf"<\s*/\s*{element}\s*>", re.I).search(text, opener.end())
        if closer is None:
            unclosed.add(element)
            position = opener.end()  # drop the opener only; what follows is inert text
        else:
            position = closer.end()
    out.append(text[position:])
    return "".join(out)


def strip_executable(text: str) -> str:
    """Text with control characters, runnable markup and script URLs removed."""
    text = INVISIBLE.sub("", CONTROL.sub("", text))
    if "<" not in text and ":" not in text:
        return text
    for _ in range(5):  # nested tricks ("<scr<script>ipt>") need another pass after a removal
        cleaned = remove_runnable_elements(text)
        cleaned = _COMMENT.sub("", cleaned)
        cleaned = _RUNNABLE_TAG.sub("", cleaned)
        cleaned = _TAG_WITH_ATTRIBUTES.sub("", cleaned)
        cleaned = _RUNNABLE_LEFTOVER.sub("", cleaned)
        cleaned = _DANGLING_OPENER.sub("", cleaned)
        cleaned = _SCRIPT_URL.sub("", cleaned)
        if cleaned == text:
            return text
        text = cleaned
    return text.replace("<", "").replace(">", "")  # still changing after 5 passes: hostile, flatten it


MAX_LIST_LEVEL = 8


def sanitise_document(document: ParsedDocument) -> ParsedDocument:
    blocks = []
    for block in document.blocks:
        text = strip_executable(block.text)
        if block.kind != "code":
            text = re.sub(r"[ \t]{2,}", " ", text).strip()
        if block.kind in ("paragraph", "list_item"):  # a page's furniture is not its content
            text = "" if is_boilerplate(text) else remove_phrases(text)
        if text.strip():
            # a bullet indented by 200 spaces is still a bullet: nesting beyond MAX_LIST_LEVEL reads as that level
            blocks.append(Block(block.kind, text, min(block.level, MAX_LIST_LEVEL), block.ordered, block.in_list))
    title = re.sub(r"\s+", " ", strip_executable(document.title)).strip()[:300] or "Untitled"
    return ParsedDocument(title=title, content_type=document.content_type, blocks=blocks)


def render_plain_text(document: ParsedDocument) -> str:
    """The document as readable plain text (headings as '#', steps numbered): safe to show anywhere.

    What belongs to a step (its command, a note, a table) is indented under it, and the numbering goes on
    after it."""
    lines: list[str] = []
    counters: dict[int, int] = {}
    columns: dict[int, int] = {}  # list depth → where that item's text starts
    for block in document.blocks:
        if block.kind == "list_item":
            for deeper in [lvl for lvl in counters if lvl > block.level]:
                del counters[deeper]
            if block.ordered:
                counters[block.level] = counters.get(block.level, 0) + 1
            else:
                counters.pop(block.level, None)
            marker = f"{counters[block.level]}." if block.ordered else "-"
            indent = "   " * block.level
            columns[block.level] = len(indent) + len(marker) + 1
            lines.append(f"{indent}{marker} {block.text}")
            continue
        if block.in_list:
            for deeper in [lvl for lvl in counters if lvl > block.level]:
                del counters[deeper]
            pad = " " * columns.get(block.level, 3 * (block.level + 1))
            if block.kind == "code":
                lines += ["", *(f"{pad}    {line}" if line.strip() else "" for line in block.text.splitlines()), ""]
            else:
                lines += ["", f"{pad}{block.text}", ""] if block.kind == "paragraph" else [f"{pad}{block.text}"]
            continue
        counters.clear()
        columns.clear()
        if block.kind == "heading":
            lines += ["", f"{'#' * max(1, block.level)} {block.text}", ""]
        elif block.kind == "code":
            lines += ["", *("    " + line for line in block.text.splitlines()), ""]
        elif block.kind == "table":
            lines.append(block.text)
        else:
            lines += ["", block.text, ""]
    text = "\n".join(line.rstrip() for line in lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


# --- Markdown and plain text ----------------------------------------------------------------------
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ORDERED = re.compile(r"^(\s*)(\d+)[.)]\s+(.*)$")
_BULLET = re.compile(r"^(\s*)[-*+•]\s+(.*)$")
_TABLE_RULE = re.compile(r"^\s*(?:\|\s*)?:?-{3,}")  # (one repeat per run of spaces: linear)
_UNDERLINE = re.compile(r"^\s*(=+|-+)\s*$")
_QUOTE_MARKERS = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)+")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def parse_text_lines(lines: list[str], *, underlined_headings: bool) -> list[Block]:
    """Blocks of plain text written with Markdown habits (headings, numbered steps, fences, tables).

    A line indented under a list item after a blank line, a fenced block or a table indented under it
    stay with that item (`in_list`); quote markers ('> ') are dropped and alerts labelled."""
    blocks: list[Block] = []
    paragraph: list[str] = []
    paragraph_item: list[int | None] = [None]  # the list depth the open paragraph belongs to
    item_level: int | None = None  # the last list item's depth while indented lines may still belong to it
    pending_label: list[str | None] = [None]
    fence: tuple[str, int, int | None] | None = None  # (marker, indent, list depth) of an open fenced block
    code: list[str] = []
    after_blank = False

    def add(kind: BlockKind, text: str, level: int = 0, ordered: bool = False, under: int | None = None) -> None:
        if not text.strip():
            return
        if pending_label[0]:
            label, pending_label[0] = pending_label[0], None
            if kind == "paragraph":
                text = f"{label}: {text}"
            else:
                add("paragraph", f"{label}:", under=under)
        if under is not None and kind != "list_item":
            blocks.append(Block(kind, text, level=under, in_list=True))
        else:
            blocks.append(Block(kind, text, level, ordered))

    def flush_paragraph() -> None:
        if not paragraph:
            return
        raw, under = "\n".join(paragraph), paragraph_item[0]
        paragraph.clear()
        alert = split_alert(raw) if raw.startswith("[!") else None
        if alert is None:
            add("paragraph", clean_inline(raw), under=under)
        elif alert.title:
            add("paragraph", f"{alert.label}: {alert.title}", under=under)
            add("paragraph", clean_inline(alert.body), under=under)
        elif clean_inline(alert.body):
            add("paragraph", f"{alert.label}: {clean_inline(alert.body)}", under=under)
        else:
            pending_label[0] = alert.label

    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if fence is None and line.lstrip().startswith(">"):
            line = _QUOTE_MARKERS.sub("", line)
        if fence is not None:
            marker, indent, under = fence
            if line.strip().startswith(marker) and set(line.strip()) == {marker[0]}:
                add("code", "\n".join(c[min(indent, _indent(c)) :] for c in code).strip("\n"), under=under)
                code.clear()
                fence = None
            else:
                code.append(line)
            i += 1
            continue
        if opened := _FENCE.match(line):
            flush_paragraph()
            indent = len(opened.group(1))
            fence = (opened.group(2), indent, item_level if indent >= 2 and item_level is not None else None)
            i += 1
            continue
        nxt = lines[i + 1].rstrip() if i + 1 < len(lines) else ""
        indented = _indent(line) >= 2 and item_level is not None
        if underlined_headings and line.strip() and _UNDERLINE.match(nxt) and not _BULLET.match(line) and not paragraph:
            add("heading", clean_inline(line), level=1 if nxt.strip().startswith("=") else 2)
            item_level = None
            i += 2
            continue
        heading = _MD_HEADING.match(line)
        if heading:
            flush_paragraph()
            add("heading", clean_inline(heading.group(2)), level=len(heading.group(1)))
            item_level = None
        elif ordered := _ORDERED.match(line):
            flush_paragraph()
            item_level = len(ordered.group(1)) // 2
            add("list_item", clean_inline(ordered.group(3)), level=item_level, ordered=True)
        elif bullet := _BULLET.match(line):
            flush_paragraph()
            item_level = len(bullet.group(1)) // 2
            add("list_item", clean_inline(bullet.group(2)), level=item_level)
        elif line.strip().startswith("|"):
            flush_paragraph()
            if not indented:
                item_level = None
            if not _TABLE_RULE.match(line):
                cells = [clean_inline(c) for c in line.strip().strip("|").split("|")]
                add("table", " | ".join(cells), under=item_level if indented else None)
        elif not line.strip():
            flush_paragraph()
            after_blank = True
            i += 1
            continue
        elif indented and not after_blank and not paragraph and blocks and blocks[-1].kind == "list_item":
            last = blocks.pop()  # a list item's continuation line
            blocks.append(Block("list_item", f"{last.text} {clean_inline(line)}", last.level, last.ordered))
        else:
            if not paragraph:
                paragraph_item[0] = item_level if indented else None
            if not indented:
                item_level = None
            paragraph.append(line.strip())
        after_blank = False
        i += 1
    flush_paragraph()
    if fence is not None and code:
        add("code", "\n".join(code), under=fence[2])
    return blocks


def _title_from(blocks: list[Block], name: str, front_matter_title: str = "") -> str:
    """The document's H1; else its front matter's title; else its first heading; else its file name."""
    for block in blocks:
        if block.kind == "heading" and block.level == 1:
            return block.text
    if front_matter_title:
        return front_matter_title
    for block in blocks:
        if block.kind == "heading":
            return block.text
    stem = PurePosixPath(_filename(name)).stem
    return stem.replace("-", " ").replace("_", " ").strip().capitalize() or "Untitled"


# CommonMark's block parser is pure Python (about 50k lines a second on a busy 2-core machine): a file longer
# than this is read line by line instead, which is less exact about what sits inside a list item but stays
# well inside the parse time limit
MAX_STRUCTURED_LINES = 20_000


def parse_markdown(name: str, data: bytes) -> ParsedDocument:
    text, front_matter_title = normalise_source(remove_runnable_elements(decode_text(data, name)))
    if text.count("\n") > MAX_STRUCTURED_LINES:
        log.info("%s: %d lines, read line by line", _filename(name), text.count("\n"))
        blocks = parse_text_lines(text.splitlines(), underlined_headings=True)
    else:
        blocks = markdown_blocks(text)
    return ParsedDocument(title=_title_from(blocks, name, front_matter_title), content_type="markdown", blocks=blocks)


def parse_text(name: str, data: bytes) -> ParsedDocument:
    text, front_matter_title = normalise_source(remove_runnable_elements(decode_text(data, name)))
    blocks = parse_text_lines(text.splitlines(), underlined_headings=True)
    # plain text has no '#' syntax; a '#' line is content (a comment, a channel name), not a heading
    blocks = [Block("paragraph", b.text) if b.kind == "heading" and b.level > 2 else b for b in blocks]
    return ParsedDocument(title=_title_from(blocks, name, front_matter_title), content_type="text", blocks=blocks)


# --- HTML ---------------------------------------------------------------------------------------
def parse_html(name: str, data: bytes) -> ParsedDocument:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(decode_text(data, name), "html.parser")
    title_tag = soup.find("title")
    page_title = title_tag.get_text(" ", strip=True) if title_tag else ""
    for tag in soup(list(DROP_TAGS)):
        tag.decompose()
    blocks = html_blocks(soup.body or soup)
    title = page_title or _title_from(blocks, name)
    h1 = next((b for b in blocks if b.kind == "heading" and b.level == 1), None)
    if h1 is not None:
        title = h1.text  # the article's own title beats the page <title> ("… - Intranet")
    return ParsedDocument(title=title, content_type="html", blocks=blocks)


# --- reStructuredText ---------------------------------------------------------------------------
def parse_rst(name: str, data: bytes) -> ParsedDocument:
    """reStructuredText read by docutils (includes and raw blocks disabled), then read as HTML."""
    from bs4 import BeautifulSoup

    from app.adapters.rst_reader import rst_to_html

    soup = BeautifulSoup(rst_to_html(decode_text(data, name)), "html.parser")
    for tag in soup(list(DROP_TAGS)):
        tag.decompose()
    blocks = html_blocks(soup.body or soup)
    return ParsedDocument(title=_title_from(blocks, name), content_type="rst", blocks=blocks)


# --- PDF ----------------------------------------------------------------------------------------
def _pypdf_limits(max_stream_bytes: int) -> dict:
    """pypdf's own decompression and structure limits, tightened for untrusted uploads."""
    return dict(
        maximum_declared_stream_length=max_stream_bytes,
        zlib_maximum_output_length=max_stream_bytes,
        lzw_maximum_output_length=max_stream_bytes,
        run_length_maximum_output_length=max_stream_bytes,
        brotli_maximum_output_length=max_stream_bytes,
        array_based_stream_maximum_output_length=max_stream_bytes,
        jbig2_maximum_output_length=max_stream_bytes,
        image_maximum_buffer_size=max_stream_bytes,
        zlib_maximum_recovery_input_length=1_000_000,  # byte-by-byte recovery of broken deflate data is slow
        jbig2dec_binary=None,  # never start an external program because of an upload
    )


def parse_pdf(
    name: str,
    data: bytes,
    *,
    max_pages: int = MAX_PDF_PAGES,
    max_text_chars: int = MAX_TEXT_CHARS,
    max_stream_bytes: int = MAX_STREAM_BYTES,
) -> ParsedDocument:
    from pypdf import PdfReader, apply_configuration
    from pypdf.errors import DependencyError, FileNotDecryptedError, LimitReachedError, PdfReadError

    filename = _filename(name)
    reexport = "Re-export it from the original application (or print it to a new PDF) and upload again."
    with apply_configuration(**_pypdf_limits(max_stream_bytes)):
        try:
            reader = PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted and not reader.decrypt(""):
                raise FileNotDecryptedError("a password is needed")
            page_count = len(reader.pages)
            if page_count > max_pages:
                raise DocumentRejected(
                    f"{filename} has {page_count:,} pages; deskmate indexes at most {max_pages:,} "
                    "pages per PDF. Split it into smaller files and upload those.",
                    kind="too_large",
                )
            lines: list[tuple[str, float]] = []
            text_chars = 0
            for page in reader.pages:
                page_lines = _pdf_page_lines(page)
                text_chars += sum(len(text) for text, _ in page_lines)
                if text_chars > max_text_chars:
                    raise DocumentRejected(_too_much_text(filename, max_text_chars), kind="too_large")
                lines.extend(page_lines)
            meta_title = _pdf_meta_title(reader)
        except DocumentRejected:
            raise
        except LimitReachedError as exc:
            raise DocumentRejected(
                f"{filename} expands to more data than deskmate reads from one PDF (over "
                f"{max_stream_bytes // (1024 * 1024)} MB in a single stream once decompressed, or too many objects); "
                f"it may be damaged or a decompression bomb. {reexport}",
                kind="unparseable",
            ) from exc
        except (FileNotDecryptedError, DependencyError) as exc:
            raise DocumentRejected(
                f"{filename} is password-protected or encrypted; upload an unprotected copy.", kind="unparseable"
            ) from exc
        except PdfReadError as exc:  # pypdf's own messages describe the damage ("startxref not found")
            raise DocumentRejected(
                f"{filename} could not be read as a PDF ({str(exc)[:200]}). {reexport}", kind="unparseable"
            ) from exc
        except (
            ValueError,
            KeyError,
            TypeError,
            AttributeError,
            IndexError,
            RecursionError,
            ZeroDivisionError,
            OSError,
            NotImplementedError,
            AssertionError,
            LookupError,
            ArithmeticError,
        ) as exc:
            log.info("pdf %s unreadable: %s: %s", filename, type(exc).__name__, exc)
            raise DocumentRejected(
                f"{filename} could not be read as a PDF: its internal structure is damaged "
                f"({type(exc).__name__}). {reexport}",
                kind="unparseable",
            ) from exc
    blocks = _pdf_blocks(lines)
    title = next((b.text for b in blocks if b.kind == "heading"), "") or meta_title or _title_from([], name)
    return ParsedDocument(title=title, content_type="pdf", blocks=blocks)


def _too_much_text(filename: str, limit: int) -> str:
    return (
        f"{filename} holds more than {limit:,} characters of text, more than deskmate indexes as one "
        "document. Split it into smaller files and upload those."
    )


def _pdf_meta_title(reader) -> str:
    try:
        return (reader.metadata.title or "").strip() if reader.metadata else ""
    except Exception:  # broken info dictionaries are common and harmless: fall back to the file name
        return ""


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
        elif ordered := _ORDERED.match(text):
            flush()
            blocks.append(Block("list_item", ordered.group(3).strip(), ordered=True))
        elif bullet := _BULLET.match(text):
            flush()
            blocks.append(Block("list_item", bullet.group(2).strip()))
        elif (
            blocks
            and blocks[-1].kind == "list_item"
            and not paragraph
            and (not text[:1].isupper() or not blocks[-1].text.rstrip().endswith((".", "!", "?", ":", ")")))
        ):
            last = blocks.pop()  # a wrapped step: the previous line did not end its sentence
            blocks.append(Block("list_item", f"{last.text} {text}", last.level, last.ordered))
        else:
            paragraph.append(text)
            if text.endswith((".", ":", "?", "!")) and len(text) < 60:
                flush()
    flush()
    return blocks


class FileParser:
    """Dispatches on the sniffed content type, bounds the result and sanitises it. Stateless; safe to share."""

    def __init__(
        self,
        *,
        max_pages: int = MAX_PDF_PAGES,
        max_text_chars: int = MAX_TEXT_CHARS,
        max_stream_bytes: int = MAX_STREAM_BYTES,
    ) -> None:
        self.max_pages = max_pages
        self.max_text_chars = max_text_chars
        self.max_stream_bytes = max_stream_bytes

    def parse(self, name: str, data: bytes) -> ParsedDocument:
        if not data:
            raise DocumentRejected(f"{_filename(name)} is empty.", kind="empty")
        kind = sniff_type(name, data)
        if kind == "pdf":
            document = parse_pdf(
                name,
                data,
                max_pages=self.max_pages,
                max_text_chars=self.max_text_chars,
                max_stream_bytes=self.max_stream_bytes,
            )
        elif kind in OFFICE_EXTENSIONS.values():
            office = parse_office(name, data, kind)
            # a workbook's headings are its sheet names: its file name says more about it
            fallback = _title_from([] if kind == "xlsx" else office.blocks, name)
            document = ParsedDocument(title=office.title or fallback, content_type=kind, blocks=office.blocks)
        else:
            try:
                document = {"html": parse_html, "markdown": parse_markdown, "text": parse_text, "rst": parse_rst}[kind](
                    name, data
                )
            except RecursionError:
                raise DocumentRejected(
                    f"{_filename(name)} is nested too deeply to read (thousands of elements "
                    "inside each other). Save it again from its editor, or as plain text, "
                    "and upload that.",
                    kind="unparseable",
                ) from None
        if document.text_length() > self.max_text_chars:
            raise DocumentRejected(_too_much_text(_filename(name), self.max_text_chars), kind="too_large")
        return sanitise_document(document)
