"""parse_summary against real githubstatus.com captures (tests/fixtures/statuspage) and broken shapes."""

from __future__ import annotations

import copy
import csv
import json
import re
from pathlib import Path

import pytest

from core.status import MAX_UPDATE_CHARS, UNREADABLE, parse_summary
from tests.conftest import FIXTURES

STATUSPAGE = FIXTURES / "statuspage"
ROWS = list(csv.DictReader((STATUSPAGE / "index.csv").open(newline="", encoding="utf-8")))
_ENTRY = re.compile(r"^(?P<name>.*) \[status=(?P<status>[a-z_]+)(?:, impact=(?P<impact>[a-z_]+))?\]$")


def load(name: str) -> dict:
    return json.loads((STATUSPAGE / Path(name).name).read_text(encoding="utf-8"))


def parse(summary) -> dict:
    return parse_summary(summary, page_url="https://www.githubstatus.com", checked_at="2026-01-01T00:00:00+00:00")


def expected_entries(cell: str) -> list[tuple]:
    """index.csv's "name [status=…, impact=…]; …" as (name, status, impact) tuples."""
    entries = []
    for part in filter(None, cell.split("; ")):
        match = _ENTRY.match(part)
        assert match, f"unexpected index.csv entry {part!r}"
        entries.append((match["name"], match["status"], match["impact"]))
    return entries


def test_the_fixtures_cover_every_state_the_checker_must_understand():
    categories = {row["category"] for row in ROWS}
    assert categories == {
        "all_operational",
        "degraded_performance",
        "partial_outage",
        "major_outage",
        "maintenance",
        "scheduled_maintenance_only",
        "incident_no_component_impact",
    }
    assert any(len(expected_entries(row["active_incidents"])) > 1 for row in ROWS)  # concurrent incidents
    assert any("monitoring" in row["active_incidents"] for row in ROWS)
    maintenance_states = {e[1] for row in ROWS for e in expected_entries(row["scheduled_maintenances"])}
    assert {"scheduled", "in_progress"} <= maintenance_states


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['category']}-{Path(r['file']).stem[-8:]}" for r in ROWS])
def test_a_real_capture_parses_to_the_expected_status(row):
    report = parse(load(row["file"]))
    assert report["ok"] is True and report["error"] is None
    assert report["indicator"] == row["status_indicator"]
    assert report["description"] == row["status_description"]
    broken = sorted(f"{c['name']}={c['status']}" for c in report["components"] if c["status"] != "operational")
    assert broken == sorted(filter(None, row["non_operational_components"].split("; ")))
    assert [(i["name"], i["status"], i["impact"]) for i in report["incidents"]] == expected_entries(
        row["active_incidents"]
    )
    assert [(m["name"], m["status"], None) for m in report["maintenances"]] == expected_entries(
        row["scheduled_maintenances"]
    )


def test_components_keep_page_order_and_incidents_name_what_they_affect():
    report = parse(load("github_summary_20240121T043744_dbe769b4.json"))
    assert report["components"][0]["name"] == "Git Operations" and len(report["components"]) == 11
    codespaces, actions = report["incidents"]
    assert codespaces["components"] == ["Codespaces"] and actions["components"] == ["Actions"]
    assert codespaces["id"] and codespaces["shortlink"].startswith("https://stspg.io/")
    assert codespaces["updated_at"].startswith("2024-01-21")
    assert codespaces["latest_update"]  # the newest update's body


def test_the_latest_update_is_the_newest_one_as_plain_text():
    summary = load("github_summary_20210109T161221_fd6568dd.json")
    updates = summary["incidents"][0]["incident_updates"]
    newest = max(updates, key=lambda u: u["display_at"])
    assert parse(summary)["incidents"][0]["latest_update"] == " ".join(newest["body"].split())

    oldest_first = copy.deepcopy(summary)
    oldest_first["incidents"][0]["incident_updates"].sort(key=lambda u: u["display_at"])
    assert parse(oldest_first)["incidents"][0]["latest_update"] == " ".join(newest["body"].split())

    newest_update = oldest_first["incidents"][0]["incident_updates"][-1]
    newest_update["body"] = 'See <a href="https://x.test">our <b>notes</b></a> &amp; wait'
    assert parse(oldest_first)["incidents"][0]["latest_update"] == "See our notes & wait"


