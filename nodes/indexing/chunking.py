"""Structure-aware, token-bounded chunking.

Sections follow the document's headings; each chunk carries its heading path (so "macOS" under
"Connecting to the VPN" is findable and citable) and splits only at block boundaries unless a
single block is too long. Pure functions: the token counter is passed in.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from typing import Callable

from core.lexicon import detect_os_in_path
from core.readers import section_reader
from core.records import Block, ChunkRecord, ParsedDocument
from core.roles import section_role

TokenCounter = Callable[[str], int]
# A section whose own text is this short reads better glued to its first subsection
# ("## macOS — The client is preinstalled." + "### Connect" steps).
SMALL_SECTION_TOKENS = 40
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass
class Section:
    path: list[str]  # headings below the title
    lines: list[str] = field(default_factory=list)


def render_blocks(blocks: list[Block]) -> list[str]:
    """Blocks → text lines: numbered lists renumbered 1..n per list, bullets as '- '.

    A block that belongs to a list item (`in_list`: the step's command, table or note) is indented under
    that item's text and does not end the list: the next step is numbered on. So does the code block right
    after a step that introduces it with a colon ("1. Save the following to a .reg file:"), even when the
    markup left it outside the list: it is that step's content. Code comes one line per entry, so packing
    never joins its lines."""
    lines: list[str] = []
    counters: dict[int, int] = {}
    columns: dict[int, int] = {}  # list depth → the column where that item's text starts
    previous: Block | None = None
    for block in blocks:
        introduced = (
            block.kind == "code"
            and not block.in_list
            and previous is not None
            and previous.kind == "list_item"
            and previous.ordered
            and previous.text.rstrip().endswith(":")
        )
        if introduced and previous is not None:
            block = replace(block, in_list=True, level=previous.level)
        previous = block
        if block.kind == "list_item":
            for deeper in [lvl for lvl in counters if lvl > block.level]:
                del counters[deeper]
            indent = "  " * max(0, block.level)
            if block.ordered:
                counters[block.level] = counters.get(block.level, 0) + 1
                marker = f"{counters[block.level]}."
            else:
                counters.pop(block.level, None)  # a bulleted list between two numbered ones ends the first
                marker = "-"
            columns[block.level] = len(indent) + len(marker) + 1
            lines.append(f"{indent}{marker} {block.text}")
            continue
        if block.in_list:
            for deeper in [lvl for lvl in counters if lvl > block.level]:
                del counters[deeper]
            pad = " " * columns.get(block.level, 2 * (max(0, block.level) + 1))
        else:
            counters.clear()
            columns.clear()
            pad = ""
        if block.kind == "code":
            lines += [f"{pad}{line}".rstrip() for line in block.text.splitlines()]
        else:
            lines.append(f"{pad}{block.text}")
    return lines


def split_sections(doc: ParsedDocument) -> list[Section]:
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    pending: list[Block] = []

    def flush(path: list[str]) -> None:
        if pending:
            sections.append(Section(path=list(path), lines=render_blocks(pending)))
            pending.clear()

    blocks = list(doc.blocks)
    if blocks and blocks[0].kind == "heading" and blocks[0].text.strip().lower() == doc.title.strip().lower():
        blocks = blocks[1:]  # the title is carried by every chunk anyway
    for block in blocks:
        if block.kind == "heading":
            flush([h for _, h in stack])
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, block.text.strip()))
            continue
        pending.append(block)
    flush([h for _, h in stack])
    return sections


def merge_small_parents(sections: list[Section], count: TokenCounter) -> list[Section]:
    merged: list[Section] = []
    carry: Section | None = None
    for section in sections:
        if carry is not None:
            # (not into a subsection for one OS when the parent is for none: "Install > macOS > Disk image" would
            # take the page's introduction with it, and a Windows user would never read it)
            if (
                section.path[: len(carry.path)] == carry.path
                and len(section.path) > len(carry.path)
                and detect_os_in_path(section.path) == detect_os_in_path(carry.path)
            ):
                section = Section(path=section.path, lines=carry.lines + section.lines)
            else:
                merged.append(carry)
            carry = None
        is_parent_lead = count("\n".join(section.lines)) < SMALL_SECTION_TOKENS
        if is_parent_lead:
            carry = section
        else:
            merged.append(section)
    if carry is not None:
        merged.append(carry)
    return merged


MIN_CHARS_PER_TOKEN = 10  # English prose runs about 4–5 characters per word piece, code and URLs fewer


class _Meter:
    """Token cost of joined pieces without re-tokenising the whole: cost(a + b) = cost(a) + cost(b).

    Exact for whitespace-split tokenizers (WordPiece, BPE with a space prefix): the only tokens
    not owned by a piece are the special ones every call adds, counted once as `overhead`.
    """

    def __init__(self, count: TokenCounter) -> None:
        self.count = count
        self.overhead = count("")

    def cost(self, text: str) -> int:
        # at least one token per MIN_CHARS_PER_TOKEN characters: WordPiece reads a "word" of 100+ characters (a
        # pasted key, a minified line) as one [UNK], which would let a 200,000-character line pass as 12 tokens
        return max(0, self.count(text) - self.overhead, len(text) // MIN_CHARS_PER_TOKEN)


def _split_long_line(line: str, budget: int, meter: _Meter) -> list[str]:
    """A single block over budget: cut at sentences, and a sentence over budget at words."""
    pieces: list[str] = []
    current: list[str] = []
    used = 0

    def flush() -> None:
        nonlocal used
        if current:
            pieces.append(" ".join(current))
            current.clear()
        used = 0

    for sentence in _SENTENCE.split(line):
        cost = meter.cost(sentence)
        if cost <= budget:
            if used + cost > budget:
                flush()
            current.append(sentence)
            used += cost
            continue
        flush()
        for word in sentence.split():
            for part, part_cost in _cut_word(word, meter.cost(word), budget, meter):
                if current and used + part_cost > budget:
                    flush()
                current.append(part)
                used += part_cost
    flush()
    return pieces


def _cut_word(word: str, cost: int, budget: int, meter: _Meter) -> list[tuple[str, int]]:
    """A "word" over budget (a pasted key, a minified line, a base64 blob) in slices that fit."""
    if cost <= budget or len(word) <= 1:
        return [(word, cost)]
    size = max(1, len(word) * budget * 9 // (cost * 10))  # the share of characters that should fit, with slack
    parts: list[tuple[str, int]] = []
    for start in range(0, len(word), size):
        piece = word[start : start + size]
        piece_cost = meter.cost(piece)
        if piece_cost > budget:  # an unusually dense slice: halve it
            half = len(piece) // 2
            parts += _cut_word(piece[:half], meter.cost(piece[:half]), budget, meter)
            parts += _cut_word(piece[half:], meter.cost(piece[half:]), budget, meter)
        else:
            parts.append((piece, piece_cost))
    return parts


def pack_lines(lines: list[str], budget: int, count: TokenCounter) -> list[str]:
    """Greedy packing of whole lines into bodies of at most `budget` tokens."""
    meter = _Meter(count)
    budget = max(1, budget - meter.overhead)
    bodies: list[str] = []
    current: list[str] = []
    used = 0
    for line in lines:
        line_cost = meter.cost(line)
        parts = (
            [(line, line_cost)]
            if line_cost <= budget
            else [(p, meter.cost(p)) for p in _split_long_line(line, budget, meter)]
        )
        for part, cost in parts:
            if current and used + cost > budget:
                bodies.append("\n".join(current))
                current, used = [], 0
            current.append(part)
            used += cost
    if current:
        bodies.append("\n".join(current))
    return [b for b in bodies if b.strip()]


def heading_prefix(title: str, path: list[str]) -> str:
    return " > ".join([title, *path])


def _hash(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def chunk_document(
    doc: ParsedDocument, *, doc_id: str, version: str, source: str, max_tokens: int, count: TokenCounter
) -> list[ChunkRecord]:
    """Chunks of at most `max_tokens` (heading prefix included), IDs from content hashes."""
    chunks: list[ChunkRecord] = []
    for section in merge_small_parents(split_sections(doc), count):
        prefix = heading_prefix(doc.title, section.path)
        budget = max(16, max_tokens - count(prefix) - 2)
        role = section_role(section.path, section.lines)
        reader = section_reader(section.path, section.lines)
        for body in pack_lines(section.lines, budget, count):
            index = len(chunks)
            os_name = detect_os_in_path(section.path) or ""
            chunks.append(
                ChunkRecord(
                    chunk_id=_hash(doc_id, version, str(index), body)[:32],
                    doc_id=doc_id,
                    version=version,
                    title=doc.title,
                    source=source,
                    section=" > ".join(section.path),
                    role=role,
                    reader=reader,
                    os=os_name,
                    chunk_index=index,
                    content_hash=_hash(body)[:16],
                    text=body,
                    embed_text=f"{prefix}\n{body}",
                )
            )
    return chunks
