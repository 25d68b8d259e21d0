"""Runs the markup rules (app/adapters/markup_rules.py) and reads Markdown's inline syntax as plain text.

`normalise_source` turns a docs-site Markdown (or text) file into plain CommonMark before the structure
is read: front matter is set aside (its `title` kept), directives with a body become labelled notes,
code blocks or their bare content, and per-line markup goes. Code fences are never touched. `clean_inline`
turns one paragraph's inline Markdown into the text a reader sees.

Every pattern is linear in its input (bounded or non-overlapping repeats), and nesting is bounded:
hostile uploads reach this code, inside the parse worker's time limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from app.adapters.markup_rules import (
    NOTE_LABELS,
    RULES,
    RULES_BY_NAME,
    TAB_MARK,
    MarkupRule,
    brace_tab_label,
    image_text,
    note_label,
    tab_end,
    tab_marker,
    tab_open,
)

MAX_DIRECTIVE_DEPTH = 8  # notes inside notes inside …; deeper ones keep their content, unlabelled
MAX_FRONT_MATTER_LINES = 500

_BLOCK_RULES = tuple(r for r in RULES if r.stage == "block")
_LINE_RULES = tuple(r for r in RULES if r.stage == "line")
_TEXT_RULES = tuple(r for r in RULES if r.stage == "text")
_ALERT = RULES_BY_NAME["alert"].pattern
# a line no rule can touch is passed through without trying each rule (substring tests: a regex alternation
# of these costs more than all the rules on an ordinary line)
_TRIGGER_ANYWHERE = (":::", "[!", "{", "!!!", "???", "<", "8<")
_TRIGGER_AT_START = ("..", "import", "export", "#", "===")


def _may_need_rules(line: str) -> bool:
    return any(t in line for t in _TRIGGER_ANYWHERE) or line.lstrip().startswith(_TRIGGER_AT_START)


# (the prefix is "spaces, then block-quote markers each followed by at most one space, then spaces", written so no
# two repeats can take the same character: a line of 60,000 spaces is one pass, not a quadratic search)
_FENCE_OPEN = re.compile(r"^(?P<prefix>[ \t]*(?:>(?:[ \t]?>)*[ \t]*)?)(?P<marks>`{3,}(?=[^`]*$)|~{3,})")


def _fence_open(line: str) -> re.Match[str] | None:
    """The opening fence on `line`, if any (a line without three backticks or tildes is not even searched)."""
    return _FENCE_OPEN.match(line) if "```" in line or "~~~" in line else None


# --- front matter ---------------------------------------------------------------------------------
_YAML_OPEN = re.compile(r"^---[ \t]*$")
_YAML_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$")
_TOML_FENCE = re.compile(r"^\+\+\+[ \t]*$")
_YAML_KEY = re.compile(r"^(?:[\w.\-]+|\"[^\"\n]+\"|'[^'\n]+')[ \t]*:(?:[ \t]|$)")
_TOML_KEY = re.compile(r"^(?:[\w.\-]+|\"[^\"\n]+\")[ \t]*=|^\[[\w.\-]+\][ \t]*$")
_YAML_TITLE = re.compile(r"^title[ \t]*:[ \t]*(?P<value>.*?)[ \t]*$")
_TOML_TITLE = re.compile(r"^title[ \t]*=[ \t]*(?P<value>.*?)[ \t]*$")


def _unquote(value: str) -> str:
    if value[:1] not in ("'", '"'):
        value = re.sub(r"[ \t]+#.*$", "", value)  # a YAML comment after a plain value
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def split_front_matter(lines: list[str]) -> tuple[list[str], str]:
    """(the lines after a YAML `---` or TOML `+++` front matter block, its title or ""); nothing else is read."""
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start >= len(lines):
        return lines, ""
    if _YAML_OPEN.match(lines[start]):
        closing, key, title_pattern = _YAML_CLOSE, _YAML_KEY, _YAML_TITLE
    elif _TOML_FENCE.match(lines[start]):
        closing, key, title_pattern = _TOML_FENCE, _TOML_KEY, _TOML_TITLE
    else:
        return lines, ""
    end = next(
        (i for i in range(start + 1, min(len(lines), start + MAX_FRONT_MATTER_LINES)) if closing.match(lines[i])), None
    )
    inner = lines[start + 1 : end] if end is not None else []
    first = next((line for line in inner if line.strip() and not line.lstrip().startswith("#")), None)
    if end is None or (first is not None and not key.match(first)):
        return lines, ""  # a thematic break opening the text, not front matter
    title = ""
    for index, line in enumerate(inner):
        if found := title_pattern.match(line):
            value = found.group("value")
            if value in ("", "|", ">", "|-", ">-", "|+", ">+"):  # a YAML block scalar: the indented lines below
                block = []
                for following in inner[index + 1 :]:
                    if following.strip() and not following[:1].isspace():
                        break
                    block.append(following.strip())
                value = " ".join(part for part in block if part)
            title = clean_inline(_unquote(value))
            break
    return lines[end + 1 :], title


# --- directives and per-line markup --------------------------------------------------------------
@dataclass
class _Fence:
    char: str
    length: int

    def closes(self, line: str) -> bool:
        stripped = line.lstrip(" \t>").rstrip()
        return len(stripped) >= self.length and stripped == self.char * len(stripped)


def fenced_code_lines(lines: list[str]) -> list[bool]:
    """For each line, whether it lies inside a fenced code block (its fences included)."""
    inside: list[bool] = []
    fence: _Fence | None = None
    for line in lines:
        if fence is not None:
            inside.append(True)
            if fence.closes(line):
                fence = None
        elif opened := _fence_open(line):
            fence = _Fence(opened.group("marks")[0], len(opened.group("marks")))
            inside.append(True)
        else:
            inside.append(False)
    return inside


def _indent_width(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" "))


def _dedent(lines: list[str], columns: int) -> list[str]:
    out = []
    for line in lines:
        expanded = line.expandtabs(4)
        cut = min(columns, _indent_width(expanded))
        out.append(expanded[cut:])
    return out


_OPTION = re.compile(r"^[ \t]*:[\w -]+:(?:[ \t].*)?$")  # a reStructuredText directive option (":alt: text")


def _indented_body(lines: list[str], start: int, opener_indent: int) -> tuple[list[str], int]:
    """The body of a directive on line `start`: the lines indented deeper than it (blank lines inside)."""
    end = start + 1
    last_content = start
    while end < len(lines):
        line = lines[end]
        if line.strip():
            if _indent_width(line) <= opener_indent:
                break
            last_content = end
        end += 1
    body = lines[start + 1 : last_content + 1]
    while body and _OPTION.match(body[0]):  # a reStructuredText directive's options come first
        body = body[1:]
    while body and not body[0].strip():
        body = body[1:]
    widths = [_indent_width(b) for b in body if b.strip()]
    return _dedent(body, min(widths) if widths else 0), last_content + 1


MAX_OPEN_DIRECTIVE_KINDS = 64  # distinct closing lines tracked at once (":::", "::::", "{{< /note >}}" …)


def _first_block_rule(line: str) -> tuple[MarkupRule, re.Match[str]] | None:
    if not _may_need_rules(line):
        return None
    for rule in _BLOCK_RULES:
        if match := rule.pattern.match(line):
            return rule, match
    return None


def _closer_for(rule: MarkupRule, match: re.Match[str]) -> re.Pattern[str]:
    groups = {k: re.escape(v or "") for k, v in match.groupdict().items()}
    return re.compile(rule.closer.format(**groups), re.I)


def _pair_directives(lines: list[str]) -> dict[int, int]:
    """Opening line → closing line of every directive closed by a line of its own (`:::`, `{{< /note >}}`).

    One pass with a stack per kind of closing line, so nested notes pair correctly and a file of a
    thousand unclosed openers costs no more than one of a thousand lines."""
    pairs: dict[int, int] = {}
    open_by_closer: dict[str, tuple[re.Pattern[str], list[int]]] = {}
    fence: _Fence | None = None
    for index, line in enumerate(lines):
        if fence is not None:
            if fence.closes(line):
                fence = None
            continue
        if opened := _fence_open(line):
            fence = _Fence(opened.group("marks")[0], len(opened.group("marks")))
            continue
        closed = False
        for closer, stack in open_by_closer.values():
            if stack and closer.match(line):
                pairs[stack.pop()] = index
                closed = True
                break
        if closed:
            continue
        found = _first_block_rule(line)
        if found and found[0].body == "closer":
            closer = _closer_for(*found)
            if closer.pattern in open_by_closer:
                open_by_closer[closer.pattern][1].append(index)
            elif len(open_by_closer) < MAX_OPEN_DIRECTIVE_KINDS:
                open_by_closer[closer.pattern] = (closer, [index])
    return pairs


def _note_kind_and_title(rule: MarkupRule, match: re.Match[str], body: list[str]) -> tuple[str, str, list[str]]:
    groups = match.groupdict()
    kind = groups.get("kind") or groups.get("name") or "note"
    title = (groups.get("title") or groups.get("title2") or "").strip()
    if rule.name == "rst-note":
        first = (groups.get("first") or "").strip()
        if kind.lower() == "admonition":
            title = first
        elif first:
            body = [first, *body]
    if rule.name == "hugo-note":
        args = groups.get("args") or ""
        named = dict(re.findall(r"(\w+)=[\"']([^\"'\n]*)[\"']", args))
        title = named.get("title", title)
        if kind.lower() in ("notice", "alert", "hint", "callout", "admonition"):
            bare = re.sub(r"\w+=[\"'][^\"'\n]*[\"']", " ", args).split()
            kind = next(
                (named[k] for k in ("type", "color", "theme", "kind", "context") if k in named),
                bare[0].strip("\"'") if bare else "note",
            )
    return kind, title, body


def _fence_for(body: list[str]) -> str:
    longest = max((len(m.group(0)) for line in body for m in re.finditer(r"`{3,}", line)), default=0)
    return "`" * max(3, longest + 1)


def _apply_block(
    rule: MarkupRule, match: re.Match[str], lines: list[str], index: int, depth: int, pairs: dict[int, int]
) -> tuple[int, list[str]]:
    """(lines consumed from `index`, lines written) for one directive."""
    indent = match.groupdict().get("indent") or ""
    title = (match.groupdict().get("title") or "").strip()
    if rule.body == "indented":
        body, end = _indented_body(lines, index, _indent_width(indent))
    elif index in pairs:
        body, end = _dedent(lines[index + 1 : pairs[index]], _indent_width(indent)), pairs[index] + 1
    elif rule.action == "tab" and title:
        return 1, ["", f"{indent}{title}", ""]  # a tab nobody closes: its label names what follows
    else:
        return 1, []  # an opener nobody closes: only the directive line goes
    consumed = end - index
    if rule.action == "drop":
        return consumed, [""]
    if rule.action == "code":
        fence = _fence_for(body)
        language = (match.groupdict().get("lang") or "").strip()
        return consumed, ["", f"{indent}{fence}{language}", *(f"{indent}{b}" for b in body), f"{indent}{fence}", ""]
    if rule.action == "content":
        head = ["", f"{indent}{title}", ""] if title else [""]
        return consumed, [*head, *(f"{indent}{b}" if b.strip() else "" for b in _nested(body, depth)), ""]
    if rule.action == "tab":
        return consumed, _tab(indent, title, body, depth)
    if rule.action == "tabs":
        return consumed, _brace_tabs(indent, body, depth)
    kind, title, body = _note_kind_and_title(rule, match, body)
    nested = _nested(body, depth)
    out = [f"{indent}> [!{kind.upper()}]" + (f" {title}" if title else "")]
    if title and nested:
        out.append(f"{indent}>")
    out += [f"{indent}> {b}" if b.strip() else f"{indent}>" for b in nested]
    return consumed, ["", *out, ""]


def _tab(indent: str, label: str, body: list[str], depth: int) -> list[str]:
    """A tab between its marker lines, which `resolve_tabs` reads (a tab with no label is its content alone)."""
    content = [f"{indent}{b}" if b.strip() else "" for b in _nested(body, depth)]
    if not label:
        return ["", *content, ""]
    return [tab_open(indent, label), "", *content, "", tab_end(indent)]


def _brace_tabs(indent: str, body: list[str], depth: int) -> list[str]:
    """`{start_tabs}`'s body: each `{tab|…}` line begins a tab that the next one, or the end, ends."""
    tab_line = RULES_BY_NAME["brace-tab"].pattern
    out: list[str] = []
    label, content = "", []
    for line, in_code in zip(body, fenced_code_lines(body)):
        found = None if in_code else tab_line.match(line)
        if found is None:
            content.append(line)
            continue
        out += _tab(indent, label, content, depth)
        label, content = brace_tab_label(found.group("label")), []
    return [*out, *_tab(indent, label, content, depth)]


