"""What docs-as-code sites add to Markdown, one rule per row, with the examples that pin each rule down.

Knowledge bases are written for site generators — Microsoft Learn (DocFX), MkDocs/Material,
Docusaurus/Starlight/VitePress (MDX), Hugo — and sometimes in reStructuredText habits. Their
extensions are markup to a reader of the raw file, and without these rules they reach chunks and
answers as text (`:::image type="content" …:::`, `> [!NOTE]`, `{{< note >}}`). The engine in
app/adapters/markup.py runs this table; tests/unit/test_markup_rules.py runs every row's examples.

Stages, in the order they run:
- `block` — a directive line and its body (indented, or up to a closing line) becomes CommonMark:
  a labelled note (`> [!NOTE]` form, which the readers label), a fenced code block, its content
  alone, a tab (its label and its content: see "tabs" below), or nothing;
- `line`  — a whole line is dropped (`import …`, `:::zone-end:::`) or rewritten (`## [Linux](#tab/linux)`);
- `paragraph` — a paragraph opening with an alert marker (`[!WARNING]`) is labelled ("Warning: …");
- `text` — inside a paragraph's text (entities, reStructuredText roles).

Each row: `matches` must match its pattern, `not_matches` must not; `renders` are (source, text a reader
gets) pairs run through the whole Markdown parser.

Tabs (one per platform, browser or way: brace `{tab|mac}`, MkDocs `=== "macOS"`, Docusaurus `<TabItem>`, Hugo
`{{< tab >}}`, GitBook `{% tab %}`) leave their label and their end as marker lines, which the engine's last
pass reads (markup.py `resolve_tabs`): a tab whose content has headings of its own ("#### Disk image") becomes a
heading level between the enclosing heading and those ("Install > macOS > Disk image"), as does every tab beside
it; a tab without headings keeps its label as the line that names the list below it.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Callable, Literal

Stage = Literal["block", "line", "paragraph", "text"]


@dataclass(frozen=True)
class MarkupRule:
    name: str
    family: str
    stage: Stage
    pattern: re.Pattern[str]
    # block: note | code | content | tab | tabs | drop;  line: drop | replace;  paragraph: label;  text: replace
    action: str
    matches: tuple[str, ...]
    not_matches: tuple[str, ...]
    replacement: str | Callable[[re.Match[str]], str] | None = None
    body: Literal["indented", "closer", ""] = ""  # block rules: where the directive's body ends
    closer: str = ""  # body="closer": the closing line's pattern; {group} is filled from the opener, escaped
    renders: tuple[tuple[str, str], ...] = ()

    def finds(self, text: str) -> bool:
        """Whether the rule applies to `text`: a whole line (or paragraph) for directives, drops and alerts,
        anywhere in it for replacements."""
        anchored = self.stage in ("block", "paragraph") or self.action == "drop"
        return bool((self.pattern.match if anchored else self.pattern.search)(text))


# --- labels of notes ------------------------------------------------------------------------------
NOTE_LABELS = {
    "note": "Note",
    "tip": "Tip",
    "hint": "Tip",
    "important": "Important",
    "warning": "Warning",
    "caution": "Caution",
    "danger": "Danger",
    "attention": "Attention",
    "error": "Error",
    "info": "Info",
    "information": "Info",
    "success": "Success",
    "check": "Success",
    "done": "Success",
    "secondary": "Note",
    "seealso": "See also",
    "abstract": "Summary",
    "summary": "Summary",
    "tldr": "Summary",
    "question": "Question",
    "faq": "Question",
    "help": "Question",
    "example": "Example",
    "quote": "Quote",
    "cite": "Quote",
    "bug": "Bug",
    "failure": "Failure",
    "fail": "Failure",
    "missing": "Failure",
    "todo": "To do",
    "admonition": "Note",
    "notice": "Note",
    "alert": "Note",
    "callout": "Note",
    "experimental": "Experimental",
    "deprecated": "Deprecated",
}
_NOTE_KINDS = "|".join(sorted(NOTE_LABELS, key=len, reverse=True))


def note_label(kind: str) -> str:
    """The label a reader sees for a note kind: "warning" → "Warning", an unknown "gotcha" → "Gotcha"."""
    key = kind.strip().lower()
    return NOTE_LABELS.get(key) or key.replace("-", " ").replace("_", " ").capitalize() or "Note"


# --- images: their alt text, when it says something ---------------------------------------------
# An image's file is never indexed, so its alt text is all that is left of it. A description of the
# picture itself ("Screenshot of the Save As dialog", "The screen on which …") restates the step next to it
# and would read like an instruction in an answer, so it goes; so do captions of one or two words and file
# names. Alt text that says something ("Select the Online Repair option to repair Office.") stays as text.
_PICTURE_DESCRIPTION = re.compile(
    r"^\W*(?:an?\s+|the\s+)?(?:screen\s*shots?|screen\s*captures?|screen\s*grabs?|screens?|images?|pictures?|"
    r"illustrations?|icons?|graphics?|diagrams?|figures?|photos?|gifs?|animations?|logos?|snapshots?|"
    r"thumbnails?|banners?)\b",
    re.I,
)
_FILE_LIKE = re.compile(r"\.(?:png|jpe?g|gif|svg|webp|bmp|ico)$|^[\w./\\-]+/[\w./\\-]*$|^\w+://", re.I)


def image_text(alt: str, image_type: str = "content") -> str:
    """What an image leaves in the text: its alt text when informative, else nothing."""
    alt = re.sub(r"\s+", " ", html.unescape(alt or "")).strip()
    if image_type.lower() == "icon" or not alt or _FILE_LIKE.match(alt):
        return ""
    if len(alt.split()) < 3 or _PICTURE_DESCRIPTION.match(alt):
        return ""
    return alt


_ATTRIBUTE = re.compile(r"([\w-]+)\s*=\s*\"([^\"]*)\"")


def _docfx_image(match: re.Match[str]) -> str:
    attributes = {k.lower(): v for k, v in _ATTRIBUTE.findall(match.group("attrs"))}
    return image_text(attributes.get("alt-text", ""), attributes.get("type", "content"))


def _rst_role(match: re.Match[str]) -> str:
    return match.group("text").strip()


def _entity(match: re.Match[str]) -> str:
    decoded = html.unescape(match.group(0))
    return " " if decoded == "\xa0" else decoded


def _humanise(token: str) -> str:
    """A macro argument as words: "desktop-web" → "Desktop web", "uploaded_files" → "Uploaded files"."""
    words = re.sub(r"[-_]+", " ", token).strip()
    return words[:1].upper() + words[1:]


# --- tabs: their labels and the marker lines the engine's last pass reads --------------------------
TAB_MARK = "\x1d"  # a control character no document keeps (normalise_source removes it from the input)
_TAB_OPEN = TAB_MARK + "+"
_TAB_END = TAB_MARK + "-"


def tab_open(indent: str, label: str) -> str:
    """The marker line where a tab labelled `label` begins."""
    return f"{indent}{_TAB_OPEN}{' '.join(label.split())}"


def tab_end(indent: str) -> str:
    """The marker line where a tab ends."""
    return f"{indent}{_TAB_END}"


def tab_marker(line: str) -> tuple[str, str | None] | None:
    """(indent, label) of a tab's opening marker line, (indent, None) of its closing one; None for other lines."""
    at = line.find(TAB_MARK)
    if at < 0 or line[:at].strip():
        return None
    rest = line[at:]
    if rest.startswith(_TAB_OPEN):
        return line[:at], rest[len(_TAB_OPEN) :]
    return (line[:at], None) if rest.rstrip() == _TAB_END else None


