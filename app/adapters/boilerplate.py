"""Boilerplate that knowledge-base pages carry around their content, one rule per row, with examples.

Support sites wrap every article in the same furniture: a KB number and an "applies to" line at the top,
"Still need help? Go to …" and "Was this page helpful?" at the bottom, and sentences that point at a picture
the reader of a chat reply never sees ("as shown in the following screenshot"). None of it answers anything,
and quoted in a reply it reads as noise ("This matches: Original KB number: 2962513"). These rules run on every
parsed document, whatever its format (app/adapters/parsers.py, `sanitise_document`).

Two kinds of row:
- `block` — a paragraph (or list item) that is nothing but boilerplate is dropped;
- `phrase` — a clause or sentence inside a paragraph is cut, the rest of the paragraph kept.

Rules name the shape of the furniture, never a product: "Go to <any> Community" is a pattern, not a site.
Quoted error messages, paths and commands are never touched: no rule matches inside them.
`matches` must be removed (block) or changed (phrase); `keeps` must be left exactly as they are;
`renders` are (paragraph, text after the rules) pairs. tests/unit/test_boilerplate.py runs every example.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_PICTURE = r"(?:screen\s?shots?|screen\s?captures?|figures?|images?|pictures?|illustrations?|diagrams?|graphics?)"
_WHERE = r"(?:following|next|below|preceding|previous|above)"


@dataclass(frozen=True)
class BoilerplateRule:
    name: str
    kind: Literal["block", "phrase"]
    pattern: re.Pattern[str]
    matches: tuple[str, ...]
    keeps: tuple[str, ...]
    replacement: str = ""
    renders: tuple[tuple[str, str], ...] = ()


RULES: tuple[BoilerplateRule, ...] = (
    BoilerplateRule(
        "kb-number",
        "block",
        re.compile(
            r"^(?:original\s+)?(?:KB|knowledge\s+base)\s+(?:article\s+)?(?:numbers?|ids?|#)\s*:?\s*[\w-]{2,20}"
            r"(?:\s*[,;]\s*[\w-]{2,20})*\s*\.?$",
            re.I,
        ),
        matches=("Original KB number: 2962513", "KB article ID: KB0012345", "Knowledge base number: 4023, 4024"),
        keeps=("Install KB number 5034441 before you start.", "The KB number is printed on the update."),
    ),
    BoilerplateRule(
        "applies-to",
        "block",
        re.compile(r"^(?:applies\s+to|original\s+product\s+versions?|products?\s+affected)\s*:\s*\S.{0,400}$", re.I),
        matches=("Applies to: Windows 11, Windows 10", "Original product version: Outlook 2016", "Applies to:  Excel"),
        keeps=("This setting applies to every mailbox.", "Applies to all users: restart the client."),
    ),
    BoilerplateRule(
        "still-need-help",
        "block",
        re.compile(
            r"^(?:still\s+need\s+help|need\s+more\s+help|can'?t\s+find\s+what\s+you'?re\s+looking\s+for)\s*\??\s*"
            r"(?:(?:go\s+to|visit|ask|contact|post\s+(?:in|on)|try)\b.{0,200})?$",
            re.I,
        ),
        matches=(
            "Still need help? Go to Microsoft Community.",
            "Still need help? Go to SharePoint Community (https://techcommunity.example/sharepoint).",
            "Need more help? Contact your admin.",
            "Still need help?",
        ),
        keeps=("If you still need help, open a ticket with the error text.",),
    ),
    BoilerplateRule(
        "feedback-prompt",
        "block",
        re.compile(
            r"^(?:was\s+this\s+(?:page|article|information|answer|topic)\s+(?:helpful|useful)|"
            r"did\s+this\s+(?:page|article|information)\s+(?:help|solve\s+your\s+problem)|"
            r"(?:rate|give\s+feedback\s+on)\s+this\s+(?:page|article)|"
            r"(?:we|i)\s+(?:want|would\s+love)\s+to\s+hear\s+(?:from\s+you|your\s+feedback)|"
            r"(?:is|was)\s+this\s+(?:page|article)\s+(?:helpful|useful))\b.{0,200}$|"
            r"^(?:send|give|leave)\s+(?:us\s+)?feedback\s*[.!]?$",
            re.I,
        ),
        matches=(
            "Was this page helpful? Yes No",
            "Send feedback",
            "Did this article help? Let us know.",
            "We want to hear from you! Post your ideas in the feedback forum.",
        ),
        keeps=("Send feedback from the app: Help > Send feedback, then describe the problem.",),
    ),
    # --- references to a picture the reader does not see --------------------------------------------------
    BoilerplateRule(
        "picture-sentence",
        "phrase",
        # "The following screenshot shows this option in Excel." / "See the following figure."
        re.compile(
            rf"(?:(?<=[.!?:])\s+|^)(?:(?:the|this)\s+(?:{_WHERE}\s+)?{_PICTURE}\s+(?:{_WHERE}\s+)?"
            rf"(?:shows?|illustrates?|displays?|depicts?)|(?:see|refer\s+to)\s+the\s+{_WHERE}\s+{_PICTURE})"
            r"\b[^.!?:\n]{0,300}[.!?:]?(?=\s|$)",
            re.I,
        ),
        matches=(
            "The following screenshot shows this option in Excel.",
            "Select Options. See the following figure.",
            "The image below shows the dialog:",
        ),
        keeps=("The error shows this message: 0x80070005.", "Open the Images folder and see the files."),
        renders=(
            ("Select File > Options. The following screenshot shows this option in Excel.", "Select File > Options."),
        ),
    ),
    BoilerplateRule(
        "picture-clause",
        "phrase",
        re.compile(
            rf",?\s+(?:as\s+(?:is\s+)?)?(?:shown|seen|illustrated|pictured|highlighted)\s+(?:in|on)\s+the\s+"
            rf"{_WHERE}\s+{_PICTURE}|\s+(?:that|which)\s+(?:resembles|looks\s+like|is\s+similar\s+to)\s+the\s+"
            rf"{_WHERE}\s+{_PICTURE}|\s*\(\s*(?:see|refer\s+to)\s+the\s+{_WHERE}\s+{_PICTURE}[^()\n]{{0,200}}\)",
            re.I,
        ),
        matches=(
            "They are prompted for a code, as shown in the following screenshot.",
            "You'll see a dialog box that resembles the following screenshot:",
            "The permissions (see the following screenshot for the defaults) may differ.",
        ),
        keeps=('The error "Access is denied, as shown in the log" appears.', "as shown in the table below"),
        renders=(
            ("They are prompted for a code, as shown in the following screenshot.", "They are prompted for a code."),
            ("You'll see a dialog box that resembles the following screenshot:", "You'll see a dialog box:"),
            (
                "The permissions (see the following screenshot for the defaults) may differ.",
                "The permissions may differ.",
            ),
        ),
    ),
)

_BLOCK_RULES = tuple(r for r in RULES if r.kind == "block")
_PHRASE_RULES = tuple(r for r in RULES if r.kind == "phrase")
_QUOTED = re.compile(r"\"[^\"\n]{1,2000}\"|“[^”\n]{1,2000}”|`[^`\n]{1,2000}`")
_HINT = re.compile(rf"{_PICTURE}|\b(?:KB|knowledge base|applies|product version|help|feedback|helpful)\b", re.I)


def is_boilerplate(text: str) -> bool:
    """Whether a whole paragraph is furniture (a KB number, "applies to", "still need help?", a feedback prompt)."""
    text = text.strip()
    return len(text) <= 600 and any(rule.pattern.match(text) for rule in _BLOCK_RULES)


def remove_phrases(text: str) -> str:
    """`text` without the clauses and sentences that point at a picture; quoted text is never touched."""
    if not _HINT.search(text):
        return text
    quoted: list[str] = []

    def set_aside(match: re.Match[str]) -> str:
        quoted.append(match.group(0))
        return f"\x03{len(quoted) - 1}\x03"

    work = _QUOTED.sub(set_aside, text)
    for rule in _PHRASE_RULES:
        work = rule.pattern.sub(rule.replacement, work)
    work = re.sub(r"[ \t]+([.,:;])", r"\1", work)
    work = re.sub(r"([.!?])[.,]", r"\1", work)
    work = re.sub(r"\x03(\d+)\x03", lambda m: quoted[int(m.group(1))], work)
    return re.sub(r"[ \t]{2,}", " ", work).strip()
