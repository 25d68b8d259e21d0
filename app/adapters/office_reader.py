"""Word, PowerPoint and Excel files (OOXML) → blocks, by python-docx, python-pptx and openpyxl.

An Office file is a ZIP package. Before any library opens it, `check_package` reads the package's table of
contents only (nothing is decompressed) and refuses what deskmate must never open:

- a decompression bomb: too many parts, parts that declare more bytes than a document can hold, or a
  compression ratio no real document reaches (ZipExtFile never returns more than the declared size, so
  the declared sizes bound what is ever inflated);
- a macro-enabled file (.docm/.xlsm/.pptm, or a VBA project inside) under any name: macros are never run,
  and a file that carries them is not silently half-read;
- a workbook linking to other workbooks (external links): their values are a copy of someone else's file
  that deskmate would index without being able to check;
- a package whose main part is not what its extension says (a workbook named .docx).

External relationships (hyperlinks, linked pictures, templates) are never fetched: the libraries do not
follow them and this module never asks. Everything runs inside the parse worker (parse_sandbox.py).
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from app.adapters.markup_rules import image_text
from core.errors import DocumentRejected
from core.records import Block, ContentType

log = logging.getLogger(__name__)

OFFICE_EXTENSIONS: dict[str, ContentType] = {".docx": "docx", ".pptx": "pptx", ".xlsx": "xlsx"}
_APPLICATION = {"docx": "Word", "pptx": "PowerPoint", "xlsx": "Excel"}
_MAIN_PART = {"docx": "word/document.xml", "pptx": "ppt/presentation.xml", "xlsx": "xl/workbook.xml"}
_MACRO_EXTENSION = {"docx": ".docm", "pptx": ".pptm", "xlsx": ".xlsm"}
ZIP_MAGIC = b"PK\x03\x04"
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # legacy .doc/.xls/.ppt (and encrypted OOXML)

MAX_PARTS = 5_000
MAX_PACKAGE_BYTES = 256 * 1024 * 1024  # all parts together, once decompressed
MAX_PART_BYTES = 64 * 1024 * 1024  # one part (document.xml, a sheet), once decompressed
MAX_RATIO = 200  # deflate reaches ~10-30x on XML; hundreds-to-one is a bomb
MAX_SHEET_CELLS = 200_000  # per workbook: an asset list, not a data warehouse
MAX_COLUMNS = 64
MAX_SLIDES = 1_000


@dataclass(frozen=True)
class OfficeDocument:
    title: str
    blocks: list[Block]


def _name(name: str) -> str:
    return PurePosixPath(name).name or name


def check_package(name: str, data: bytes, claimed: str) -> None:
    """Refuse a package that is not a plain `claimed` (docx|pptx|xlsx) file; nothing is decompressed here."""
    filename, app = _name(name), _APPLICATION[claimed]
    resave = f"Open it in {app}, save it as a {app} file ({PurePosixPath(filename).suffix or '.' + claimed}) and upload again."
    if data.startswith(OLE2_MAGIC):
        raise DocumentRejected(
            f"{filename} is a legacy binary Office file or a password-protected one, not a "
            f"{claimed.upper()} package. {resave}",
            kind="unsupported_type",
        )
    if not data.startswith(ZIP_MAGIC):
        raise DocumentRejected(
            f"{filename} is named .{claimed} but its content is not an Office file (it is not a ZIP package).",
            kind="unsupported_type",
        )
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        infos = package.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as exc:
        raise DocumentRejected(
            f"{filename} is a damaged Office file ({str(exc)[:120]}). {resave}", kind="unparseable"
        ) from exc
    if len(infos) > MAX_PARTS:
        raise DocumentRejected(
            f"{filename} holds {len(infos):,} parts; deskmate reads Office files of at most "
            f"{MAX_PARTS:,}. It may be a decompression bomb. {resave}",
            kind="too_large",
        )
    total = 0
    for info in infos:
        total += info.file_size
        bomb = info.file_size > MAX_PART_BYTES or (
            info.file_size > 1024 * 1024 and info.file_size > MAX_RATIO * max(info.compress_size, 1)
        )
        if bomb or total > MAX_PACKAGE_BYTES:
            raise DocumentRejected(
                f"{filename} expands to more data than deskmate reads from one Office file ({info.filename} alone "
                f"declares {info.file_size // (1024 * 1024):,} MB once decompressed); it may be a decompression "
                f"bomb. {resave}",
                kind="too_large",
            )
    names = {info.filename for info in infos}
    if "[Content_Types].xml" not in names:
        raise DocumentRejected(
            f"{filename} is a ZIP file but not an Office document (it has no [Content_Types].xml). {resave}",
            kind="unsupported_type",
        )
    content_types = package.read("[Content_Types].xml").decode("utf-8", "replace")
    if "macroEnabled" in content_types or any(n.lower().endswith("vbaproject.bin") for n in names):
        raise DocumentRejected(
            f"{filename} is a macro-enabled Office file ({_MACRO_EXTENSION[claimed]} content "
            f"under a .{claimed} name); deskmate never opens files that carry macros. Open it in "
            f"{app}, save it as a {app} file without macros (.{claimed}) and upload that.",
            kind="unsupported_type",
        )
    actual = next((kind for kind, part in _MAIN_PART.items() if part in names), None)
    if actual is None:
        raise DocumentRejected(
            f"{filename} is a ZIP file but not a Word, PowerPoint or Excel document. {resave}", kind="unsupported_type"
        )
    if actual != claimed:
        raise DocumentRejected(
            f"{filename} is named .{claimed} but contains {'an' if actual == 'xlsx' else 'a'} "
            f"{_APPLICATION[actual]} document; "
            f"rename it to .{actual} and upload again.",
            kind="unsupported_type",
        )
    if claimed == "xlsx" and any(n.startswith("xl/externalLinks/") for n in names):
        raise DocumentRejected(
            f"{filename} links to other workbooks (external links); deskmate does not follow "
            "them nor index their cached copies. In Excel use Data > Edit Links > Break Link, "
            "save, and upload again.",
            kind="unparseable",
        )


def _damaged(filename: str, exc: Exception) -> DocumentRejected:
    log.info("office file %s unreadable: %s: %s", filename, type(exc).__name__, exc)
    return DocumentRejected(
        f"{filename} could not be read as an Office file: its structure is damaged "
        f"({type(exc).__name__}). Open it in its application, save it again and upload that.",
        kind="unparseable",
    )


_READ_ERRORS = (
    KeyError,
    ValueError,
    TypeError,
    AttributeError,
    IndexError,
    LookupError,
    zipfile.BadZipFile,
    OSError,
    AssertionError,
)


# --- Word ---------------------------------------------------------------------------------------
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.I)
_ORDERED_FORMATS = {
    "decimal",
    "lowerLetter",
    "upperLetter",
    "lowerRoman",
    "upperRoman",
    "decimalZero",
    "ordinal",
    "cardinalText",
    "ordinalText",
}


class _Numbering:
    """Whether a (numId, level) list is numbered or bulleted, from the document's numbering part."""

    def __init__(self, document) -> None:
        self._formats: dict[tuple[str, int], str] = {}
        try:
            root = document.part.numbering_part.element
        except (KeyError, NotImplementedError, AttributeError):
            return
        abstract = {}
        for node in root.findall(f"{_W}abstractNum"):
            levels = {}
            for lvl in node.findall(f"{_W}lvl"):
                fmt = lvl.find(f"{_W}numFmt")
                levels[int(lvl.get(f"{_W}ilvl", "0"))] = fmt.get(f"{_W}val") if fmt is not None else "bullet"
            abstract[node.get(f"{_W}abstractNumId")] = levels
        for num in root.findall(f"{_W}num"):
            ref = num.find(f"{_W}abstractNumId")
            if ref is not None:
                for level, fmt in abstract.get(ref.get(f"{_W}val"), {}).items():
                    self._formats[(num.get(f"{_W}numId"), level)] = fmt

    def ordered(self, num_id: str, level: int) -> bool | None:
        fmt = self._formats.get((num_id, level))
        return None if fmt is None else fmt in _ORDERED_FORMATS


