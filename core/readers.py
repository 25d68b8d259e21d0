"""Who a section is written for: the employee at the keyboard (`user`) or the IT team (`admin`).

Help articles mix both: "Restart Outlook" beside "In the admin center, set the tenant policy" or "Save this script
as fix.vbs and deploy it". An employee asking for help gets the user path; admin-only material is offered as
something for the IT team (or goes into the ticket), never as their step 1.

This is not `audience` (core/filters.py), which says which *groups may read* a document; `reader` says whom a
section *addresses*. It is derived at indexing from the section's headings and text, from wording that holds
across products: administrator headings, tenant / organisation-wide settings, Group Policy, registry edits,
PowerShell cmdlets and scripts to save and run. The rules are data (READER_SIGNALS), each with examples the
tests run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

Reader = Literal["user", "admin"]
READERS: tuple[str, ...] = ("user", "admin")
READER_FIELD = "reader"


@dataclass(frozen=True)
class ReaderSignal:
    name: str
    pattern: re.Pattern[str]
    matches: tuple[str, ...]  # text this signal must find
    misses: tuple[str, ...] = ()  # text it must leave alone
    alone: bool = True  # on several lines, enough by itself (False: only beside evidence of another kind)


def _signal(
    name: str, pattern: str, matches: Sequence[str], misses: Sequence[str] = (), flags=re.I, alone: bool = True
) -> ReaderSignal:
    return ReaderSignal(name, re.compile(pattern, flags), tuple(matches), tuple(misses), alone)


# A heading that addresses administrators makes its whole subtree admin material.
ADMIN_HEADING = _signal(
    "admin heading",
    r"^(admins?|administrators?|it pros?|it professionals?)( only)?$|"
    r"\b(for (it )?(admins?|administrators?|it pros?|it professionals?|it departments?|it teams?|it staff)|"
    r"admin(istrator)? (steps|instructions|guide|tasks?)|"
    r"tenant|group polic(y|ies)|registry|powershell|(organi[sz]ation|org)[- ]wide|for (your|the|an?) "
    r"(organi[sz]ation|domain|tenant)|deploy(ing|ment)?\b|scripts?\b)",
    [
        "For IT administrators",
        "Method 3: Use Group Policy",
        "Use PowerShell",
        "Admins",
        "Edit the registry",
        "Deploy the fix to all devices",
        "Option 2: Organization-wide setting",
        "Set up the feature for your organization",
    ],
    ["Restart the app", "Method 1: Sign out and back in", "Check your settings", "Contact your administrator"],
)

# Body signals: two different kinds (or one kind on several lines) make a section admin material.
READER_SIGNALS: tuple[ReaderSignal, ...] = (
    _signal(
        "powershell cmdlet",
        r"\b(Get|Set|New|Remove|Add|Enable|Disable|Connect|Grant|Revoke|Import|Export|Invoke|Update|Install|"
        r"Uninstall|Register|Unregister|Start|Stop|Restart|Test|Clear|Reset|Search|Move)-(?!(Ins?|Ons?)\b)[A-Z][A-Za-z]{2,}\b",
        ["Set-Mailbox -Identity user@contoso.com", "Run Get-CsOnlineUser", "Connect-ExchangeOnline"],
        ["a Wi-Fi network", "Set-up is simple", "the Add-in loads", "Start-up folder", "the COM Add-Ins dialog"],
        flags=0,
    ),
    _signal(
        "registry edit",
        r"\bHKEY_[A-Z_]+|\bHK(LM|CU)\\|\bregedit(\.exe)?\b|\bregistry (key|editor|value|subkey|entry)\b|"
        r"\b(DWORD|REG_[A-Z_]+)\b",
        ["HKEY_CURRENT_USER\\Software\\Microsoft", "Open Registry Editor", "create a DWORD value", "run regedit"],
        ["Register the device", "your registration"],
    ),
    _signal(
        "group policy",
        r"\bgroup polic(y|ies)\b|\bgpedit\b|\bgpupdate\b|\bGPOs?\b|\b(administrative templates?|policy settings?)\b",
        ["In Group Policy Management", "run gpupdate /force", "the policy setting Turn off"],
        ["our password policy says"],
    ),
    _signal(
        "tenant or organisation setting",
        r"\btenant\b|\badmin (center|centre|portal|console)\b|\b(global|tenant|exchange|sharepoint|teams|service) "
        r"admin(istrator)?s?\b|\bfor (all|every) (users|user accounts|mailboxes|devices) in (the|your) "
        r"(organi[sz]ation|tenant|domain)\b|\b(organi[sz]ation|org)[- ]wide\b|\bon behalf of (all )?users\b",
        [
            "Sign in to the admin center",
            "your tenant settings",
            "a global administrator must",
            "for all users in your organization",
        ],
        ["Contact your administrator", "ask your IT admin for help", "your organization's sign-in page"],
    ),
    _signal(
        "script to save and run",
        r"\b(save|copy|paste) (the following|this|the) (script|code)\b|\b\w+\.(vbs|ps1|bat|cmd|psm1)\b|"
        r"\b(vbscript|powershell script|batch file|script file)\b|\bdeploy (the|this|it)\b",
        ["Save the following script as fix.vbs", "run Repair.ps1", "create a batch file", "Deploy this to devices"],
        ["the script of the movie"],
    ),
    _signal(
        "administrator role",
        r"\b(administrators? (can|must|should|need to|have to)|as an? (\w+ )?administrator,? (you )?(can|must|should)|"
        r"requires? (the )?\w+ admin(istrator)? role|you must be an? (\w+ )?admin(istrator)?|"
        r"(if|when) you(\'re| are) (an|the) (\w+ )?admin(istrator)?)\b",
        ["Administrators can turn this off", "You must be a global administrator", "If you're an admin"],
        ["Contact your administrator", "Run as administrator"],
        alone=False,  # "your administrator can set a quota" tells an employee what IT may do for them
    ),
)

MIN_SIGNAL_LINES = 2  # one kind of admin evidence on this many lines (a cmdlet in every step) is enough


def heading_addresses_admins(heading: str) -> bool:
    return bool(ADMIN_HEADING.pattern.search(heading))


_STEP = re.compile(r"^\d+[.)]\s+\S")


def _step_blocks(lines: Sequence[str]) -> list[list[str]]:
    """The numbered steps of a section, each with what is indented under it."""
    blocks: list[list[str]] = []
    open_step = False
    for line in lines:
        if _STEP.match(line):
            blocks.append([line])
            open_step = True
        elif open_step and (not line.strip() or line.startswith((" ", "\t"))):
            blocks[-1].append(line)
        else:
            open_step = False
    return blocks


def _admin_step(block: Sequence[str]) -> bool:
    text = " ".join(block)
    return any(s.alone and s.pattern.search(text) for s in READER_SIGNALS) or _admin_evidence(block)


def section_reader(path: Sequence[str], lines: Sequence[str]) -> Reader:
    """Whom a section addresses: `admin` when a heading on its path says so; for a procedure, when its first step
    is admin material (an admin note after the employee's own steps does not make them the IT team's); else when
    its body carries admin evidence of two kinds, or one kind on several lines."""
    if any(heading_addresses_admins(heading) for heading in path):
        return "admin"
    steps = _step_blocks(lines)
    if len(steps) >= 2:
        admin_steps = [_admin_step(block) for block in steps]
        return "admin" if admin_steps[0] or sum(admin_steps) * 2 >= len(steps) else "user"
    return "admin" if _admin_evidence(lines) else "user"


def _admin_evidence(lines: Sequence[str]) -> bool:
    kinds = 0
    for signal in READER_SIGNALS:
        hits = sum(1 for line in lines if signal.pattern.search(line))
        if hits >= MIN_SIGNAL_LINES and signal.alone:
            return True
        kinds += hits > 0
    return kinds >= 2


def is_admin(chunk: Mapping[str, Any]) -> bool:
    """A chunk (or section) written for the IT team; chunks indexed before readers existed count as user ones."""
    return chunk.get(READER_FIELD) == "admin"