def _nested(body: list[str], depth: int) -> list[str]:
    return rewrite_lines(body, depth + 1) if depth < MAX_DIRECTIVE_DEPTH else body


def _apply_line_rules(line: str) -> str | None:
    for rule in _LINE_RULES:
        if rule.action == "drop":
            if rule.pattern.match(line):
                return None
        elif rule.pattern.search(line):
            line = rule.pattern.sub(rule.replacement or "", line)
    return line


def rewrite_lines(lines: list[str], depth: int = 0) -> list[str]:
    """Directives and per-line markup rewritten as plain CommonMark; fenced code passes through untouched."""
    out: list[str] = []
    fence: _Fence | None = None
    pairs = _pair_directives(lines)
    index = 0
    while index < len(lines):
        line = lines[index]
        if fence is not None:
            out.append(line)
            if fence.closes(line):
                fence = None
            index += 1
            continue
        if opened := _fence_open(line):
            fence = _Fence(opened.group("marks")[0], len(opened.group("marks")))
            out.append(line)
            index += 1
            continue
        if not _may_need_rules(line):
            out.append(line)
            index += 1
            continue
        if found := _first_block_rule(line):
            consumed, written = _apply_block(*found, lines, index, depth, pairs)
            out.extend(written)
            index += consumed
            continue
        rewritten = _apply_line_rules(line)
        if rewritten is not None:
            out.extend(rewritten.split("\n"))
        index += 1
    return out


