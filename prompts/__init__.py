"""Prompt templates, versioned with the code. `${name}` placeholders; see each .txt file."""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template


@cache
def load(name: str) -> Template:
    """The template `prompts/<name>.txt` (read once, on first use)."""
    return Template(resources.files(__name__).joinpath(f"{name}.txt").read_text(encoding="utf-8"))


def render(name: str, **values: object) -> str:
    """Fill a template; a missing placeholder is a bug, so it raises KeyError."""
    return load(name).substitute({k: str(v) for k, v in values.items()})