def _list_position(paragraph, style) -> tuple[str, int] | None:
    """(numId, level) of a list paragraph, from its own properties or its style's; None when not a list."""
    for source in (paragraph._p.pPr, getattr(style, "element", None) is not None and style.element.pPr):
        num_pr = getattr(source, "numPr", None) if source is not None and source is not False else None
        if num_pr is not None and num_pr.numId is not None:
            num_id = str(num_pr.numId.val)
            if num_id == "0":  # numbering switched off for this paragraph
                return None
            level = num_pr.ilvl.val if num_pr.ilvl is not None else 0
            return num_id, int(level)
    return None


def _alt_texts(element) -> list[str]:
    """Informative alt text of the pictures inside a paragraph or shape (wp:docPr / p:cNvPr descr)."""
    texts = []
    for node in element.iter():
        if node.tag.endswith("}docPr") or node.tag.endswith("}cNvPr"):
            alt = image_text(node.get("descr") or "")
            if alt:
                texts.append(alt)
    return texts


def _table_rows(rows) -> list[str]:
    out = []
    for row in rows:
        cells: list[str] = []
        for cell in row:
            text = re.sub(r"\s+", " ", cell).strip()
            if not cells or text != cells[-1]:  # a merged cell repeats itself across the span
                cells.append(text)
        if any(cells):
            out.append(" | ".join(cells))
    return out