# --- tabs: a label line, or a heading level of its own ----------------------------------------------
_ATX_HEADING = re.compile(r"^(?P<indent> {0,3})(?P<hashes>#{1,6})(?=[ \t]|$)")
_UNDERLINE = re.compile(r"^ {0,3}(?P<marks>=+|-+)[ \t]*$")
_NOT_PARAGRAPH = re.compile(r"^[ \t]*(?:$|[-*+>#]|\d{1,9}[.)])")  # no text an underline could make a heading


def _tab_group(first: int, lines: list[str], markers: list, ends: dict[int, int]) -> list[int]:
    """The tabs shown side by side with the one opening on line `first`: each next one opens right after the
    last one's end (blank lines between), at the same indent."""
    group = [first]
    while group[-1] in ends:
        at = ends[group[-1]] + 1
        while at < len(lines) and not lines[at].strip():
            at += 1
        marker = markers[at] if at < len(lines) else None
        if marker is None or marker[1] is None or marker[0] != markers[first][0]:
            break
        group.append(at)
    return group


def resolve_tabs(lines: list[str]) -> list[str]:
    """Tabs as a reader gets them. Each tab's label names what sits in it: a label line above a tab's list (a
    walkthrough takes the list the employee names), or — when the content of a tab has headings of its own
    ("#### Disk image", "#### Homebrew") — a heading of the level between the enclosing heading and those, for
    every tab of the group, whose headings move one level down when they need to: "Install > macOS > Disk image"
    is a section that says which platform it is for, and the label never ends the section above it."""
    if not any(TAB_MARK in line for line in lines):
        return lines
    markers = [tab_marker(line) if TAB_MARK in line else None for line in lines]
    code = fenced_code_lines(lines)
    ends: dict[int, int] = {}  # a tab's opening marker line → its closing one
    opened: list[int] = []
    for index, marker in enumerate(markers):
        if marker is not None and marker[1] is not None:
            opened.append(index)
        elif marker is not None and opened:
            ends[opened.pop()] = index
    shift = [0] * len(lines)  # levels each heading moves down
    heading_level: dict[int, int] = {}  # a tab that is a heading → its level
    group_end: dict[int, int] = {}  # the closing marker of a group of headed tabs → the level the group is under
    decided: set[int] = set()
    level = 1  # the heading the text so far is under (the title's before any)
    out: list[str] = []
    for index, line in enumerate(lines):
        marker = markers[index]
        if marker is not None:
            indent, label = marker
            if label is None:  # a tab's end
                out.append("")
                level = group_end.get(index, level)
                continue
            if index not in decided:
                group = _tab_group(index, lines, markers, ends)
                decided.update(group)
                last = ends.get(group[-1])
                levels = [
                    len(found.group("hashes")) + shift[at]
                    for at in range(index, last if last is not None else index)
                    if not code[at] and markers[at] is None and (found := _ATX_HEADING.match(lines[at]))
                ]
                if last is not None and levels and level < 6 and _indent_width(indent) <= 3:
                    down = max(0, level + 2 - min(levels))
                    for at in range(index, last + 1):
                        shift[at] += down
                    heading_level.update((tab, level + 1) for tab in group)
                    group_end[last] = level
            if index in heading_level:
                level = heading_level[index]
                out += ["", f"{'#' * level} {label}", ""]
            else:
                out += ["", f"{indent}{label}", ""]
            continue
        if not code[index]:
            if found := _ATX_HEADING.match(line):
                moved = min(6, len(found.group("hashes")) + shift[index])
                line = f"{found.group('indent')}{'#' * moved}{line[found.end() :]}"
                level = moved
            elif (underline := _UNDERLINE.match(line)) and out and not _NOT_PARAGRAPH.match(out[-1]):
                level = 1 if underline.group("marks")[0] == "=" else 2
        out.append(line)
    return out


