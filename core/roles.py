"""Section roles: what a section of a support article is *for*, read from its heading and its shape.

An employee describes a problem in the words of an article's *Symptoms*; what they need is its *Resolution*.
Knowing each section's role lets the answer step quote the fix, not the user's own symptoms back.

The layouts IT knowledge bases use, and how their headings map to roles:
- Microsoft support: Symptoms / Cause / Resolution / Workaround / More information / Status, "Method 1: …",
  "Solution 2", "Option 3", "Step 1: …", "Summary", "Introduction"
- KCS articles (ServiceNow, Zendesk, Salesforce knowledge): Issue / Environment / Resolution / Cause
- how-to pages: a verb-first heading ("Configure …", "How to …") over numbered steps; Prerequisites /
  Before you begin; See also / Related articles
- FAQs: a question as the heading ("Why …?", "How do I …?", "I got this message. How do I fix it?")

A heading that says nothing about its role ("macOS", "Word 2016", "Classic EAC") takes the role of the nearest
heading above it that does, then falls back to the section's shape: numbered steps make a procedure, tables or
code a reference. Pure functions over text; the rules are data (ROLE_RULES), each with examples that the tests run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Sequence

Role = Literal[
    "symptoms",
    "cause",
    "resolution",
    "workaround",
    "procedure",
    "prerequisites",
    "more_info",
    "reference",
    "intro",
    "environment",
    "info",
]
ROLES: tuple[str, ...] = (
    "symptoms",
    "cause",
    "resolution",
    "workaround",
    "procedure",
    "prerequisites",
    "more_info",
    "reference",
    "intro",
    "environment",
    "info",
)
# the roles that tell a person what to do
ACTIONABLE: frozenset[str] = frozenset({"resolution", "workaround", "procedure"})


@dataclass(frozen=True)
class RoleRule:
    role: str
    pattern: re.Pattern[str]
    matches: tuple[str, ...]  # headings this rule must classify as `role`
    misses: tuple[str, ...] = ()  # headings it must leave alone


def _rule(role: str, pattern: str, matches: Sequence[str], misses: Sequence[str] = ()) -> RoleRule:
    return RoleRule(role, re.compile(pattern, re.I), tuple(matches), tuple(misses))


# First match wins, so the more specific rules come first. Patterns see the heading without markup.
ROLE_RULES: tuple[RoleRule, ...] = (
    _rule(
        "workaround",
        r"\bwork[- ]?arounds?\b",
        ["Workaround", "Workaround 2", "Solution/Workaround", "Temporary workaround"],
    ),
    _rule(
        "more_info",
        r"^(more|additional|further) (information|info|details|resources)\b|^see also\b|"
        r"^related( articles| topics| links| content| information)?$|^references?$|^learn more\b|"
        r"^still need help\b|^(still |need |more |further |getting |get |any )*help[?!.]?$|"
        r"^(did|does) this (solve|fix|help)\b|^next steps?$|^feedback\b|"
        r"^third[- ]party (information|contact)",
        [
            "More information",
            "More Information",
            "See also",
            "Related articles",
            "References",
            "Still need help?",
            "Need help?",
            "Getting help",
            "Did this fix the problem?",
            "Additional resources",
        ],
        ["Information about the cause", "Need help with the VPN?", "Help with printing"],
    ),
    _rule(
        "cause",
        r"^(root )?causes?\b|^why\b|\bwhy (does|do|did|is|are|was|this|it|i|the)\b|^reason\b|"
        r"\bthis (issue|problem|behavio u?r) occurs\b|^explanation\b",
        ["Cause", "Root cause", "Why did I get this bounce message?", "Why does this happen", "Causes", "Reason"],
    ),
    _rule(
        "resolution",
        r"^(resolution|solutions?|fix(es)?|quick (fix|resolution)|resolving|remed(y|iation)|"
        r"troubleshoot(ing)?( steps?)?)\b|^(method|option|approach|solution|resolution|fix)\s*"
        r"[0-9ivx]+\b|^(to )?(fix|resolve|repair|solve) (this|the|it)\b|"
        r"\bhow (do|can|to) (i |we |you )?(fix|resolve|repair|solve|troubleshoot)\b|"
        r"^(step|phase) [0-9]+\b|^steps? to (fix|resolve|try)\b|^methods to try\b|^things to try\b",
        [
            "Resolution",
            "Solution",
            "Solutions",
            "Method 1",
            "Method 2: Manually disable the add-in",
            "Option 4: Ignore DDE",
            "Solution 1: Use PowerShell",
            "Resolution - Step 1: Identify the rule",
            "Quick resolution",
            "I got this bounce message. How do I fix it?",
            "Troubleshooting steps",
            "Step 2: Perform a clean restart",
            "How to fix the error",
            "Methods to try if you cannot open a file",
            "Fix",
        ],
        ["Steps to reproduce the behavior", "Fixed in version 2.1 release notes"],
    ),
    _rule(
        "symptoms",
        r"^(symptoms?|problems?|issues?|the (problem|issue|error|symptoms?)|error messages?|"
        r"what you (see|experience)|(problem|issue) (description|statement|summary|details)|"
        r"description of the (problem|issue)|scenario|observed behaviou?r)\s*[0-9ivx]*\s*(:.*)?$|"
        r"^steps to reproduce\b",
        [
            "Symptoms",
            "Problem",
            "Issue",
            "Symptom 2",
            "Scenario 1",
            "Steps to Reproduce Behavior",
            "Problem 3",
            "Problem description",
            "Issue: Outlook prompts for a password",
            "Error message",
        ],
        ["Problems linking and copying dates", "Issue a certificate", "Issues syncing lists"],
    ),
    _rule(
        "environment",
        r"^(environment|applies to|affected (products|versions)|products? affected|"
        r"system requirements)\b",
        ["Environment", "Applies to", "Affected products"],
    ),
    _rule(
        "prerequisites",
        r"^(pre-?requisites?|requirements|before you (begin|start)|what you need|"
        r"you will need|permissions (needed|required))\b",
        ["Prerequisites", "Before you begin", "Requirements", "What you need"],
    ),
    _rule(
        "intro",
        r"^(summary|introduction|overview|about( this (article|page|guide))?|background|purpose|"
        r"abstract|in this article|notice|status)$",
        ["Summary", "Introduction", "Overview", "About this article", "Notice", "Status"],
    ),
    _rule(
        "procedure",
        r"^(how (to|do i|do you|can i|can you)|steps?\b|procedure|instructions|to (set|turn|enable|"
        r"disable|configure|create|add|remove|change|install|update|reset|use|open|find|get|"
        r"connect)\b)",
        ["How to merge Word documents", "How do I access the mailbox", "Procedure", "Steps", "To enable logging"],
        ["How to fix the error"],
    ),
)

# verbs a how-to heading opens with ("Configure the client", "Archive SharePoint list", "Set the default font")
_IMPERATIVE = re.compile(
    r"^(add|allow|apply|archive|assign|back ?up|block|change|check|choose|clear|configure|connect|convert|copy|"
    r"create|customi[sz]e|delete|disable|download|edit|enable|enrol|enroll|export|find|fix|grant|import|install|"
    r"join|manage|map|merge|migrate|move|open|print|recover|register|reinstall|remove|rename|repair|request|reset|"
    r"restore|run|save|scan|search|select|set|set ?up|share|sign|start|stop|switch|sync|turn|uninstall|unlock|"
    r"update|upgrade|use|verify|view)\b",
    re.I,
)
_STEP_LINE = re.compile(r"^\s*\d+[.)]\s+\S")
_MARKUP = re.compile(r"<[^>]+>|\[([^\]]*)\]\([^)]*\)|[*_`#]")


def clean_heading(heading: str) -> str:
    text = _MARKUP.sub(lambda m: m.group(1) or " ", heading)
    return re.sub(r"\s+", " ", text).strip(" :.-–—")


def heading_role(heading: str) -> str | None:
    """The role a heading names, or None when it names none ("macOS", "Word 2016")."""
    text = clean_heading(heading)
    if not text:
        return None
    for rule in ROLE_RULES:
        if rule.pattern.search(text):
            return rule.role
    if text.endswith("?"):  # a question as the heading: an FAQ entry, answered below it
        if re.match(r"^why\b", text, re.I):
            return "cause"
        if re.match(r"^(what|which|who|when|where|is|are|does|do|can|will|should|has|have)\b", text, re.I):
            return "info"  # "What are Out of Office replies?", "Are site mailboxes still accessible?"
        return "resolution"
    if _IMPERATIVE.match(text):
        return "procedure"
    return None


def shape_role(lines: Sequence[str]) -> str | None:
    """The role a section's body suggests: steps → procedure, mostly table or code → reference."""
    body = [line for line in lines if line.strip()]
    if not body:
        return None
    if sum(1 for line in body if _STEP_LINE.match(line)) >= 2:
        return "procedure"
    tabular = sum(1 for line in body if line.count(" | ") >= 1)
    if tabular >= 3 and tabular >= 0.5 * len(body):
        return "reference"
    return None


def section_role(path: Sequence[str], lines: Sequence[str]) -> str:
    """The role of a section from its heading path (deepest telling heading wins) and, failing that, its shape.

    The lead section of a document (no heading) is its intro, unless its shape says otherwise."""
    for heading in reversed(path):
        role = heading_role(heading)
        if role is not None:
            return role
    shaped = shape_role(lines)
    if shaped:
        return shaped
    return "intro" if not path else "info"