def parse_docx(name: str, data: bytes) -> OfficeDocument:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    filename = _name(name)
    try:
        document = docx.Document(io.BytesIO(data))
        numbering = _Numbering(document)
        blocks: list[Block] = []
        doc_title = (document.core_properties.title or "").strip()
        # python-docx resolves a paragraph's style by searching every style of the document, each time it is
        # asked; a paragraph's style depends only on its style id, so each id is resolved once per document
        styles: dict[str | None, Any] = {}  # python-docx's paragraph styles (or None), by style id
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                rows = _table_rows([[cell.text for cell in row.cells] for row in item.rows])
                blocks.extend(Block("table", row) for row in rows)
                continue
            if not isinstance(item, Paragraph):
                continue
            text = re.sub(r"[ \t]+", " ", item.text).strip()
            style_id = item._p.style
            if style_id not in styles:
                styles[style_id] = item.style
            paragraph_style = styles[style_id]
            style = (paragraph_style.name if paragraph_style is not None else "") or ""
            alts = _alt_texts(item._p)
            heading = _HEADING_STYLE.match(style)
            if style == "Title" and text:
                blocks.append(Block("heading", text, level=1))
            elif heading and text:
                blocks.append(Block("heading", text, level=min(max(int(heading.group(1)), 1), 6)))
            elif (position := _list_position(item, paragraph_style)) is not None and text:
                num_id, level = position
                if level == 0 and (depth := re.search(r"(\d)$", style)):  # "List Bullet 2": the second level
                    level = int(depth.group(1)) - 1
                ordered = numbering.ordered(num_id, level)
                if ordered is None:
                    ordered = "number" in style.lower()
                blocks.append(Block("list_item", text, level=level, ordered=ordered))
            elif text:
                blocks.append(Block("paragraph", text))
            blocks.extend(Block("paragraph", alt) for alt in alts)
    except DocumentRejected:
        raise
    except _READ_ERRORS as exc:
        raise _damaged(filename, exc) from exc
    title = next((b.text for b in blocks if b.kind == "heading" and b.level == 1), "") or doc_title
    return OfficeDocument(title=title, blocks=blocks)