def normalise_source(text: str) -> tuple[str, str]:
    """(the text as plain CommonMark, the front matter's title or "")."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").replace(TAB_MARK, "")
    lines, title = split_front_matter(text.split("\n"))
    return "\n".join(resolve_tabs(rewrite_lines(lines))), title


# --- inline Markdown → text ------------------------------------------------------------------------
_UNSAFE_LINK = re.compile(r"^\s*(?:javascript|vbscript|livescript|mocha|data|file)\s*:", re.I)
_ABSOLUTE_LINK = re.compile(r"^(?:https?|ftp)://\S|^mailto:\S", re.I)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_ESCAPED = re.compile(r"\x01(\d{1,7})\x01")
# a UNC path written outside code (\\server\share): the author meant both backslashes, not an escaped one
_UNC_PATH = re.compile(r"(?<![\\\w])\\\\(?=\w[\w.$-]{0,253}\\)")
_CODE_SLOT = re.compile(r"\x02(\d{1,6})\x02")
# a label may wrap onto the next line, and so may the space before a link's closing parenthesis; labels
# hold no brackets, which keeps every search linear
_IMAGE = re.compile(r"!\[([^\[\]]{0,1000})\]\(([^)\n]{0,2000})\s?\)")
_LINK = re.compile(r"\[([^\[\]]{0,1000})\]\(((?:[^()\n]|\([^()\n]{0,500}\)){0,2000})\s?\)")
_REFERENCE_LINK = re.compile(r"\[([^\[\]]{0,1000})\]\[([^\[\]]{0,500})\]")
_AUTOLINK = re.compile(r"<((?:[a-zA-Z][a-zA-Z0-9+.-]{1,31}):[^<>\s]{0,2000})>|<([\w.+-]{1,64}@[\w.-]{1,255})>")
# inline HTML a Markdown reader never sees as text (<kbd>Ctrl</kbd> reads "Ctrl", <a id="x"></a> nothing);
# `<username>` and `<server name>` are not HTML and stay
_HTML_TAG = re.compile(
    r"</?(?:a|abbr|b|big|cite|code|del|dfn|div|em|font|i|img|ins|kbd|mark|p|q|s|samp|small|"
    r"span|strike|strong|sub|sup|tt|u|var|center|hr|details|summary|section|nobr|wbr)"
    r"(?:\s(?:[^<>\"']|\"[^\"]{0,1000}\"|'[^']{0,1000}'){0,1000})?\s*/?>",
    re.I,
)
# "the **checkmark** (<img …>) button": the image goes, and so do the parentheses it leaves empty
_TAGS_IN_PARENTHESES = re.compile(r"[ \t]?\(\s{0,20}(?:(?:" + _HTML_TAG.pattern + r")\s{0,20}){1,5}\)", re.I)
_LINE_BREAK = re.compile(r"<br\s*/?>|\\\n", re.I)
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.{1,2000}?)(?<=\S)\1")
# the marker comes first and the look-behind after it, so the search skips ahead to the next '*' or '_'
_EMPHASIS = re.compile(
    r"\*(?<![\w*\\]\*)(?=[^\s*])([^*\n]{1,2000}?)(?<=[^\s*])\*(?![\w*])"
    r"|_(?<![\w\\]_)(?=[^\s_])([^_\n]{1,2000}?)(?<=[^\s_])_(?!\w)"
)
_STRIKE = re.compile(r"~~(?=\S)([^~\n]{1,2000}?)(?<=\S)~~")


def _link_target(target: str) -> str:
    """A link's address without its title ("url "title"" → url)."""
    target = target.strip()
    if target.startswith("<") and ">" in target:
        return target[1 : target.index(">")]
    return target.split(maxsplit=1)[0] if target else ""


