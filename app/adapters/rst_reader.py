"""reStructuredText → HTML by docutils, with what Sphinx sites add turned into plain sections.

docutils runs with file insertion and raw passthrough off (`.. include::`, `.. raw::`, `:file:` options
never read the disk or pass markup through), no configuration files and no reports in the output. Sphinx
and extension directives that docutils does not know (tabs, `seealso`, `versionadded`, `literalinclude` …)
would otherwise be lost as errors: each becomes a labelled block of its content (tabs keep their label as
a line of their own), and files they would pull in are left out. Unknown roles (`:ref:`, `:doc:`,
`:kbd:`) keep their visible text. Admonition titles join their first paragraph ("Note: …").
"""

from __future__ import annotations

import re

from app.adapters.markup_rules import note_label

_DIRECTIVE = re.compile(r"^[ \t]*\.\.[ \t]+([A-Za-z][\w:.+-]{0,60})::", re.M)
_ROLE = re.compile(r":([A-Za-z][\w:.+-]{0,60}):`")
# the title before a role's `<target>`; its trailing spaces are stripped in code (a lazy title followed by `\s*`
# is quadratic on a long run of spaces)
_EXPLICIT_TARGET = re.compile(r"^(.*)<[^<>]*>$", re.S)
# directives that only pull in files, build navigation or render nothing a reader needs
_DROPPED = {
    "toctree",
    "literalinclude",
    "autosummary",
    "automodule",
    "autoclass",
    "autofunction",
    "index",
    "highlight",
    "currentmodule",
    "module",
    "sectionauthor",
    "codeauthor",
    "only",
    "ifconfig",
    "spelling",
}
# their argument is a tab or panel label: a line of its own, then the content
_LABELLED = {
    "tab",
    "group-tab",
    "code-tab",
    "tab-item",
    "dropdown",
    "card",
    "tabs",
    "tab-set",
    "grid",
    "grid-item",
    "grid-item-card",
    "container",
    "versionadded",
    "versionchanged",
    "deprecated",
    "glossary",
    "hlist",
    "centered",
    "rubric",
}
_SETTINGS = {
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "report_level": 5,
    "halt_level": 5,
    "warning_stream": False,
    "_disable_config": True,
    "input_encoding": "unicode",
    "output_encoding": "unicode",
    "embed_stylesheet": False,
    "stylesheet_path": "",
    "syntax_highlight": "none",
    "doctitle_xform": True,
    "sectsubtitle_xform": False,
    "character_level_inline_markup": False,
    "traceback": True,
    "math_output": "html",
}
MAX_NESTING = 32


def _generic_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    from docutils import nodes

    target = _EXPLICIT_TARGET.match(text)  # :ref:`Reset a password <reset-password>` shows its title
    title = target.group(1).rstrip() if target else ""
    return [nodes.Text(title or text.lstrip("~!"))], []


def _generic_directive():
    from docutils import nodes
    from docutils.parsers.rst import Directive

    class Generic(Directive):
        """Any directive docutils does not know: its content as plain blocks, labelled when that helps."""

        optional_arguments = 1
        final_argument_whitespace = True
        has_content = True
        option_spec = None  # accept and ignore any option

        def run(self):
            name = self.name.split(":")[-1].lower()
            if name in _DROPPED or self.state.memo.section_level > MAX_NESTING:
                return []
            container = nodes.container()
            label = self.arguments[0].strip() if self.arguments else ""
            if name in ("versionadded", "versionchanged", "deprecated"):
                label = f"{note_label(name.replace('version', 'version '))} {label}".strip()
            elif name not in _LABELLED:
                label = note_label(name) if not label else f"{note_label(name)}: {label}"
            if name.endswith("code-block") or name in ("sourcecode", "code-block", "prompt", "console"):
                return [nodes.literal_block("\n".join(self.content), "\n".join(self.content))]
            if label:
                container += nodes.paragraph(label, label, classes=["admonition-title"])
            self.state.nested_parse(self.content, self.content_offset, container)
            return [container]

    return Generic


def _register_unknown(text: str) -> None:
    from docutils.parsers.rst import directives, roles
    from docutils.parsers.rst.languages import en

    generic = None
    for name in set(_DIRECTIVE.findall(text)):
        known = name in directives._directives or name in directives._directive_registry or name in en.directives
        if not known:
            generic = generic or _generic_directive()
            directives.register_directive(name, generic)
    for name in set(_ROLE.findall(text)):
        if name not in roles._roles and name not in roles._role_registry and name not in en.roles:
            roles.register_local_role(name, _generic_role)


def rst_to_html(text: str) -> str:
    """The document's HTML body (docutils html5 writer); titles and admonition labels kept as text."""
    from docutils.core import publish_parts

    _register_unknown(text)
    parts = publish_parts(source=text, writer="html5", settings_overrides=_SETTINGS)
    title = parts.get("title") or ""
    body = parts.get("body") or ""
    html = (f"<h1>{title}</h1>" if title else "") + body
    return _label_admonitions(html)


def _label_admonitions(html: str) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for label in soup.select("p.admonition-title"):
        following = label.find_next_sibling()
        text = label.get_text(" ", strip=True)
        if following is not None and following.name == "p":
            following.insert(0, f"{text}: ")
            label.decompose()
        elif following is not None:
            label.string = f"{text}:"
    for span in soup.find_all("span"):  # docutils wraps inline literals and roles in spans: they are inline
        span.unwrap()
    for rubric in soup.select("p.rubric"):
        rubric.name = "h4"
    return str(soup)