# --- PowerPoint ---------------------------------------------------------------------------------
def parse_pptx(name: str, data: bytes) -> OfficeDocument:
    from pptx import Presentation
    from pptx.enum.shapes import PP_PLACEHOLDER

    filename = _name(name)
    title_kinds = {PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE}
    try:
        presentation = Presentation(io.BytesIO(data))
        if len(presentation.slides) > MAX_SLIDES:
            raise DocumentRejected(
                f"{filename} has {len(presentation.slides):,} slides; deskmate reads at most "
                f"{MAX_SLIDES:,}. Split the deck and upload the parts.",
                kind="too_large",
            )
        blocks: list[Block] = []
        deck_title = (presentation.core_properties.title or "").strip()
        for number, slide in enumerate(presentation.slides, start=1):
            title_shape = slide.shapes.title
            slide_title = (
                re.sub(r"\s+", " ", title_shape.text_frame.text).strip()
                if title_shape is not None and title_shape.has_text_frame
                else ""
            )
            blocks.append(Block("heading", slide_title or f"Slide {number}", level=2))
            for shape in slide.shapes:
                if shape is title_shape:
                    continue
                placeholder = shape.placeholder_format.type if shape.is_placeholder else None
                if placeholder in title_kinds:
                    continue
                if shape.has_text_frame:
                    bulleted = placeholder is not None and placeholder not in (PP_PLACEHOLDER.SUBTITLE,)
                    for paragraph in shape.text_frame.paragraphs:
                        text = re.sub(r"\s+", " ", "".join(run.text for run in paragraph.runs)).strip()
                        if not text:
                            continue
                        if bulleted:
                            blocks.append(Block("list_item", text, level=min(paragraph.level, 8)))
                        else:
                            blocks.append(Block("paragraph", text))
                elif getattr(shape, "has_table", False) and shape.has_table:
                    rows = _table_rows([[cell.text for cell in row.cells] for row in shape.table.rows])
                    blocks.extend(Block("table", row) for row in rows)
                blocks.extend(Block("paragraph", alt) for alt in _alt_texts(shape._element) if not shape.has_text_frame)
            if slide.has_notes_slide:
                notes = slide.notes_slide.notes_text_frame
                text = re.sub(r"\s+", " ", notes.text).strip() if notes is not None else ""
                if text:
                    blocks.append(Block("paragraph", f"Speaker notes: {text}"))
    except DocumentRejected:
        raise
    except _READ_ERRORS as exc:
        raise _damaged(filename, exc) from exc
    first_slide_title = blocks[0].text if blocks and not blocks[0].text.startswith("Slide ") else ""
    return OfficeDocument(title=deck_title or first_slide_title, blocks=blocks)


# --- Excel --------------------------------------------------------------------------------------
def _cell_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if hasattr(value, "isoformat"):
        text = value.isoformat()
        return text[:-9] if text.endswith("T00:00:00") else text
    return re.sub(r"\s+", " ", str(value)).strip()


def parse_xlsx(name: str, data: bytes) -> OfficeDocument:
    """Each sheet a section; each row a record 'Header: value; …' under its column headers (the first row)."""
    import openpyxl

    filename = _name(name)
    cells = 0
    try:
        # read-only streams rows instead of building every cell; data_only reads cached values, never formulas
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
        blocks: list[Block] = []
        title = (workbook.properties.title or "").strip()
        for sheet in workbook.worksheets:
            rows = sheet.iter_rows(values_only=True)
            headers: list[str] | None = None
            records: list[Block] = []
            for row in rows:
                values = [_cell_text(v) for v in row[:MAX_COLUMNS]]
                cells += len(values)
                if cells > MAX_SHEET_CELLS:
                    raise DocumentRejected(
                        f"{filename} holds more than {MAX_SHEET_CELLS:,} cells; deskmate indexes "
                        "workbooks up to that size. Split it (one sheet per file, or fewer "
                        "rows) and upload the parts.",
                        kind="too_large",
                    )
                if not any(values):
                    continue
                if headers is None:
                    headers = values
                    continue
                fields = [
                    f"{headers[i] if i < len(headers) and headers[i] else f'Column {i + 1}'}: {v}"
                    for i, v in enumerate(values)
                    if v
                ]
                records.append(Block("list_item", "; ".join(fields)))
            if headers is None:
                continue
            blocks.append(Block("heading", sheet.title, level=2))
            if records:
                blocks.append(Block("paragraph", "Columns: " + ", ".join(h for h in headers if h)))
                blocks.extend(records)
            else:  # a sheet of one row (or one column of notes): its text as it is
                blocks.append(Block("paragraph", " | ".join(h for h in headers if h)))
        workbook.close()
    except DocumentRejected:
        raise
    except _READ_ERRORS as exc:
        raise _damaged(filename, exc) from exc
    return OfficeDocument(title=title, blocks=blocks)


def parse_office(name: str, data: bytes, kind: str) -> OfficeDocument:
    check_package(name, data, kind)
    return {"docx": parse_docx, "pptx": parse_pptx, "xlsx": parse_xlsx}[kind](name, data)