def _with_target(label: str, target: str) -> str:
    """Link text as read: the label, and the address only when a reader can follow it (absolute, safe)."""
    label = label.strip()
    if not label or not target or _UNSAFE_LINK.match(target) or not _ABSOLUTE_LINK.match(target):
        return label  # a page of the same site (`../x.md`, `#tab/linux`, `/docs/y`) means nothing in an answer;
        # a link with no text (around an icon that is gone) reads as nothing
    if target.rstrip("/") in label:
        return label
    return f"{label} ({target})"


def reference_key(label: str) -> str:
    """How a link reference label is matched ("[Portal] [portal]" alike)."""
    return " ".join(label.split()).casefold()


MAX_CODE_SPAN = 2000


def _set_aside_code(text: str, spans: list[str]) -> str:
    """`text` with each code span replaced by a slot (its content appended to `spans`) and each escaped backtick
    outside code by its placeholder, read left to right as CommonMark does: a run of backticks opens a span that the
    next run of the same length closes (on the same line), and inside a span a backslash is
    itself — so a span may end in one ("`C:\\users\\`")."""
    out: list[str] = []
    at, n = 0, len(text)
    while at < n:
        char = text[at]
        if char == "\\" and at + 1 < n and text[at + 1] == "`":
            out.append(f"\x01{ord('`')}\x01")
            at += 2
            continue
        if char != "`":
            out.append(char)
            at += 1
            continue
        run = len(text[at:]) - len(text[at:].lstrip("`"))
        fence = "`" * run
        start = at + run
        close = start
        while True:
            close = text.find(fence, close)
            if close == -1 or close - start > MAX_CODE_SPAN:
                close = -1
                break
            if text[close + run : close + run + 1] != "`":  # exactly as long as the opening run
                break
            close += len(text[close:]) - len(text[close:].lstrip("`"))
        content = text[start:close] if close != -1 else ""
        if close == -1 or not content.strip() or "\n" in content:
            out.append(fence)  # no span: the backticks are text
            at = start
            continue
        spans.append(content.strip())
        out.append(f"\x02{len(spans) - 1}\x02")
        at = close + run
    return "".join(out)