def test_a_very_long_update_is_cut_to_a_snippet():
    summary = load("github_summary_20260615T162708_7e13fa22.json")
    for update in summary["incidents"][0]["incident_updates"]:
        update["body"] = "word " * 1000
    latest = parse(summary)["incidents"][0]["latest_update"]
    assert len(latest) == MAX_UPDATE_CHARS and latest.endswith("…")


def test_resolved_incidents_and_completed_maintenance_are_not_current():
    summary = load("github_summary_20240121T043744_dbe769b4.json")
    summary["incidents"][1]["status"] = "resolved"
    summary["scheduled_maintenances"] = [
        {"id": "m1", "name": "Old window", "status": "completed", "impact": "maintenance"},
        {"id": "m2", "name": "Tonight", "status": "scheduled", "impact": "maintenance"},
        {"id": "m3", "name": "Now", "status": "verifying", "impact": "maintenance"},
    ]
    report = parse(summary)
    assert [i["name"] for i in report["incidents"]] == ["Incident with Codespaces"]
    assert [(m["name"], m["status"]) for m in report["maintenances"]] == [
        ("Tonight", "scheduled"),
        ("Now", "verifying"),
    ]


def test_component_groups_list_their_members_not_the_group():
    # GitHub's page has no groups, so this shape is built by hand after Statuspage's documented format
    summary = {
        "status": {"indicator": "minor", "description": "Minor Service Outage"},
        "components": [
            {
                "id": "g1",
                "name": "Microsoft 365",
                "status": "partial_outage",
                "group": True,
                "components": ["c1", "c2"],
            },
            {"id": "c1", "name": "Outlook", "status": "partial_outage", "group": False, "group_id": "g1"},
            {"id": "c2", "name": "Teams", "status": "operational", "group": False, "group_id": "g1"},
            {"id": "c3", "name": "VPN", "status": "operational"},
        ],
    }
    assert parse(summary)["components"] == [
        {"name": "Outlook", "status": "partial_outage"},
        {"name": "Teams", "status": "operational"},
        {"name": "VPN", "status": "operational"},
    ]


def test_the_status_json_subset_parses_with_no_components():
    report = parse(
        {"page": {"name": "Acme"}, "status": {"indicator": "none", "description": "All Systems Operational"}}
    )
    assert report["ok"] and report["indicator"] == "none" and report["components"] == [] == report["incidents"]


@pytest.mark.parametrize(
    "summary, reason",
    [
        (None, "not a Statuspage summary"),
        ([1, 2], "not a Statuspage summary"),
        ("<html>", "not a Statuspage summary"),
        ({"page": {}}, "no overall status"),
        ({"status": "ok"}, "no overall status"),
        ({"status": {"description": "fine"}}, "no overall status"),
        ({"status": {"indicator": "none"}, "components": {"a": 1}}, "'components' is not a list"),
        ({"status": {"indicator": "none"}, "incidents": "none"}, "'incidents' is not a list"),
    ],
)
def test_a_summary_of_the_wrong_shape_is_unreadable_not_an_exception(summary, reason):
    report = parse(summary)
    assert report["ok"] is False and report["indicator"] == "unknown"
    assert report["error"].startswith(UNREADABLE) and reason in report["error"]
    assert report["page_url"] == "https://www.githubstatus.com" and report["components"] == []


def test_malformed_entries_are_skipped_and_the_rest_is_kept():
    summary = {
        "status": {"indicator": "major", "description": "Partial System Outage"},
        "components": [
            None,
            {"name": ""},
            {"status": "major_outage"},
            {"name": " VPN ", "status": "MAJOR_OUTAGE"},
            {"name": "Mail"},
        ],
        "incidents": [
            7,
            {
                "name": "VPN down",
                "status": "identified",
                "impact": None,
                "components": None,
                "incident_updates": [None, {"body": None}],
            },
        ],
    }
    report = parse(summary)
    assert report["ok"] is True
    assert report["components"] == [{"name": "VPN", "status": "major_outage"}, {"name": "Mail", "status": "unknown"}]
    assert report["incidents"] == [
        {
            "id": "",
            "name": "VPN down",
            "status": "identified",
            "impact": "none",
            "components": [],
            "updated_at": "",
            "shortlink": "",
            "latest_update": "",
        }
    ]
