"""HTML → blocks: for HTML uploads, and for the raw HTML inside Markdown (tables, <details>, lists).

Inline tags are glued ("Report <b>phishing</b>." reads "Report phishing."), block tags separate. What sits
inside a list item after its first line — a <pre>, a paragraph, a table, a nested <ol> — stays with that
item (`in_list` at its depth), so its steps keep their numbers and the code its line breaks.
"""

from __future__ import annotations

import re

from core.records import Block, BlockKind

DROP_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "svg",
    "canvas",
    "nav",
    "footer",
    "form",
    "button",
    "object",
    "embed",
    "head",
    "math",
    "applet",
    "frameset",
    "frame",
    "noembed",
    "noframes",
    "xmp",
    "textarea",
    "select",
    "input",
    "audio",
    "video",
    "link",
    "meta",
    "base",
)
_SPACED_TAGS = {
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "pre",
    "table",
    "tr",
    "td",
    "th",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "section",
    "article",
    "blockquote",
    "dt",
    "dd",
}
_BLOCK_TAGS = {
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "aside",
    "blockquote",
    "figure",
    "figcaption",
    "dl",
    "dt",
    "dd",
    "details",
    "summary",
    "body",
    "html",
    "span",
    "center",
}
# what ends a list item's first line: the item's text is what comes before it
_ITEM_BREAKS = {
    "p",
    "div",
    "pre",
    "table",
    "ul",
    "ol",
    "blockquote",
    "dl",
    "figure",
    "details",
    "section",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
}
_NOT_TEXT = ("Comment", "Doctype", "Declaration", "ProcessingInstruction")


def _is_text(node) -> bool:
    from bs4 import NavigableString

    return isinstance(node, NavigableString) and node.__class__.__name__ not in _NOT_TEXT


def text_of(node) -> str:
    """Text as a reader sees it: inline tags glued (no "Report phishing ."), block tags spaced."""
    return text_of_nodes([node])


def text_of_nodes(nodes) -> str:
    from bs4 import Tag

    parts: list[str] = []

    def collect(children) -> None:
        for child in children:
            if _is_text(child):
                parts.append(str(child))
            elif isinstance(child, Tag):
                spaced = child.name.lower() in _SPACED_TAGS
                if spaced:
                    parts.append(" ")
                collect(child.children)
                if spaced:
                    parts.append(" ")

    collect(nodes)
    return re.sub(r"\s+", " ", "".join(parts)).strip()


class _Walker:
    def __init__(self) -> None:
        self.blocks: list[Block] = []

    def add(
        self, kind: BlockKind, text: str, *, level: int = 0, ordered: bool = False, item: int | None = None
    ) -> None:
        if item is not None and kind != "list_item":
            self.blocks.append(Block(kind, text, level=item, in_list=True))
        else:
            self.blocks.append(Block(kind, text, level=level, ordered=ordered))

    def walk(self, nodes, list_depth: int = -1, ordered: bool = False, item: int | None = None) -> None:
        """Blocks of `nodes`; `item` is the depth of the list item they belong to, if any."""
        from bs4 import Tag

        inline: list[str] = []

        def flush() -> None:
            text = re.sub(r"\s+", " ", "".join(inline)).strip()
            if text:
                self.add("paragraph", text, item=item)
            inline.clear()

        for child in nodes:
            if _is_text(child):
                inline.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name.lower()
            if re.fullmatch(r"h[1-6]", name):
                flush()
                if text := text_of(child):
                    self.add("paragraph" if item is not None else "heading", text, level=int(name[1]), item=item)
            elif name in ("ul", "ol"):
                flush()
                self.walk(child.children, list_depth + 1, ordered=name == "ol", item=item)
            elif name == "li":
                flush()
                self.list_item(child, max(0, list_depth), ordered)
            elif name == "pre":
                flush()
                if text := child.get_text().strip("\n"):
                    self.add("code", text, item=item)
            elif name == "table":
                flush()
                for row in child.find_all("tr"):
                    cells = [text_of(c) for c in row.find_all(["th", "td"])]
                    if any(cells):
                        self.add("table", " | ".join(cells), item=item)
            elif name == "br":
                inline.append(" ")
            elif name in _BLOCK_TAGS:
                flush()
                self.walk(child.children, list_depth, ordered, item)
            else:  # inline element: a, strong, code, em …
                inline.append(text_of(child) if name in _SPACED_TAGS else child.get_text())
        flush()

    def list_item(self, li, depth: int, ordered: bool) -> None:
        from bs4 import Tag

        children = list(li.children)
        split = next(
            (i for i, c in enumerate(children) if isinstance(c, Tag) and c.name.lower() in _ITEM_BREAKS), len(children)
        )
        lead, rest = children[:split], children[split:]
        text = text_of_nodes(lead)
        if not text and rest and rest[0].name.lower() not in ("ul", "ol"):
            first, rest = rest[0], rest[1:]  # <li><p>Open Settings.</p><pre>…</pre></li>
            text = text_of(first)
        self.add("list_item", text, level=depth, ordered=ordered)
        self.walk(rest, depth, ordered, item=depth)


def html_blocks(root) -> list[Block]:
    """The blocks of a parsed HTML tree (already stripped of DROP_TAGS)."""
    walker = _Walker()
    walker.walk(root.children)
    return walker.blocks


def fragment_blocks(markup: str) -> list[Block]:
    """The blocks of an HTML fragment found inside Markdown (`<table>…`, `<details><summary>…`)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(markup, "html.parser")
    for tag in soup(list(DROP_TAGS)):
        tag.decompose()
    return html_blocks(soup)