def clean_inline(text: str, references: Mapping[str, str] | None = None) -> str:
    """One paragraph's inline Markdown as the plain text a reader sees; entities decoded.

    `references`: link reference definitions ("[portal]: https://…"), keyed by `reference_key`."""
    if not text:
        return ""
    text = text.replace("\x00", "").replace("\x01", "").replace("\x02", "")
    for rule in _TEXT_RULES:  # reStructuredText roles carry backticks: before code spans are set aside
        if rule.name != "html-entity":
            text = rule.pattern.sub(rule.replacement or "", text)
    # code is literal: the spans are set aside before the escapes are read, so "`\\server\share`" keeps both
    # leading backslashes and "`C:\users\<name>\`" its last one; outside code an escaped backtick opens no span
    spans: list[str] = []
    text = _set_aside_code(text, spans)
    text = _UNC_PATH.sub(lambda m: "\x0192\x01\x0192\x01", text)
    text = _ESCAPE.sub(lambda m: f"\x01{ord(m.group(1))}\x01", text)
    text = _IMAGE.sub(lambda m: image_text(m.group(1)), text)
    text = _LINK.sub(lambda m: _with_target(m.group(1), _link_target(m.group(2))), text)
    text = _IMAGE.sub(lambda m: image_text(m.group(1)), text)  # an image whose alt text held a link
    if references:
        text = _REFERENCE_LINK.sub(
            lambda m: _with_target(m.group(1), references.get(reference_key(m.group(2) or m.group(1)), "")), text
        )
    text = _AUTOLINK.sub(
        lambda m: "" if m.group(1) and _UNSAFE_LINK.match(m.group(1)) else m.group(1) or m.group(2), text
    )
    text = _LINE_BREAK.sub(" ", text)
    text = _TAGS_IN_PARENTHESES.sub("", text)
    text = _HTML_TAG.sub("", text)
    text = _STRONG.sub(r"\2", text)
    text = _EMPHASIS.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)
    text = _STRIKE.sub(r"\1", text)
    text = RULES_BY_NAME["html-entity"].pattern.sub(RULES_BY_NAME["html-entity"].replacement or "", text)
    text = _CODE_SLOT.sub(lambda m: spans[int(m.group(1))] if int(m.group(1)) < len(spans) else "", text)
    text = _ESCAPED.sub(lambda m: chr(int(m.group(1))) if int(m.group(1)) < 0x110000 else "", text)
    return re.sub(r"\s+", " ", text).strip()


# --- alerts ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Alert:
    label: str  # "Note", "Warning" (a title that is itself a label, "Information", reads as one: "Info")
    title: str  # a longer title, read as the note's headline; "" when none
    body: str  # the raw text after the marker line


def split_alert(raw: str) -> Alert | None:
    """A paragraph that opens with an alert marker (`[!NOTE]`, `[!WARNING] Title`) and what follows it."""
    found = _ALERT.match(raw.lstrip())
    if not found:
        return None
    label = note_label(found.group("kind"))
    title = clean_inline(found.group("title")).rstrip(":").strip()
    if title.casefold() in NOTE_LABELS:  # "> [!CAUTION] Caution", "> [!NOTE] Information": a label, not a title
        label, title = note_label(title), ""
    return Alert(label=label, title=title, body=raw.lstrip()[found.end() :])
