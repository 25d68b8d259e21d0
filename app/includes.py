"""Includes: an article that pulls in a shared fragment gets the fragment's text in its place.

Docs sites keep repeated text (a disclaimer, a deprecation note, "boot a live USB first") in fragment
files and include them: Microsoft Learn `[!INCLUDE [label](../../includes/x.md)]`, MkDocs snippets
`--8<-- "x.md"`, MDX `import X from './x.md'` with `<X />`, reStructuredText `.. include:: x.rst`, and the
brace macro `{!x.md!}` of Markdown help centres built on Python-Markdown include extensions.
Parsing runs in a sandboxed worker that sees one file's bytes, so includes are resolved before, where
the set of files is known — a folder given to `deskmate ingest`, the bundled knowledge base, or a
single upload (which can only include itself, so its includes are left out with a warning).

The rules, and why:
- **By file name, within the batch.** A link is looked up among the batch's own files, never on disk,
  so an include cannot read anything outside the folder it came with. Only its last folder counts
  (`../../../includes/x.md` is an `x.md` in a folder called `includes`, wherever that sits in the batch:
  sites move their include folders about); a link with no folder takes any `x.md`. An article that
  merely shares the name (`factoids/specify.md` for `_includes/embeds/specify.md`) is not taken.
- **Nested, bounded.** A fragment's own includes are expanded too, up to `MAX_INCLUDE_DEPTH` levels (help
  centres nest tip inside step inside tab); a file is never expanded inside itself, so a cycle stops.
- **A fragment is not an article.** A file reached through includes from an article of the batch (a file
  no other file of the batch includes), within the depth the expansion goes, is indexed only inside the
  articles that include it: on its own it would be a context-free duplicate ("Third-party information
  disclaimer" answering a question). So is a file nobody includes that sits in a fragment folder of the
  batch (named `includes/`, `_includes/`, `partials/`, `snippets/`, … and holding at least one fragment the
  batch includes): it is a fragment of a page that was not uploaded, and alone it answers nothing well.
  A file in such a folder when nothing in the batch includes from it stays an article, and so do files
  that only include each other.
- **Unresolved includes are left out**, with a warning in the log; the parser drops their syntax.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable, Mapping
from urllib.parse import unquote

from app.adapters.markup import fenced_code_lines, split_front_matter
from app.adapters.parsers import MAX_TEXT_CHARS, decode_text
from core.errors import DocumentRejected

log = logging.getLogger(__name__)

# folders docs-as-code sites keep fragments in (Microsoft Learn and help centres, Jekyll, Hugo, MkDocs, GitHub Docs)
FRAGMENT_FOLDER_NAMES = frozenset(
    {"include", "includes", "_include", "_includes", "partials", "_partials", "snippets", "_snippets", "reusables"}
)
MAX_INCLUDE_DEPTH = 5  # levels of includes inside includes that are expanded
INCLUDING_EXTENSIONS = (".md", ".markdown", ".mdx", ".txt", ".text")  # files whose includes are resolved
MAX_SCANNED_BYTES = 20 * 1024 * 1024  # a bigger file is not scanned for includes (nor included)


@dataclass(frozen=True)
class IncludeSyntax:
    """One way of including a file: `pattern` finds the target (`target`, or an MDX `component`)."""

    name: str
    pattern: re.Pattern[str]
    matches: tuple[str, ...]
    not_matches: tuple[str, ...]
    whole_line: bool = True  # False: may also sit inside a sentence (the fragment is then read as one line)
    literal: str = ""  # a string every match contains: a line without it is not searched (long indented lines)


SYNTAXES: tuple[IncludeSyntax, ...] = (
    IncludeSyntax(
        "docfx",
        re.compile(r"\[!INCLUDE\s*\[[^\]\n]*\]\((?P<target>[^)\s]+)\s*\)\]", re.I),
        matches=(
            "[!INCLUDE [Disclaimer](../../../includes/third-party-disclaimer.md)]",
            "> [!include[note](~/includes/note.md)]",
        ),
        not_matches=("[Include files](includes.md)", "[!NOTE]"),
        whole_line=False,
    ),
    IncludeSyntax(
        "mkdocs-snippet",
        re.compile(r"^(?P<prefix>[ \t>]*)-{1,3}8<-{1,3}[ \t]+[\"'](?P<target>[^\"'\n]+)[\"'][ \t]*$"),
        matches=('--8<-- "includes/abbreviations.md"', "    --8<-- 'warning.md'"),
        not_matches=("--8<--", 'see --8<-- "x.md" here'),
        literal="8<",
    ),
    IncludeSyntax(
        "rst-include",
        re.compile(r"^(?P<prefix>[ \t]*)\.\.[ \t]+include::[ \t]+(?P<target>\S+)[ \t]*$"),
        matches=(".. include:: ../common/vpn-note.rst", "   .. include:: note.md"),
        not_matches=(".. literalinclude:: x.py", "include:: x.md"),
        literal="include::",
    ),
    IncludeSyntax(
        "brace-include",
        re.compile(r"^(?P<prefix>[ \t>]*)\{!(?P<target>[\w./-]+)!\}[ \t]*$"),
        matches=("{!enable-notifications.md!}", "    {!go-to-the.md!}", "{!include/tip.md!}"),
        not_matches=("{start_tabs}", "text {!x.md!} text", "{! x.md !}", "{{x.md}}"),
    ),
    IncludeSyntax(
        "mdx-component",
        re.compile(r"^(?P<prefix>[ \t>]*)<(?P<component>[A-Z]\w*)[ \t]*/>[ \t]*$"),
        matches=("<UseLiveSession />", "  <DataRecoveryWarning/>"),
        not_matches=('<DirectoryLinks directory="backups" />', "<br />"),
        literal="/>",
    ),
)
_SYNTAX = {syntax.name: syntax for syntax in SYNTAXES}
# MDX: which component is which file ("import Warning from '../_includes/warning.md'")
MDX_IMPORT = re.compile(
    r"^import[ \t]+(?P<component>[A-Z]\w*)[ \t]+from[ \t]+[\"'](?P<target>[^\"'\n]+\.mdx?)[\"'];?[ \t]*$"
)


def target_file_name(target: str) -> str:
    """The file name a link names: folders, `#anchor`, `?query`, `:lines` and URL escapes dropped."""
    target = unquote(target.split("#", 1)[0].split("?", 1)[0]).replace("\\", "/")
    name = PurePosixPath(target).name
    if ":" in name and "." in name.split(":", 1)[0]:  # MkDocs snippet sections and line ranges
        name = name.split(":", 1)[0]
    return name


@dataclass(frozen=True)
class _Reference:
    line: int
    syntax: str
    target: str  # as written
    start: int = 0  # span of an inline reference in its line
    end: int = 0


def _references(lines: list[str]) -> list[_Reference]:
    """Every include in `lines` outside fenced code, in order."""
    found: list[_Reference] = []
    fenced = fenced_code_lines(lines)
    components = {
        m.group("component"): m.group("target")
        for line in lines
        if line.startswith("import") and (m := MDX_IMPORT.match(line))
    }
    for number, line in enumerate(lines):
        if fenced[number]:
            continue
        for syntax in SYNTAXES:
            if syntax.literal not in line:
                continue
            if syntax.name == "mdx-component":
                match = syntax.pattern.match(line) if components else None
                if match and match.group("component") in components:
                    found.append(_Reference(number, syntax.name, components[match.group("component")]))
            elif syntax.whole_line:
                if match := syntax.pattern.match(line):
                    found.append(_Reference(number, syntax.name, match.group("target")))
            else:
                found += [
                    _Reference(number, syntax.name, m.group("target"), m.start(), m.end())
                    for m in syntax.pattern.finditer(line)
                ]
    return found


def _text_lines(data: bytes, name: str) -> list[str] | None:
    try:
        text = decode_text(data, name)
    except DocumentRejected:  # not text: the parser says so when it reads the file; nothing to include here
        return None
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _file_reader(path: Path) -> Callable[[], bytes]:
    """Reads the file when asked (nothing when it is too large to be scanned)."""
    return lambda: path.read_bytes() if path.stat().st_size <= MAX_SCANNED_BYTES else b""


def _bytes_reader(data: bytes) -> Callable[[], bytes]:
    return lambda: data


class IncludeResolver:
    """Resolves includes among one batch of files, named by their sources ("kb/guides/vpn.md")."""

    def __init__(self, files: Mapping[str, Callable[[], bytes]]) -> None:
        self._read = dict(files)
        self._by_file_name: dict[str, list[str]] = {}
        for name in self._read:
            self._by_file_name.setdefault(PurePosixPath(name).name.casefold(), []).append(name)
        self._fragment_lines: dict[str, list[str] | None] = {}
        included_by: dict[str, set[str]] = {}
        for name in self._read:
            if not name.lower().endswith(INCLUDING_EXTENSIONS):
                continue
            lines = self._lines_of(name)
            for reference in _references(lines or []):
                target = self.find(reference.target, name)
                if target is not None and target != name:
                    included_by.setdefault(target, set()).add(name)
        includes: dict[str, set[str]] = {}
        for target, includers in included_by.items():
            for includer in includers:
                includes.setdefault(includer, set()).add(target)
        # everything the expansion of an article reaches is read inside it
        reached: set[str] = set()
        frontier = {name for name in self._read if name not in included_by}
        for _ in range(MAX_INCLUDE_DEPTH):
            frontier = {t for name in frontier for t in includes.get(name, ())} - reached
            reached |= frontier
        # a file nobody includes, in a folder the batch keeps its fragments in (a conventional name, and at least
        # one of its files included here): a fragment the uploaded pages do not use, never an article of its own
        fragment_folders = {
            PurePosixPath(name).parent
            for name in reached
            if PurePosixPath(name).parent.name.casefold() in FRAGMENT_FOLDER_NAMES
        }
        unused = {
            name for name in self._read if name not in included_by and PurePosixPath(name).parent in fragment_folders
        }
        self._fragments = reached | unused

    @classmethod
    def from_paths(cls, files: Mapping[str, Path]) -> IncludeResolver:
        return cls({name: _file_reader(path) for name, path in files.items()})

    @classmethod
    def from_bytes(cls, files: Mapping[str, bytes]) -> IncludeResolver:
        return cls({name: _bytes_reader(data) for name, data in files.items()})

    def _lines_of(self, name: str) -> list[str] | None:
        data = self._read[name]()
        return _text_lines(data, name) if data and len(data) <= MAX_SCANNED_BYTES else None

    def find(self, target: str, including: str) -> str | None:
        """The batch file a link names, by file name (and the folder it sits in, when the link names one)."""
        candidates = self._by_file_name.get(target_file_name(target).casefold(), [])
        wanted = [p for p in PurePosixPath(unquote(target).replace("\\", "/")).parts[:-1] if p not in ("..", ".", "~")]
        if wanted:  # "../includes/x.md" is an x.md in a folder called includes, not any x.md of the batch
            candidates = [c for c in candidates if PurePosixPath(c).parent.name.casefold() == wanted[-1].casefold()]
        if len(candidates) <= 1:
            return candidates[0] if candidates else None

        def shared_folders(candidate: str) -> int:
            folders = PurePosixPath(candidate).parts[:-1]
            count = 0
            while count < min(len(folders), len(wanted)) and folders[-1 - count] == wanted[-1 - count]:
                count += 1
            return count

        return min(candidates, key=lambda c: (-shared_folders(c), c))

    def is_fragment(self, name: str) -> bool:
        """Whether `name` is only a fragment other articles of the batch include (so not indexed alone)."""
        return name in self._fragments

    def _fragment(self, name: str) -> list[str] | None:
        if name not in self._fragment_lines:
            lines = self._lines_of(name)
            if lines is not None:
                lines, _ = split_front_matter(lines)  # a fragment's own metadata is not text
                while lines and not lines[0].strip():
                    lines = lines[1:]
                while lines and not lines[-1].strip():
                    lines = lines[:-1]
            self._fragment_lines[name] = lines
        return self._fragment_lines[name]

    def expand(self, name: str, data: bytes) -> bytes:
        """`data` with every resolvable include replaced by its fragment's text (unchanged if none resolves)."""
        if not name.lower().endswith(INCLUDING_EXTENSIONS) or len(data) > MAX_SCANNED_BYTES:
            return data
        lines = _text_lines(data, name)
        if not _references(lines or []):
            return data
        budget = [MAX_TEXT_CHARS - len(data)]
        expanded = self._expand_lines(name, lines or [], (name,), budget)
        return data if expanded is None else "\n".join(expanded).encode("utf-8")

    def _expand_lines(
        self, name: str, lines: list[str], within: tuple[str, ...], budget: list[int]
    ) -> list[str] | None:
        """`lines` with their includes replaced, fragments' own includes too, up to MAX_INCLUDE_DEPTH levels
        (`within`: the files being expanded, outermost first, never expanded again); None if nothing resolved."""
        replaced: dict[int, list[str]] = {}
        inline: dict[int, list[tuple[int, int, str]]] = {}
        for reference in _references(lines):
            target = self.find(reference.target, name)
            if target is not None and target in within:
                continue  # a file inside itself: a cycle, or the article naming its own file
            fragment = self._fragment(target) if target is not None else None
            if (
                fragment is not None
                and target is not None
                and len(within) < MAX_INCLUDE_DEPTH
                and target.lower().endswith(INCLUDING_EXTENSIONS)
            ):
                fragment = self._expand_lines(target, fragment, (*within, target), budget) or fragment
            size = sum(len(line) + 1 for line in fragment) if fragment else 0
            if fragment is None or size > budget[0]:
                why = "it is not in this batch" if fragment is None else "the article would grow too large"
                log.warning("%s: include of %s left out: %s", within[0], target_file_name(reference.target), why)
                continue
            budget[0] -= size
            line = lines[reference.line]
            if _SYNTAX[reference.syntax].whole_line:
                whole = _SYNTAX[reference.syntax].pattern.match(line)
                assert whole is not None  # _references found this very line with this pattern
                prefix = whole.group("prefix")
            elif line[: reference.start].strip(" \t>") == "" and not line[reference.end :].strip():
                prefix = line[: reference.start]  # alone on its line (under a step, inside a quote): as a block
            else:  # inside a sentence: the fragment as one line
                flat = " ".join(part.strip() for part in fragment if part.strip())
                inline.setdefault(reference.line, []).append((reference.start, reference.end, flat))
                continue
            # each fragment line carries the include's indentation and quote markers, so it stays where it was
            replaced[reference.line] = [f"{prefix}{f}".rstrip() or prefix.rstrip() for f in fragment]
        if not replaced and not inline:
            return None
        out: list[str] = []
        for number, line in enumerate(lines):
            if number in replaced:
                out.extend(replaced[number])
                continue
            for start, end, text in sorted(inline.get(number, []), reverse=True):
                line = line[:start] + text + line[end:]
            out.append(line)
        return out
