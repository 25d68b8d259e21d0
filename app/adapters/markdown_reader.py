"""Markdown → blocks, with CommonMark's block structure (markdown-it-py) and deskmate's own inline reading.

markdown-it-py decides what is a list item, what sits inside it, what a quote or a fenced block is —
the part a line-by-line reader gets wrong ("3. Open the Registry Editor" followed by an indented code
block and a nested list). Its inline parser is switched off: on hostile text it is quadratic (a 200 kB
run of "[a](" takes seconds), and `clean_inline` reads a paragraph's inline syntax in linear time.

Source text arrives already normalised by app/adapters/markup.py (directives rewritten, front matter
set aside); what is left for here: alerts (`> [!NOTE]` → "Note: …"), raw HTML blocks (read by
app/adapters/html_reader.py), pipe tables, and the list context of every block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from app.adapters.html_reader import fragment_blocks
from app.adapters.markup import clean_inline, reference_key, split_alert
from core.records import Block, BlockKind

MAX_NESTING = 20  # lists and quotes inside each other; deeper markup is read as text
# (no two adjacent repeats can take the same spaces: linear on a line of spaces)
_DELIMITER_ROW = re.compile(r"^[ \t]*(?:\|[ \t]*)?:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*(?:\|[ \t]*)?$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
# comments, CDATA, declarations and processing instructions: never text, and Python's HTML parser is
# quadratic on an unclosed one ("<!--" repeated), so they go before it sees the fragment
_HTML_NOT_CONTENT = re.compile(r"<!--.*?(?:-->|$)|<!\[CDATA\[.*?(?:\]\]>|$)|<[!?][^>]*(?:>|$)", re.S)
_TAG = re.compile(r"<[^<>]*>")


@lru_cache(maxsize=1)
def _block_parser():
    from markdown_it import MarkdownIt

    # block structure only: the inline rules are what is slow on hostile input (see the module docstring)
    return MarkdownIt("commonmark", {"html": True, "maxNesting": MAX_NESTING}).disable(["inline", "text_join"])


@dataclass
class _Item:
    depth: int
    ordered: bool
    started: bool = False  # its first line has been written as the list_item block


@dataclass
class _List:
    depth: int
    ordered: bool
    start: int
    items: int = 0


@dataclass
class _Closed:
    """The ordered list that ended last at some depth: a list starting at its next number continues it."""

    depth: int
    items: int
    block_count: int


class _Reader:
    def __init__(self, references: dict[str, str]) -> None:
        self.references = references
        self.blocks: list[Block] = []
        self.lists: list[_List] = []
        self.items: list[_Item] = []
        self.pending_label: str | None = None  # an alert marker alone on its line labels what follows
        self.closed: _Closed | None = None

    # --- writing blocks ---------------------------------------------------------------------------
    def emit(self, kind: BlockKind, text: str, level: int = 0, ordered: bool = False) -> None:
        if not text.strip():
            return
        if self.pending_label:
            label, self.pending_label = self.pending_label, None
            if kind == "paragraph":
                text = f"{label}: {text}"
            else:
                self.emit("paragraph", f"{label}:")
        item = self.items[-1] if self.items else None
        if kind == "list_item" or item is None:
            self.blocks.append(Block(kind, text, level=level, ordered=ordered))
        elif not item.started:
            item.started = True
            self.lists[-1].items += 1
            first_line = text if kind != "code" else " ".join(text.split())
            self.blocks.append(Block("list_item", first_line, level=item.depth, ordered=item.ordered))
        else:
            self.blocks.append(Block("paragraph" if kind == "heading" else kind, text, level=item.depth, in_list=True))

    def paragraph(self, raw: str) -> None:
        alert = split_alert(raw) if raw.lstrip().startswith("[!") else None
        if alert is not None:
            body = clean_inline(alert.body, self.references)
            if alert.title:
                self.emit("paragraph", f"{alert.label}: {alert.title}")
                self.emit("paragraph", body)
            elif body:
                self.emit("paragraph", f"{alert.label}: {body}")
            else:
                self.pending_label = alert.label
            return
        lines = raw.split("\n")
        table_at = self._table_start(lines)
        if table_at is None:
            self.emit("paragraph", clean_inline(raw, self.references))
            return
        if table_at:
            self.emit("paragraph", clean_inline("\n".join(lines[:table_at]), self.references))
        for row in lines[table_at:]:
            if _DELIMITER_ROW.match(row) and "-" in row:
                continue
            cells = _CELL_SPLIT.split(row.strip().strip("|"))
            self.emit("table", " | ".join(clean_inline(c.replace("\\|", "|"), self.references) for c in cells))

    @staticmethod
    def _table_start(lines: list[str]) -> int | None:
        """Where a pipe table begins in a paragraph's lines (a header row above a `|---|` row), if anywhere."""
        for i in range(len(lines) - 1):
            if "|" in lines[i] and "-" in lines[i + 1] and _DELIMITER_ROW.match(lines[i + 1]) and "|" in lines[i + 1]:
                return i
        if len(lines) > 1 and all(line.lstrip().startswith("|") for line in lines):
            return 0
        return None

    def html(self, markup: str) -> None:
        markup = _HTML_NOT_CONTENT.sub("", markup)
        if not _TAG.sub("", markup).strip():
            return  # only tags (a layout table's "</td><td>"), nothing to read
        item = self.items[-1] if self.items else None
        for block in fragment_blocks(markup):
            if item is None:
                self.emit(block.kind, block.text, block.level, block.ordered)
            elif block.kind == "list_item":  # a list in raw HTML inside a Markdown list item
                self.emit("list_item", block.text, item.depth + 1 + block.level, block.ordered)
            elif block.in_list:
                self.blocks.append(Block(block.kind, block.text, level=item.depth + 1 + block.level, in_list=True))
            else:
                self.emit(block.kind, block.text)

    # --- lists ------------------------------------------------------------------------------------
    def open_list(self, ordered: bool, start: int) -> None:
        depth = len(self.lists)
        if self.items and not self.items[-1].started:  # "1. - a": the outer item has no text of its own
            self.items[-1].started = True
        closed = self.closed
        if (
            ordered
            and closed is not None
            and closed.depth == depth
            and start == closed.items + 1
            and start > 1
            and all(
                b.kind in ("paragraph", "code", "table") and not b.in_list for b in self.blocks[closed.block_count :]
            )
        ):
            # "2." after a screenshot or a note that was not indented under step 1: the same procedure goes on,
            # and what came between belongs to step 1
            for index in range(closed.block_count, len(self.blocks)):
                between = self.blocks[index]
                self.blocks[index] = Block(between.kind, between.text, level=depth, in_list=True)
            self.lists.append(_List(depth, ordered, start, items=closed.items))
            return
        self.lists.append(_List(depth, ordered, start))

    def close_list(self) -> None:
        finished = self.lists.pop()
        self.closed = _Closed(finished.depth, finished.items, len(self.blocks)) if finished.ordered else None

    # --- the token stream -------------------------------------------------------------------------
    def read(self, tokens) -> list[Block]:
        leaf: tuple[str, int] | None = None
        for index, token in enumerate(tokens):
            kind = token.type
            if kind == "heading_open":
                content = tokens[index + 1].content if index + 1 < len(tokens) else ""
                if token.markup in ("-", "=") and self._table_start(content.split("\n")) is not None:
                    leaf = ("paragraph", 0)  # a pipe table with a "---" under it, not an underlined heading
                    continue
                leaf = ("heading", int(token.tag[1:]))
            elif kind == "paragraph_open":
                leaf = ("paragraph", 0)
            elif kind == "inline" and leaf is not None:
                if leaf[0] == "heading":
                    self.emit("heading", clean_inline(token.content, self.references), level=leaf[1])
                else:
                    self.paragraph(token.content)
            elif kind in ("heading_close", "paragraph_close"):
                leaf = None
            elif kind in ("fence", "code_block"):
                self.emit("code", token.content.rstrip("\n"))
            elif kind == "html_block":
                self.html(token.content)
            elif kind in ("bullet_list_open", "ordered_list_open"):
                self.open_list(kind == "ordered_list_open", int(token.attrGet("start") or 1))
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.close_list()
            elif kind == "list_item_open":
                current = self.lists[-1]
                self.items.append(_Item(current.depth, current.ordered))
            elif kind == "list_item_close":
                self.items.pop()
            elif kind == "blockquote_close":
                self.pending_label = None  # a note with nothing after its label: nothing to label
        return self.blocks


def markdown_blocks(text: str) -> list[Block]:
    """The blocks of CommonMark text (normalised by app/adapters/markup.py first)."""
    env: dict = {}
    tokens = _block_parser().parse(text, env)
    # link reference definitions ("[portal]: https://…"), keyed as clean_inline looks them up
    references = {reference_key(label): ref.get("href", "") for label, ref in env.get("references", {}).items()}
    return _Reader(references).read(tokens)
