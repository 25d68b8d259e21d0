"""The Teams app package an admin uploads (manifest.json + two icons, zipped), built by `deskmate teams-package`
from the bot's app id and deskmate's public address, and checked against what Teams requires before it is written."""

from __future__ import annotations

import json
import re
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

MANIFEST_VERSION = "1.17"
SCHEMA_URL = f"https://developer.microsoft.com/json-schemas/teams/v{MANIFEST_VERSION}/MicrosoftTeams.schema.json"
ICONS = {"color": ("color.png", 192), "outline": ("outline.png", 32)}  # Teams' sizes, in pixels (square)
_GUID = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
_SEMVER = re.compile(r"^\d+\.\d+\.\d+$")
_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")
# the schema's length limits of the fields deskmate fills
LIMITS = {"developer.name": 32, "name.short": 30, "name.full": 100, "description.short": 80, "description.full": 4000}


class PackageError(ValueError):
    """The package would be refused by Teams; the message says what to change."""


@dataclass(frozen=True)
class PackageInput:
    app_id: str
    public_url: str
    short_name: str = "deskmate"
    full_name: str = "deskmate IT support"
    developer: str = "IT support"
    version: str = "1.0.0"
    accent_colour: str = "#2563EB"


def manifest_for(spec: PackageInput) -> dict:
    """The app manifest: one bot, in personal chats, team channels and group chats."""
    site = spec.public_url.rstrip("/")
    return {
        "$schema": SCHEMA_URL,
        "manifestVersion": MANIFEST_VERSION,
        "version": spec.version,
        "id": spec.app_id,
        "developer": {
            "name": spec.developer,
            "websiteUrl": site,
            "privacyUrl": f"{site}/docs",
            "termsOfUseUrl": f"{site}/docs",
        },
        "name": {"short": spec.short_name, "full": spec.full_name},
        "description": {
            "short": "Answers IT questions from your own documentation, with sources.",
            "full": (
                "deskmate answers IT-support questions from your organisation's documentation and cites the pages "
                "it used. It walks you through fixes step by step, drafts a ticket when a fix does not work and "
                "tells you in the conversation when the ticket's status changes. Ask it in a personal chat, or "
                "mention it in a channel or group chat."
            ),
        },
        "icons": {kind: name for kind, (name, _) in ICONS.items()},
        "accentColor": spec.accent_colour,
        "bots": [
            {
                "botId": spec.app_id,
                "scopes": ["personal", "team", "groupchat"],
                "isNotificationOnly": False,
                "supportsFiles": False,
            }
        ],
        "permissions": ["identity", "messageTeamMembers"],
        "validDomains": [urlparse(site).hostname or site],
    }


def png_size(data: bytes) -> tuple[int, int]:
    """A PNG's width and height (PackageError when it is no PNG)."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise PackageError("an icon is not a PNG file")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def check_manifest(manifest: dict, icons: dict[str, bytes]) -> None:
    """What Teams refuses a package for, checked before it is built."""
    problems: list[str] = []
    for field in ("manifestVersion", "version", "id", "developer", "name", "description", "icons", "accentColor"):
        if not manifest.get(field):
            problems.append(f"the manifest needs `{field}`")
    if not _GUID.match(str(manifest.get("id", ""))):
        problems.append("the app id (DESKMATE_TEAMS_APP_ID) must be a GUID, as the Azure Bot shows it")
    if not _SEMVER.match(str(manifest.get("version", ""))):
        problems.append("the version must be MAJOR.MINOR.PATCH, e.g. 1.0.0")
    if not _COLOUR.match(str(manifest.get("accentColor", ""))):
        problems.append("the accent colour must be #RRGGBB")
    for dotted, limit in LIMITS.items():
        section, _, key = dotted.partition(".")
        value = str((manifest.get(section) or {}).get(key) or "")
        if not value.strip():
            problems.append(f"`{dotted}` must not be empty")
        elif len(value) > limit:
            problems.append(f"`{dotted}` is {len(value)} characters; Teams allows {limit}")
    for key in ("websiteUrl", "privacyUrl", "termsOfUseUrl"):
        if not str((manifest.get("developer") or {}).get(key, "")).startswith("https://"):
            problems.append(f"developer.{key} must be an https:// address (set DESKMATE_PUBLIC_URL to one)")
    bots = manifest.get("bots") or []
    if not bots or any(b.get("botId") != manifest.get("id") for b in bots):
        problems.append("the bot's id must be the app id")
    for kind, (name, size) in ICONS.items():
        if manifest.get("icons", {}).get(kind) != name or name not in icons:
            problems.append(f"the {kind} icon {name} is missing")
            continue
        try:
            if png_size(icons[name]) != (size, size):
                problems.append(
                    f"the {kind} icon must be {size}×{size} pixels, not {'×'.join(map(str, png_size(icons[name])))}"
                )
        except PackageError as exc:
            problems.append(f"the {kind} icon: {exc}")
    if problems:
        raise PackageError("; ".join(problems))


def build_package(spec: PackageInput, icons_dir: Path, output: Path) -> dict:
    """Write the zip Teams takes (manifest.json and the two icons at its root); the manifest it holds."""
    icons = {name: (icons_dir / name).read_bytes() for name, _ in ICONS.values() if (icons_dir / name).is_file()}
    manifest = manifest_for(spec)
    check_manifest(manifest, icons)
    output.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(output, "w", compression=zipfile.ZIP_DEFLATED) as package:
        package.writestr("manifest.json", json.dumps(manifest, indent=2))
        for name, data in icons.items():
            package.writestr(name, data)
    return manifest