# platform names a tab token writes in lower case ("{tab|ios}"); other tokens read as words ("desktop-web"), and
# "{tab|mac}" stays "Mac", the word employees use ("on my mac" finds it)
_PLATFORM_SPELLINGS = {"macos": "macOS", "ios": "iOS", "ipados": "iPadOS", "chromeos": "ChromeOS"}


def brace_tab_label(token: str) -> str:
    """A brace tab's label as a reader sees it: "ios" → "iOS", "desktop-web" → "Desktop web"."""
    return _PLATFORM_SPELLINGS.get(token.lower()) or _humanise(token)


def _brace_tab_label(match: re.Match[str]) -> str:
    return f"\n{match.group('indent')}{brace_tab_label(match.group('label'))}\n"


def _brace_macro(match: re.Match[str]) -> str:
    # `{settings_tab|notifications}`, `{relative|gear|channel-settings}`: a generated navigation step; what the
    # site's code renders is unknown here, so the place it names is said plainly ("Go to Notifications"). It is the
    # first step of the numbered list that follows it (the site renders it as list items, which is why such lists
    # are written from "1." on after the macro), so it is written as one: a procedure read from here starts where
    # the employee has to start.
    places = " › ".join(_humanise(a) for a in match.group("args").split("|") if a.strip())
    name = match.group("name")
    kind = f" ({_humanise(name).lower()})" if "_" in name or "-" in name else ""
    return f"{match.group('indent')}1. Go to {places}{kind}."


def _icon_name(match: re.Match[str]) -> str:
    classes = match.group("classes").split()
    named = [c for c in classes if re.match(r"^(?:fa|icon|zmdi|bi|mdi|glyphicon|[\w]+-icon)-[\w-]+$", c)]
    if not named:
        return ""
    name = re.sub(r"^(?:fa|icon|zmdi|bi|mdi|glyphicon|[\w]+-icon)-", "", named[-1])
    return f"{_humanise(name).lower()} icon"


_Q = r"(?:\"[^\"\n]*\"|'[^'\n]*')"  # a quoted attribute value
_JSX_ATTRS = r"(?:\s(?:[^<>\"'\n]|" + _Q + r")*)?"

