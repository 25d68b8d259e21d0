"""relevant_incidents (which incidents a message is about) and format_status (what the user reads)."""

from __future__ import annotations

import json

import pytest

from core.records import StatusIncident, StatusReport
from core.status import MAX_LINES, format_status, parse_summary, relevant_incidents, unavailable_report
from tests.conftest import FIXTURES

MULTI = "github_summary_20240121T043744_dbe769b4.json"  # Codespaces major outage + Actions partial outage


def real(name: str) -> StatusReport:
    summary = json.loads((FIXTURES / "statuspage" / name).read_text(encoding="utf-8"))
    return parse_summary(summary, page_url="https://www.githubstatus.com", checked_at="2024-01-21T04:37:44+00:00")


def incident(
    name: str,
    components: list[str] = (),
    status: str = "investigating",
    impact: str = "major",
    latest_update: str = "",
    shortlink: str = "",
) -> StatusIncident:
    return StatusIncident(
        id=name.lower().replace(" ", "-"),
        name=name,
        status=status,
        impact=impact,
        components=list(components),
        updated_at="2026-03-02T09:00:00Z",
        shortlink=shortlink,
        latest_update=latest_update,
    )


def company(components: dict[str, str], incidents=(), maintenances=(), description="Minor Service Outage"):
    """A company page like the design's example (SharePoint degraded, VPN and Email fine)."""
    return StatusReport(
        ok=True,
        page_url="https://status.brightwave.example",
        indicator="minor",
        description=description,
        components=[{"name": n, "status": s} for n, s in components.items()],
        incidents=list(incidents),
        maintenances=list(maintenances),
        checked_at="2026-03-02T09:01:00+00:00",
        error=None,
    )


VPN_INCIDENT = incident(
    "VPN connectivity issues",
    ["VPN"],
    latest_update="Users in Building A cannot connect.",
    shortlink="https://stspg.io/vpn1",
)
SHAREPOINT_INCIDENT = incident(
    "Slow document libraries",
    ["SharePoint"],
    impact="minor",
    latest_update="We are investigating slow SharePoint and OneDrive sync.",
)
BRIGHTWAVE = company(
    {"SharePoint": "degraded_performance", "VPN": "major_outage", "Email": "operational"},
    [SHAREPOINT_INCIDENT, VPN_INCIDENT],
)


# --- relevant_incidents ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "message, keywords, expected",
    [
        ("VPN is down", ["vpn"], ["VPN connectivity issues"]),
        ("the vpn keeps dropping", [], ["VPN connectivity issues"]),  # lower-case, no keyword from classify
        ("sharepoint is super slow today", [], ["Slow document libraries"]),  # via the affected component
        ("OneDrive won't sync", [], ["Slow document libraries"]),  # a service named in the latest update
        ("How do I set up my printer?", ["printer"], []),
        ("hello there", [], []),
    ],
)
def test_a_message_gets_the_incidents_about_what_it_names(message, keywords, expected):
    assert [i["name"] for i in relevant_incidents(BRIGHTWAVE, message, keywords)] == expected


@pytest.mark.parametrize(
    "message",
    [
        "Is there an outage?",
        "is anything down",
        "Is it just me or is everything down?",
        "any known issues right now?",
        "what's the status page saying",
    ],
)
def test_a_generic_outage_question_means_every_current_incident(message):
    assert [i["name"] for i in relevant_incidents(BRIGHTWAVE, message, [])] == [
        "Slow document libraries",
        "VPN connectivity issues",
    ]


def test_a_topic_classify_inferred_does_not_narrow_a_generic_question():
    # classify files "slow" under the laptop topic; the user still asked about outages in general
    assert len(relevant_incidents(BRIGHTWAVE, "Everything is slow, is there an outage?", ["laptop"])) == 2


def test_an_outage_question_about_something_unaffected_gets_nothing():
    assert relevant_incidents(BRIGHTWAVE, "Is there an e-mail outage?", ["e-mail"]) == []


def test_classify_keywords_count_like_words_of_the_message():
    report = company({"Wi-Fi": "partial_outage"}, [incident("Wireless problems on floor 3", ["Wi-Fi"])])
    assert [i["name"] for i in relevant_incidents(report, "I'm offline on the wireless", ["wi-fi"])] == [
        "Wireless problems on floor 3"
    ]
    assert [i["name"] for i in relevant_incidents(report, "can't get on the internet", ["wi-fi"])] == [
        "Wireless problems on floor 3"
    ]


def test_words_every_outage_shares_do_not_make_a_match():
    report = company(
        {"Pull Requests": "operational"},
        [
            incident(
                "Disruption with some services",
                latest_update="We are investigating degraded performance and errors for some users.",
            )
        ],
    )
    assert relevant_incidents(report, "I get an error and everything is slow for users", []) == []


def test_prose_in_an_update_does_not_match_common_words():
    report = company(
        {},
        [
            incident(
                "Incident with Actions", ["Actions"], latest_update="Some jobs fail to run. We will run checks again."
            )
        ],
    )
    assert relevant_incidents(report, "how do I run the installer", []) == []


