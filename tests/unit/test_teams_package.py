"""`deskmate teams-package`: the zip Teams takes, built from the settings and refused when Teams would refuse it."""

from __future__ import annotations

import json
import zipfile

from app.channels.teams_package import ICONS, png_size
from app.cli import main
from tests.conftest import FIXTURES, REPO

APP_ID = "00000000-1111-2222-3333-444444444444"


def test_the_package_holds_a_manifest_naming_the_bot_and_the_public_site_and_both_icons(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DESKMATE_TEAMS_APP_ID", APP_ID)
    monkeypatch.setenv("DESKMATE_TEAMS_APP_PASSWORD", "secret")
    monkeypatch.setenv("DESKMATE_PUBLIC_URL", "https://deskmate.example.test")
    out = tmp_path / "pkg" / "deskmate.zip"
    assert main(["teams-package", "--out", str(out), "--icons", str(REPO / "deploy/teams"), "--version", "1.2.3"]) == 0
    with zipfile.ZipFile(out) as package:
        assert sorted(package.namelist()) == ["color.png", "manifest.json", "outline.png"]
        manifest = json.loads(package.read("manifest.json"))
        sizes = {name: png_size(package.read(name)) for name in ("color.png", "outline.png")}
    assert manifest["id"] == APP_ID and manifest["bots"][0]["botId"] == APP_ID and manifest["version"] == "1.2.3"
    assert {"personal", "team", "groupchat"} == set(manifest["bots"][0]["scopes"])
    assert manifest["validDomains"] == ["deskmate.example.test"]
    assert manifest["developer"]["websiteUrl"] == "https://deskmate.example.test"
    assert sizes == {name: (size, size) for name, size in ICONS.values()}


def test_a_package_teams_would_refuse_is_not_written_and_the_reasons_are_named(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DESKMATE_TEAMS_APP_ID", "my-bot")  # not a GUID
    monkeypatch.setenv("DESKMATE_TEAMS_APP_PASSWORD", "secret")
    monkeypatch.setenv("DESKMATE_PUBLIC_URL", "http://deskmate.example.test")  # not https
    out = tmp_path / "deskmate.zip"
    code = main(["teams-package", "--out", str(out), "--icons", str(FIXTURES / "teams"), "--name", "x" * 31])
    error = capsys.readouterr().err
    assert code == 1 and not out.exists()
    assert "GUID" in error and "https://" in error and "name.short" in error and "192×192" in error


def test_without_an_app_id_the_command_says_which_settings_it_needs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DESKMATE_PUBLIC_URL", "https://deskmate.example.test")
    assert main(["teams-package", "--out", str(tmp_path / "p.zip")]) == 2
    assert "DESKMATE_TEAMS_APP_ID" in capsys.readouterr().err