RULES: tuple[MarkupRule, ...] = (
    # ---------------------------------------------------------------- Microsoft Learn / DocFX
    MarkupRule(
        "docfx-image",
        "docfx",
        "line",
        re.compile(r":::image\b(?P<attrs>(?:\"[^\"\n]*\"|[^\"\n:]|:(?!::))*):::"),
        "replace",
        replacement=_docfx_image,
        matches=(
            ':::image type="content" source="media/a.png" alt-text="Select Save to keep the file.":::',
            'select **Edit**:::image type="icon" source="media/edit.png"::: and then',
            ':::image type="content" source="a.png" alt-text="Error: access denied"::: after',
        ),
        not_matches=("tcp6  0  0 :::22  :::*  LISTEN", "an IPv6 wildcard (typically :::)"),
        renders=(
            (':::image type="content" source="media/x.png" alt-text="Screenshot of the Save As dialog.":::\n', ""),
            (
                'Select **Edit** :::image type="icon" source="media/edit.png"::: to open it.\n',
                "Select Edit to open it.",
            ),
            (
                ':::image type="content" source="media/r.png" alt-text="Select the Online Repair option.":::\n',
                "Select the Online Repair option.",
            ),
        ),
    ),
    MarkupRule(
        "docfx-directive",
        "docfx",
        "line",
        re.compile(rf"^[ \t>]*:{{3,}}[ \t]*(?!(?:{_NOTE_KINDS}|details|image)(?![\w-]))[a-z][\w-]*.*$", re.I),
        "drop",
        matches=(
            ':::zone pivot="windows"',
            ":::zone-end:::",
            '::: moniker range=">=o365"',
            ":::row:::",
            ':::column span="2":::',
            ':::code language="powershell" source="snippets/x.ps1":::',
            ":::image-end:::",
        ),
        not_matches=(":::note", ':::image type="content" source="a.png":::', "tcp6 0 0 :::22"),
        renders=((':::zone pivot="windows"\n\nOpen **Settings**.\n\n:::zone-end:::\n', "Open Settings."),),
    ),
    MarkupRule(
        "docfx-include-unresolved",
        "docfx",
        "line",
        re.compile(r"\[!INCLUDE\s*\[[^\]\n]*\]\([^)\n]*\)\]", re.I),
        "replace",
        replacement="",
        matches=("[!INCLUDE [Disclaimer](../../includes/disclaimer.md)]", "[!include[x](y.md)]"),
        not_matches=("[Include files](includes.md)", "[!NOTE]"),
        renders=(("Intro.\n\n[!INCLUDE [Disclaimer](../includes/missing.md)]\n", "Intro."),),
    ),
    MarkupRule(
        "docfx-extension-marker",
        "docfx",
        "line",
        re.compile(r"\[!(?:div|video|code(?:-[\w+#.-]+)?)\b(?:[^\[\]\n]|\[[^\]\n]*\](?:\([^)\n]*\))?)*\]", re.I),
        "replace",
        replacement="",
        matches=(
            '[!div class="nextstepaction"]',
            "[!VIDEO https://learn.example/player]",
            "[!code-powershell[Main](snippets/reset.ps1)]",
        ),
        not_matches=("[!NOTE]", "[!WARNING] Back up first", "[div](x.md)"),
        renders=(
            (
                '> [!div class="nextstepaction"]\n> [Next step: reset](https://example.test/reset)\n',
                "Next step: reset (https://example.test/reset)",
            ),
        ),
    ),
    MarkupRule(
        "docfx-tab-heading",
        "docfx",
        "line",
        re.compile(r"^(?P<hashes>#{1,6})[ \t]+\[(?P<label>[^\]\n]+)\]\(#tab/[^)\s]*\)[ \t]*$"),
        "replace",
        replacement=r"\g<hashes> \g<label>",
        matches=("## [Windows](#tab/windows)", "### [Exchange admin center](#tab/eac)"),
        not_matches=("## [Windows](windows.md)", "See [Windows](#tab/windows) above."),
        renders=(("## [macOS](#tab/macos)\n\nOpen Finder.\n", "## macOS\n\nOpen Finder."),),
    ),
    # alerts: GitHub and DocFX `> [!NOTE]`, Obsidian/Starlight `> [!NOTE] Title`; every other note syntax below
    # is rewritten into this one, so one rule labels them all
    MarkupRule(
        "alert",
        "docfx",
        "paragraph",
        re.compile(r"^\[!(?P<kind>[A-Za-z][\w-]*)\][ \t]*(?P<title>[^\n]*)"),
        "label",
        matches=("[!NOTE]", "[!TIP] Shortcut", "[!Important]", "[!WARNING]\nBack up the registry first."),
        not_matches=("[link](x.md)", "See [!NOTE] below", "[ !NOTE]"),
        renders=(
            ("> [!NOTE]\n> Restart after the update.\n", "Note: Restart after the update."),
            ("> [!CAUTION] Caution\n>\n> Back up first.\n", "Caution: Back up first."),
            ("> [!WARNING] Data loss ahead\n>\n> Back up first.\n", "Warning: Data loss ahead\n\nBack up first."),
            (
                "1. Open the editor.\n\n   > [!IMPORTANT]\n   > Back up the key.\n\n2. Change the value.\n",
                "1. Open the editor.\n\n   Important: Back up the key.\n\n2. Change the value.",
            ),
        ),
    ),
    # ---------------------------------------------------------------- MkDocs / Material
    MarkupRule(
        "mkdocs-admonition",
        "mkdocs",
        "block",
        re.compile(
            r"^(?P<indent>[ \t]*)(?:!!!|\?\?\?\+?)[ \t]+(?P<kind>[\w-]+)(?:[ \t]+(?:inline|end))*"
            r"(?:[ \t]+\"(?P<title>[^\"\n]*)\")?[ \t]*$"
        ),
        "note",
        body="indented",
        matches=(
            '!!! note "Before you start"',
            "??? tip",
            '???+ warning "Data loss"',
            "    !!! danger",
            "!!! info inline end",
        ),
        not_matches=("!!!", "Wow!!! that worked", "!!! note Title without quotes"),
        renders=(
            (
                '!!! warning "Back up first"\n    Editing the registry can break Windows.\n\nDone.\n',
                "Warning: Back up first\n\nEditing the registry can break Windows.\n\nDone.",
            ),
            ("??? tip\n    Press **F5** to refresh.\n", "Tip: Press F5 to refresh."),
        ),
    ),
    MarkupRule(
        # Material's content tabs: one tab per platform or app, its content indented under `=== "Label"`; the
        # label stays as the line that names the list below it (a walkthrough takes the list the employee names),
        # or becomes a heading when the tab's content has headings
        "mkdocs-content-tab",
        "mkdocs",
        "block",
        re.compile(r"^(?P<indent>[ \t]*)===[!+]?[ \t]+\"(?P<title>[^\"\n]*)\"[ \t]*$"),
        "tab",
        body="indented",
        matches=('=== "Windows"', '===+ "macOS"', '===! "Desktop app"', '    === "Linux"'),
        not_matches=("===", "=== Windows", 'a === "b"', "========"),
        renders=(
            (
                '## Connect\n\n=== "Windows"\n\n    1. Open **Connect** from Start.\n    2. Click **Sign in**.\n\n'
                '=== "macOS"\n\n    1. Open **Connect** from Launchpad.\n',
                "## Connect\n\nWindows\n\n1. Open Connect from Start.\n2. Click Sign in.\n\nmacOS\n\n"
                "1. Open Connect from Launchpad.",
            ),
            (
                '## Install\n\n=== "Windows"\n\n    #### Installer\n\n    1. Run setup.exe.\n\n'
                '    #### Store\n\n    1. Open the Store.\n\n=== "macOS"\n\n    1. Open the disk image.\n\n## Next\n',
                "## Install\n\n### Windows\n\n#### Installer\n\n1. Run setup.exe.\n\n#### Store\n\n1. Open the Store.\n\n"
                "### macOS\n\n1. Open the disk image.\n\n## Next",
            ),
        ),
    ),
    MarkupRule(
        "heading-id",
        "mkdocs",
        "line",
        re.compile(r"^(?P<heading>#{1,6}[ \t].*?)[ \t]*\{:?[ \t]*#[\w.:-]+[^{}\n]*\}[ \t]*$"),
        "replace",
        replacement=r"\g<heading>",
        matches=("## Install {#install}", "### Reset { #reset .hidden }", "## Set up {: #setup }"),
        not_matches=("## Use {braces} in JSON", "# Title", "Text {#id}"),
        renders=(("## Install the client {#install}\n\nRun setup.\n", "## Install the client\n\nRun setup."),),
    ),
    MarkupRule(
        "attribute-list",
        "mkdocs",
        "line",
        re.compile(r"(?<=[)\]])\{:?[ \t]*(?:[.#][\w-]|[\w-]+=)[^{}\n]{0,200}\}|\{:[^{}\n]{0,200}\}"),
        "replace",
        replacement="",
        matches=(
            '[Docs](https://example.test){:target="_blank"}',
            '![Router](router.png){ width="300" }',
            "[Help](help.md){ .md-button }",
        ),
        not_matches=('{"retries": 3}', "${HOME}/bin", "{{< note >}}"),
        renders=(
            (
                'See [the portal](https://portal.example.test){:target="_blank"}.\n',
                "See the portal (https://portal.example.test).",
            ),
        ),
    ),
    MarkupRule(
        "mkdocs-snippet",
        "mkdocs",
        "line",
        re.compile(r"^[ \t>]*-{1,3}8<-{1,3}[ \t]*(?:\"[^\"\n]*\"|'[^'\n]*')?[ \t]*$"),
        "drop",
        matches=('--8<-- "includes/abbreviations.md"', "--8<--", "-8<- 'note.md'"),
        not_matches=("-- 8 < --", "a --8<-- b"),
        renders=(('Intro.\n\n--8<-- "missing.md"\n', "Intro."),),
    ),
    # ---------------------------------------------------------------- Docusaurus / Starlight / VitePress (MDX)
    MarkupRule(
        "docusaurus-admonition",
        "docusaurus",
        "block",
        re.compile(
            rf"^(?P<indent>[ \t]*)(?P<colons>:{{3,}})[ \t]*(?P<kind>{_NOTE_KINDS})"
            r"(?:\[(?P<title>[^\]\n]*)\]|[ \t]+(?P<title2>[^{\n]*?))?[ \t]*(?:\{[^}\n]*\})?[ \t]*$",
            re.I,
        ),
        "note",
        body="closer",
        closer=r"^[ \t]*{colons}[ \t]*$",
        matches=(":::tip", ":::caution[Back up first]", "::: warning Data loss", "::::note", ":::info Title {#id}"),
        not_matches=(':::zone pivot="x"', ":::", "tcp6 :::22", ":::tipsy"),
        renders=(
            (":::tip Faster\nPress **Ctrl+S** often.\n:::\n", "Tip: Faster\n\nPress Ctrl+S often."),
            (":::danger\nDo not unplug the disk.\n:::\n\nNext.\n", "Danger: Do not unplug the disk.\n\nNext."),
            ("::::note\nOuter.\n\n:::tip\nInner.\n:::\n::::\n", "Note: Outer.\n\nTip: Inner."),
        ),
    ),
    MarkupRule(
        "vitepress-details",
        "docusaurus",
        "block",
        re.compile(r"^(?P<indent>[ \t]*)(?P<colons>:{3,})[ \t]*details\b[ \t]*(?P<title>[^\n]*?)[ \t]*$", re.I),
        "content",
        body="closer",
        closer=r"^[ \t]*{colons}[ \t]*$",
        matches=("::: details Show the log", ":::details"),
        not_matches=(":::detailsx", "details"),
        renders=(
            (
                "::: details Why does this happen?\nThe cache is full.\n:::\n",
                "Why does this happen?\n\nThe cache is full.",
            ),
        ),
    ),
    MarkupRule(
        "mdx-import",
        "mdx",
        "line",
        re.compile(r"^import[ \t]+(?:[\w*{}\s,]+?[ \t]+from[ \t]+)?(?:\"[^\"\n]+\"|'[^'\n]+');?[ \t]*$"),
        "drop",
        matches=(
            "import Tabs from '@theme/Tabs';",
            "import { LinkCard, CardGrid } from '@astrojs/starlight/components';",
            "import './styles.css'",
            'import Warning from "../_includes/warning.md"',
        ),
        not_matches=("import os", "Import your contacts from Outlook.", "import the certificate from 'C:\\certs'."),
        renders=(
            ("import Tabs from '@theme/Tabs';\n\n# Backups\n\nBack up weekly.\n", "# Backups\n\nBack up weekly."),
        ),
    ),
    MarkupRule(
        "mdx-export",
        "mdx",
        "line",
        re.compile(r"^export[ \t]+(?:const|let|var|function|default)\b.*$"),
        "drop",
        matches=("export const toc = [];", "export default function Layout() {}"),
        not_matches=("Export the mailbox to a PST file.", "export PATH=$PATH:/opt/bin"),
        renders=(("export const meta = {title: 'x'};\n\nText.\n", "Text."),),
    ),
    MarkupRule(
        # a tab of <Tabs>, up to its </TabItem> (one never closed keeps its label line)
        "jsx-tab-item",
        "mdx",
        "block",
        re.compile(
            r"^(?P<indent>[ \t]*)<TabItem\b(?:[^<>\"'\n]|" + _Q + r")*?\blabel=[\"'](?P<title>[^\"'\n]+)[\"']"
            r"(?:[^<>\"'\n]|" + _Q + r")*>[ \t]*$"
        ),
        "tab",
        body="closer",
        closer=r"^[ \t]*</TabItem>[ \t]*$",
        matches=('<TabItem value="win" label="Windows">', "  <TabItem label='macOS' default>"),
        not_matches=('<TabItem value="win">', '<Tabs groupId="os">', "</TabItem>"),
        renders=(
            (
                '<Tabs>\n<TabItem value="mac" label="macOS">\n\nOpen Finder.\n\n</TabItem>\n</Tabs>\n',
                "macOS\n\nOpen Finder.",
            ),
            (
                '## Install\n\n<Tabs>\n  <TabItem value="win" label="Windows">\n\n  ### Installer\n\n  1. Run setup.exe.\n\n'
                '  </TabItem>\n  <TabItem value="mac" label="macOS">\n\n  ### Disk image\n\n  1. Open the disk image.\n\n'
                "  </TabItem>\n</Tabs>\n",
                "## Install\n\n### Windows\n\n#### Installer\n\n1. Run setup.exe.\n\n### macOS\n\n#### Disk image\n\n"
                "1. Open the disk image.",
            ),
            ('<TabItem value="mac" label="macOS">\n\nOpen Finder.\n', "macOS\n\nOpen Finder."),
        ),
    ),
    MarkupRule(
        "jsx-component",
        "mdx",
        "line",
        re.compile(r"^[ \t]*</?[A-Z][\w.]*" + _JSX_ATTRS + r"/?>[ \t]*$"),
        "drop",
        matches=(
            "<DataRecoveryWarning />",
            '<DirectoryLinks directory="backups" />',
            "  <DiskFormats/>",
            "<CardGrid>",
            "</CardGrid>",
            '<Tabs groupId="os">',
        ),
        not_matches=("<br />", "<username>", "Press <Enter> twice", "<Button>Save</Button>", "<details>"),
        renders=(("<CardGrid>\nPick a guide below.\n</CardGrid>\n\n<UseLiveSession />\n", "Pick a guide below."),),
    ),
    MarkupRule(
        "mdx-comment",
        "mdx",
        "line",
        re.compile(r"\{/\*.{0,2000}?\*/\}"),
        "replace",
        replacement="",
        matches=("{/* TODO: screenshots */}", "Text {/* hidden */} more"),
        not_matches=("{ /x/ }", "/* C comment */"),
        renders=(("Reboot {/* check with IT */} twice.\n", "Reboot twice."),),
    ),
    # ---------------------------------------------------------------- Hugo shortcodes
    MarkupRule(
        "hugo-note",
        "hugo",
        "block",
        re.compile(
            r"^(?P<indent>[ \t]*)\{\{[<%][ \t]*(?P<name>note|tip|warning|caution|important|info|danger|notice|"
            r"alert|hint|callout|admonition)\b(?P<args>[^}\n]*?)[ \t]*[>%]\}\}[ \t]*$",
            re.I,
        ),
        "note",
        body="closer",
        closer=r"^[ \t]*\{{\{{[<%][ \t]*/{name}[ \t]*[>%]\}}\}}[ \t]*$",
        matches=(
            "{{< note >}}",
            "{{% notice warning %}}",
            '{{< alert color="danger" title="Stop" >}}',
            "{{< hint info >}}",
        ),
        not_matches=("{{< /note >}}", '{{< figure src="x.png" >}}', "{{ .Title }}"),
        renders=(
            (
                "{{< note >}}\nThe VPN disconnects after 8 hours.\n{{< /note >}}\n",
                "Note: The VPN disconnects after 8 hours.",
            ),
            ("{{% notice warning %}}\nBack up first.\n{{% /notice %}}\n", "Warning: Back up first."),
        ),
    ),
    MarkupRule(
        "hugo-highlight",
        "hugo",
        "block",
        re.compile(r"^(?P<indent>[ \t]*)\{\{[<%][ \t]*highlight[ \t]+(?P<lang>[\w+#.-]+)[^}\n]*?[>%]\}\}[ \t]*$"),
        "code",
        body="closer",
        closer=r"^[ \t]*\{{\{{[<%][ \t]*/highlight[ \t]*[>%]\}}\}}[ \t]*$",
        matches=("{{< highlight bash >}}", '{{< highlight powershell "linenos=table" >}}'),
        not_matches=("{{< /highlight >}}", "{{< highlight >}}"),
        renders=(
            (
                "{{< highlight bash >}}\nsudo systemctl restart vpn\nsudo journalctl -u vpn\n{{< /highlight >}}\n",
                "    sudo systemctl restart vpn\n    sudo journalctl -u vpn",
            ),
        ),
    ),
    MarkupRule(
        # a tab of a tabs shortcode: its label stays as the line that names the list below it (a heading when the
        # tab's content has headings)
        "hugo-tab",
        "hugo",
        "block",
        re.compile(
            r"^(?P<indent>[ \t]*)\{\{[<%][ \t]*(?P<name>tab)[ \t]+(?:(?:name|title|header)[ \t]*=[ \t]*)?"
            r"[\"'](?P<title>[^\"'\n]+)[\"'][^}\n]*?[>%]\}\}[ \t]*$"
        ),
        "tab",
        body="closer",
        closer=r"^[ \t]*\{{\{{[<%][ \t]*/{name}[ \t]*[>%]\}}\}}[ \t]*$",
        matches=('{{< tab "Windows" >}}', '{{< tab name="macOS" >}}', "{{% tab title='Linux' %}}"),
        not_matches=("{{< tab >}}", "{{< /tab >}}", '{{< tabs "os" >}}'),
        renders=(
            (
                '{{< tabs >}}\n{{< tab "Windows" >}}\n1. Open Start.\n2. Click Connect.\n{{< /tab >}}\n'
                '{{< tab name="macOS" >}}\n1. Open Launchpad.\n{{< /tab >}}\n{{< /tabs >}}\n',
                "Windows\n\n1. Open Start.\n2. Click Connect.\n\nmacOS\n\n1. Open Launchpad.",
            ),
            (
                '# Install\n\n{{< tabs >}}\n{{< tab "Windows" >}}\n## Installer\n1. Run setup.exe.\n{{< /tab >}}\n'
                '{{< tab "Linux" >}}\n1. Run apt install.\n{{< /tab >}}\n{{< /tabs >}}\n',
                "# Install\n\n## Windows\n\n### Installer\n\n1. Run setup.exe.\n\n## Linux\n\n1. Run apt install.",
            ),
        ),
    ),
    MarkupRule(
        "hugo-paired",
        "hugo",
        "block",
        re.compile(r"^(?P<indent>[ \t]*)\{\{[<%][ \t]*(?P<name>[\w-]+)\b[^}\n]*?[>%]\}\}[ \t]*$"),
        "content",
        body="closer",
        closer=r"^[ \t]*\{{\{{[<%][ \t]*/{name}[ \t]*[>%]\}}\}}[ \t]*$",
        matches=("{{< tabs >}}", '{{% details title="Why" %}}'),
        not_matches=("{{< /tabs >}}", 'Text {{< ref "a.md" >}}'),
        renders=(("{{< tabs >}}\nUse the tray icon.\n{{< /tabs >}}\n", "Use the tray icon."),),
    ),
    MarkupRule(
        "hugo-shortcode",
        "hugo",
        "line",
        # "(…)" around a shortcode goes with it, unless it is a link's target: "[guide]()" reads "guide"
        re.compile(r"(?<!\])\([ \t]*\{\{[<%].{0,500}?[>%]\}\}[ \t]*\)|\{\{[<%].{0,500}?[>%]\}\}"),
        "replace",
        replacement="",
        matches=('{{< ref "vpn.md" >}}', '{{% param "version" %}}', "{{</* note */>}}", '{{< figure src="a.png" >}}'),
        not_matches=("{{ .Title }}", "{ {x} }"),
        renders=(
            ('See [the VPN guide]({{< ref "vpn.md" >}}).\n\n{{< figure src="router.png" >}}\n', "See the VPN guide."),
            ('Open the portal ({{< ref "portal.md" >}}) and sign in.\n', "Open the portal and sign in."),
        ),
    ),
    # ---------------------------------------------------------------- GitBook (Liquid-style tags)
    MarkupRule(
        "gitbook-hint",
        "gitbook",
        "block",
        re.compile(r"^(?P<indent>[ \t]*)\{%[ \t]*hint[ \t]+style=[\"'](?P<kind>[\w-]+)[\"'][ \t]*%\}[ \t]*$"),
        "note",
        body="closer",
        closer=r"^[ \t]*\{{%[ \t]*endhint[ \t]*%\}}[ \t]*$",
        matches=('{% hint style="warning" %}', "  {% hint style='info' %}"),
        not_matches=("{% endhint %}", "{% hint %}"),
        renders=(('{% hint style="warning" %}\nBack up first.\n{% endhint %}\n', "Warning: Back up first."),),
    ),
    MarkupRule(
        # a tab of a tabs block: its label stays as the line that names the list below it (a heading when the tab's
        # content has headings)
        "gitbook-tab",
        "gitbook",
        "block",
        re.compile(r"^(?P<indent>[ \t]*)\{%[ \t]*tab[ \t]+title=[\"'](?P<title>[^\"'\n]+)[\"'][ \t]*%\}[ \t]*$"),
        "tab",
        body="closer",
        closer=r"^[ \t]*\{{%[ \t]*endtab[ \t]*%\}}[ \t]*$",
        matches=('{% tab title="Windows" %}', "{% tab title='macOS' %}"),
        not_matches=("{% tabs %}", "{% endtab %}", "{% tab %}"),
        renders=(
            (
                '{% tabs %}\n{% tab title="Windows" %}\n1. Open Start.\n{% endtab %}\n'
                '{% tab title="macOS" %}\n1. Open Launchpad.\n{% endtab %}\n{% endtabs %}\n',
                "Windows\n\n1. Open Start.\n\nmacOS\n\n1. Open Launchpad.",
            ),
            (
                '## Install\n\nPick yours.\n\n{% tabs %}\n{% tab title="Windows" %}\n#### Installer\n1. Run setup.exe.\n'
                '{% endtab %}\n{% tab title="macOS" %}\n#### Disk image\n1. Open the disk image.\n{% endtab %}\n'
                "{% endtabs %}\n",
                "## Install\n\nPick yours.\n\n### Windows\n\n#### Installer\n\n1. Run setup.exe.\n\n### macOS\n\n"
                "#### Disk image\n\n1. Open the disk image.",
            ),
        ),
    ),
    MarkupRule(
        # the tags around tabs, and the ones that point elsewhere (an embed, a page reference, an include)
        "gitbook-tag",
        "gitbook",
        "line",
        re.compile(
            r"^[ \t]*\{%[ \t]*(?:end)?(?:tabs|content-ref|embed|include|file|swagger|code)\b[^%\n]{0,500}%\}[ \t]*$"
        ),
        "drop",
        matches=("{% tabs %}", "{% endtabs %}", '{% embed url="https://x.test/v" %}', '{% content-ref url="a.md" %}'),
        not_matches=('{% tab title="A" %}', "Use {% tabs %} here", "{%"),
        renders=(('Intro.\n\n{% embed url="https://video.example.test/1" %}\n', "Intro."),),
    ),
    # ---------------------------------------------------------------- brace macros (Python-Markdown help centres)
    MarkupRule(
        "brace-include-unresolved",
        "brace",
        "line",
        re.compile(r"^[ \t>]*\{![\w./-]+!\}[ \t]*$"),
        "drop",
        matches=("{!missing.md!}", "    {!include/tip.md!}"),
        not_matches=("{start_tabs}", "Type {!x.md!} here"),
        renders=(("Intro.\n\n{!missing.md!}\n", "Intro."),),
    ),
    MarkupRule(
        # `{start_tabs}` … `{end_tabs}`: each `{tab|…}` inside begins a tab that the next one (or the end) ends
        "brace-tabs",
        "brace",
        "block",
        re.compile(r"^(?P<indent>[ \t]*)\{start_tabs\}[ \t]*$"),
        "tabs",
        body="closer",
        closer=r"^[ \t]*\{{end_tabs\}}[ \t]*$",
        matches=("{start_tabs}", "  {start_tabs}"),
        not_matches=("{end_tabs}", "{tab|mobile}", "Use {start_tabs} in a page"),
        renders=(
            (
                "## Install the app\n\n{start_tabs}\n\n{tab|mac}\n\n#### Disk image\n\n1. Open the disk image.\n\n"
                "#### Homebrew\n\n1. Run brew install.\n\n{tab|windows}\n\n1. Run setup.exe.\n\n{end_tabs}\n",
                "## Install the app\n\n### Mac\n\n#### Disk image\n\n1. Open the disk image.\n\n#### Homebrew\n\n"
                "1. Run brew install.\n\n### Windows\n\n1. Run setup.exe.",
            ),
            (
                "## Mute\n\nMute it.\n\n{start_tabs}\n\n{tab|desktop-web}\n\n1. Click Mute.\n\n{tab|mobile}\n\n"
                "1. Tap Mute.\n\n{end_tabs}\n",
                "## Mute\n\nMute it.\n\nDesktop web\n\n1. Click Mute.\n\nMobile\n\n1. Tap Mute.",
            ),
        ),
    ),
    MarkupRule(
        "brace-tabs-marker",
        "brace",
        "line",
        re.compile(r"^[ \t>]*\{(?:start|end)_tabs\}[ \t]*$"),
        "drop",
        matches=("{start_tabs}", "  {end_tabs}"),
        not_matches=("{tab|mobile}", "Use {start_tabs} in a page"),
        renders=(("{start_tabs}\n\n1. Open the app.\n\n{end_tabs}\n", "1. Open the app."),),
    ),
    MarkupRule(
        "brace-tab",
        "brace",
        "line",
        re.compile(r"^(?P<indent>[ \t]*)\{tab\|(?P<label>[\w-]+)\}[ \t]*$"),
        "replace",
        replacement=_brace_tab_label,
        matches=("{tab|desktop-web}", "  {tab|mobile}"),
        not_matches=("{tab}", "{settings_tab|notifications}", "Press {tab|x} twice"),
        renders=(("{start_tabs}\n{tab|desktop-web}\n\n1. Click Save.\n{end_tabs}\n", "Desktop web\n\n1. Click Save."),),
    ),
    MarkupRule(
        "brace-macro",
        "brace",
        "line",
        re.compile(r"^(?P<indent>[ \t]*)\{(?P<name>[a-z][\w-]*)\|(?P<args>[\w|-]+)\}[ \t]*$"),
        "replace",
        replacement=_brace_macro,
        matches=("{settings_tab|notifications}", "{relative|gear|channel-settings}"),
        not_matches=("{tab}", '{"a": 1}', "Type {name|x} here", "${HOME|x}"),
        renders=(
            (
                "{settings_tab|notifications}\n\n1. Toggle Sound.\n",
                "1. Go to Notifications (settings tab).\n2. Toggle Sound.",
            ),
            ("{relative|gear|channel-settings}\n", "1. Go to Gear › Channel settings."),
        ),
    ),
    # ---------------------------------------------------------------- reStructuredText habits
    MarkupRule(
        "rst-note",
        "rst",
        "block",
        re.compile(
            r"^(?P<indent>[ \t]*)\.\.[ \t]+(?P<kind>note|tip|hint|important|warning|caution|danger|attention|"
            r"error|seealso|admonition)::[ \t]*(?P<first>.*)$",
            re.I,
        ),
        "note",
        body="indented",
        matches=(".. note::", ".. warning:: Back up first.", "   .. tip::", ".. admonition:: Before you start"),
        not_matches=(".. code-block:: bash", ".. note:", "..note::", "... note::"),
        renders=(
            (".. note::\n   Restart after the update.\n\nDone.\n", "Note: Restart after the update.\n\nDone."),
            (".. warning:: Back up first.\n", "Warning: Back up first."),
            (".. admonition:: Before you start\n\n   Close Outlook.\n", "Note: Before you start\n\nClose Outlook."),
        ),
    ),
    MarkupRule(
        "rst-code",
        "rst",
        "block",
        re.compile(r"^(?P<indent>[ \t]*)\.\.[ \t]+(?:code-block|sourcecode|code)::[ \t]*(?P<lang>[\w+#.-]*)[ \t]*$"),
        "code",
        body="indented",
        matches=(".. code-block:: bash", ".. code:: powershell", ".. sourcecode::"),
        not_matches=(".. note::", "code-block:: bash"),
        renders=(
            (
                ".. code-block:: bash\n   :linenos:\n\n   ip addr\n   ip route\n\nThen reboot.\n",
                "    ip addr\n    ip route\n\nThen reboot.",
            ),
        ),
    ),
    MarkupRule(
        "rst-image",
        "rst",
        "block",
        re.compile(r"^(?P<indent>[ \t]*)\.\.[ \t]+(?:\|[^|\n]+\|[ \t]+)?image::.*$"),
        "drop",
        body="indented",
        matches=(".. image:: images/vpn.png", ".. |logo| image:: logo.png"),
        not_matches=(".. figure:: a.png", "image:: a.png"),
        renders=(
            (
                ".. image:: images/vpn.png\n   :alt: The VPN icon\n   :width: 200\n\nClick the icon.\n",
                "Click the icon.",
            ),
        ),
    ),
    MarkupRule(
        "rst-dropped-directive",
        "rst",
        "block",
        re.compile(
            r"^(?P<indent>[ \t]*)\.\.[ \t]+(?:\|[^|\n]+\|[ \t]+)?(?:toctree|contents|include|literalinclude|raw|"
            r"meta|index|highlight|sectnum|replace|unicode|auto\w*)::.*$"
        ),
        "drop",
        body="indented",
        matches=(".. toctree::", ".. contents:: On this page", ".. |br| raw:: html", ".. include:: common.rst"),
        not_matches=(".. note::", ".. topic:: Summary"),
        renders=((".. toctree::\n   :maxdepth: 2\n\n   install\n   usage\n\nWelcome.\n", "Welcome."),),
    ),
    MarkupRule(
        "rst-directive",
        "rst",
        "block",
        re.compile(r"^(?P<indent>[ \t]*)\.\.[ \t]+(?:\|[^|\n]+\|[ \t]+)?[A-Za-z][\w:.-]*::(?:[ \t].*)?$"),
        "content",
        body="indented",
        matches=(".. figure:: router.png", ".. topic:: Summary", ".. only:: windows", ".. list-table:: Ports"),
        not_matches=("..", ".. _target:", "... and more"),
        renders=(
            (
                ".. figure:: router.png\n   :width: 300\n\n   The status light blinks amber.\n",
                "The status light blinks amber.",
            ),
        ),
    ),
    MarkupRule(
        "rst-comment",
        "rst",
        "block",
        re.compile(r"^(?P<indent>[ \t]*)\.\.(?:[ \t]+(?!\S*::)\S.*)?[ \t]*$"),
        "drop",
        body="indented",
        matches=("..", ".. _vpn-setup:", ".. _Portal: https://portal.example.test", ".. this is a comment"),
        not_matches=(".. note::", "... and more", "..\\drivers"),
        renders=(
            (".. _vpn-setup:\n\nConnect to the VPN.\n\n.. TODO: add screenshots\n   later\n", "Connect to the VPN."),
        ),
    ),
    MarkupRule(
        "rst-role",
        "rst",
        "text",
        re.compile(r":(?:[\w-]+:)?[\w-]+:`(?P<text>[^`<\n]+?)(?:[ \t]*<[^<>`\n]+>)?`"),
        "replace",
        replacement=_rst_role,
        matches=(
            ":kbd:`Ctrl+Alt+Del`",
            ":ref:`Reset your password <reset>`",
            ":menuselection:`Start --> Settings`",
            ":py:func:`print`",
        ),
        not_matches=("`code`", "C:\\Windows", "time: 10:30"),
        renders=(
            (
                "Press :kbd:`Ctrl+Alt+Del`, then see :ref:`Locked out <locked>`.\n",
                "Press Ctrl+Alt+Del, then see Locked out.",
            ),
        ),
    ),
    # ---------------------------------------------------------------- HTML inside Markdown
    MarkupRule(
        "icon-placeholder",
        "html",
        "text",
        # an icon font element is empty: in "the **pencil** (<i …></i>) icon" it leaves "()", alone its name
        re.compile(
            r"[ \t]?\([ \t]*<(?:i|span)\s+class=[\"'](?P<pclasses>[^\"'<>\n]{0,200})[\"'][^<>\n]{0,200}>[ \t]*</(?:i|span)>[ \t]*\)"
            r"|<(?:i|span)\s+class=[\"'](?P<classes>[^\"'<>\n]{0,200})[\"'][^<>\n]{0,200}>[ \t]*</(?:i|span)>"
        ),
        "replace",
        replacement=lambda m: "" if m.group("pclasses") is not None else _icon_name(m),
        matches=(
            '<i class="fa fa-play-circle"></i>',
            '(<i class="zulip-icon zulip-icon-edit"></i>)',
            '<span class="bi bi-gear"></span>',
        ),
        not_matches=("<i>really</i>", "(see below)", '<span class="x">text</span>'),
        renders=(
            (
                'Click the **pencil** (<i class="zulip-icon zulip-icon-edit"></i>) icon.\n',
                "Click the pencil icon.",
            ),
            ('Click the <i class="fa fa-play-circle"></i> to the right.\n', "Click the play circle icon to the right."),
        ),
    ),
    MarkupRule(
        "html-entity",
        "html",
        "text",
        re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"),
        "replace",
        replacement=_entity,
        matches=("&nbsp;", "&amp;", "&lt;", "&#8217;", "&#x2014;"),
        not_matches=("&", "AT&T", "?a=1&b=2", "& nbsp;"),
        renders=(
            ("_Error code:_ &nbsp; 0x80070005\n", "Error code: 0x80070005"),
            ("Tom &amp; Jerry &mdash; &lt;server&gt; &#169;\n", "Tom & Jerry — <server> ©"),
        ),
    ),
)

RULES_BY_NAME = {rule.name: rule for rule in RULES}