def test_maintenance_in_progress_counts_but_a_scheduled_one_does_not():
    report = company(
        {"Email": "under_maintenance"},
        maintenances=[
            incident("Mail server upgrade", ["Email"], status="in_progress", impact="maintenance"),
            incident("Email archive move", ["Email"], status="scheduled", impact="maintenance"),
        ],
    )
    assert [m["name"] for m in relevant_incidents(report, "my email is not working", ["e-mail"])] == [
        "Mail server upgrade"
    ]


def test_real_capture_matches_by_component_and_generic_question():
    report = real(MULTI)
    assert [i["name"] for i in relevant_incidents(report, "my codespace won't start", [])] == [
        "Incident with Codespaces"
    ]
    assert [i["name"] for i in relevant_incidents(report, "GitHub Actions jobs are stuck", [])] == [
        "Incident with Actions"
    ]
    assert len(relevant_incidents(report, "is there an outage?", [])) == 2


def test_nothing_is_relevant_when_the_status_could_not_be_checked():
    report = unavailable_report("https://status.example.com", "the status page did not answer within 3 s")
    assert relevant_incidents(report, "is there an outage?", []) == []


# --- format_status --------------------------------------------------------------------------------
def test_the_overview_shows_what_is_broken_with_its_incident_and_the_rest_as_operational():
    report = company(
        {"SharePoint": "degraded_performance", "VPN": "operational", "Email": "operational"},
        [incident("Slow document libraries", ["SharePoint"], impact="minor")],
    )
    lines = format_status(report).splitlines()
    assert lines[:4] == [
        "Current status: Minor Service Outage",
        "⚠️ SharePoint: Degraded performance (investigating)",
        "✅ VPN: Operational",
        "✅ Email: Operational",
    ]
    assert (
        "⚠️ Slow document libraries (investigating, minor impact) — affects SharePoint (degraded performance)"
    ) in lines
    assert lines[-1] == "Status page: https://status.brightwave.example"


def test_many_operational_components_are_summarised_in_one_line():
    text = format_status(real(MULTI))
    assert "🔴 Codespaces: Major outage (investigating)" in text
    assert "🟠 Actions: Partial outage (investigating)" in text
    assert "✅ All other 9 components operational" in text and "Git Operations" not in text
    assert format_status(real("github_summary_20260101T040048_ca482470.json")).splitlines()[:2] == [
        "Current status: All Systems Operational",
        "✅ All 11 components operational",
    ]


def test_maintenance_is_shown_as_in_progress_or_scheduled():
    text = format_status(real("github_summary_20220325T130749_7fd0a6cd.json"))
    assert "🔧 GitHub Actions: Under maintenance (in progress)" in text
    assert "🔧 Maintenance in progress: Team Synchronization for GitHub is Paused" in text
    assert "🗓️ Scheduled maintenance: Migrations to GitHub are Paused" in text


def test_the_relevant_incidents_are_told_with_update_and_link():
    text = format_status(BRIGHTWAVE, [VPN_INCIDENT])
    assert text.splitlines() == [
        "There is a known incident on the status page:",
        "🔴 VPN connectivity issues (investigating, major impact) — affects VPN (major outage)",
        "   Latest update: Users in Building A cannot connect.",
        "   https://stspg.io/vpn1",
    ]
    assert format_status(BRIGHTWAVE, [VPN_INCIDENT, SHAREPOINT_INCIDENT]).startswith(
        "There are 2 known incidents on the status page:"
    )
    assert format_status(BRIGHTWAVE, []) == "The status page shows no known incident about this."


def test_a_bad_day_stays_readable():
    many = company(
        {f"Service {n}": "major_outage" for n in range(30)},
        [incident(f"Incident {n}", latest_update="x" * 1000) for n in range(20)],
    )
    lines = format_status(many).splitlines()
    assert "…and 22 more affected components" in lines and "…and 12 more incidents" in lines
    assert sum(line.startswith("🔴 Service") for line in lines) == MAX_LINES
    assert max(len(line) for line in lines) < 200


def test_an_unchecked_status_says_so_and_why():
    report = unavailable_report("https://status.example.com", "the status page did not answer within 3 s")
    expected = "I couldn't check the status page right now (the status page did not answer within 3 s)."
    assert format_status(report) == expected == format_status(report, [VPN_INCIDENT])


def test_bidi_overrides_and_zero_width_characters_in_a_status_page_are_removed():
    summary = json.loads((FIXTURES / "statuspage" / MULTI).read_text(encoding="utf-8"))
    summary["incidents"][0]["name"] = "E-mail down \u202eTXT.exe"
    summary["incidents"][0]["incident_updates"][0]["body"] = "We are\u200b investigating \u2066now\u2069."
    report = parse_summary(summary, page_url="https://status.example", checked_at="2024-01-21T04:37:44+00:00")
    first = report["incidents"][0]
    assert first["name"] == "E-mail down TXT.exe"
    assert first["latest_update"] == "We are investigating now."
