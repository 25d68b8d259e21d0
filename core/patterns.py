"""Regular expressions compiled the first time they are used instead of when their module is imported.

A rule table of a few dozen large patterns costs tens of milliseconds to compile, and every module imported by
the API app is imported before the service can start; the patterns only a chat message needs (dialogue acts,
injection signals) are compiled by the first message that reaches them. `LazyPattern` answers like the compiled
`re.Pattern` for the methods the rules use; `Regex` is either."""

from __future__ import annotations

import re
import sys
from typing import Any, Callable, Iterator, Union

_END = sys.maxsize


class LazyPattern:
    """`re.compile(source, flags)`, done at the first search, match, sub, … (the same object from then on)."""

    __slots__ = ("_source", "_flags", "_compiled")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source, self._flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:  # (two threads at once both compile it: the same pattern, and one is kept)
            compiled = self._compiled = re.compile(self._source, self._flags)
        return compiled

    @property
    def is_compiled(self) -> bool:
        return self._compiled is not None

    @property
    def pattern(self) -> str:
        return self._source

    @property
    def flags(self) -> int:
        return self.compiled.flags

    def search(self, string: str, pos: int = 0, endpos: int = _END) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = _END) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = _END) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = _END) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = _END) -> list[Any]:
        return self.compiled.findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[Any]:
        return self.compiled.split(string, maxsplit)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[:60]!r}{'…' if len(self._source) > 60 else ''}, {self._flags})"


Regex = Union["re.Pattern[str]", LazyPattern]
