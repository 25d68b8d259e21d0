"""The ticket desk against a real HTTP server on 127.0.0.1 that speaks Jira's REST API v2.

Local first, Jira best-effort: every Jira failure (401, 429, 500, timeout, nobody listening) leaves a
local ticket with the reason recorded, never an error to the caller.
"""

from __future__ import annotations

import pytest

from app.adapters.jira import JiraClient, user_label
from app.adapters.ticket_store import SqliteTicketStore
from app.adapters.tickets import TicketService, build_ticket_desk
from core.records import TicketDraft
from tests.e2e.jira_server import JiraServer
from tests.e2e.servers import free_port

pytestmark = pytest.mark.slow
TOKEN = "jira-test-token"


def draft(summary="VPN drops every few minutes", topic="vpn connection drops", priority="high") -> TicketDraft:
    return TicketDraft(
        summary=summary,
        description="The VPN disconnects every few minutes on the office Wi-Fi.",
        priority=priority,
        topic=topic,
        os="macos",
        steps_tried=[
            {"step": "Restart Cisco Secure Client", "outcome": "failed"},
            {"step": "Forget and rejoin the Wi-Fi", "outcome": "failed"},
        ],
        conversation=[
            {"role": "user", "content": "my vpn keeps dropping, I'm [REDACTED:EMAIL_1]"},
            {"role": "assistant", "content": "Try restarting Cisco Secure Client."},
            {"role": "user", "content": "still drops"},
        ],
    )


@pytest.fixture
def desk_for(tmp_path):
    made: list[TicketService] = []

    def factory(server_url: str, *, token: str = TOKEN, **client_options) -> TicketService:
        jira = JiraClient(server_url, "IT", token, timeout_s=client_options.pop("timeout_s", 5.0), **client_options)
        desk = TicketService(SqliteTicketStore(tmp_path / f"tickets-{len(made)}.sqlite"), jira)
        made.append(desk)
        return desk

    yield factory
    for desk in made:
        desk.shutdown()


def test_a_ticket_is_raised_in_jira_and_linked_to_the_local_one(desk_for):
    with JiraServer() as server:
        desk = desk_for(server.url)
        ticket = desk.create(draft(), session_id="s-1", user_id="alice")

        assert ticket["jira_key"] == "IT-1" and ticket["jira_url"] == f"{server.url}/browse/IT-1"
        assert ticket["jira_error"] is None and desk.get(ticket["id"])["jira_key"] == "IT-1"
        issue = server.issues["IT-1"]
        assert issue["summary"] == "VPN drops every few minutes" and issue["priority"] == "High"
        assert issue["issuetype"] == "Task"
        assert set(issue["labels"]) == {"deskmate", f"deskmate-{ticket['id']}", user_label("alice")}
        assert "alice" not in " ".join(issue["labels"])
        for expected in (
            "Restart Cisco Secure Client — failed",
            "user: still drops",
            "[REDACTED:EMAIL_1]",
            ticket["id"],
            "OS: macos",
        ):
            assert expected in issue["description"]
        assert server.requests[0]["headers"]["authorization"] == f"Bearer {TOKEN}"


def test_the_users_issues_are_found_by_jql_and_their_jira_status_is_shown(desk_for):
    with JiraServer() as server:
        desk = desk_for(server.url)
        alice = desk.create(draft(), session_id="s-1", user_id="alice")
        desk.create(draft("Printer jams", "printer jam"), session_id="s-2", user_id="bob")
        server.set_status("IT-1", "In Progress")

        found = server.search(f'project = "IT" AND labels = "{user_label("alice")}"', 50)[1]["issues"]
        assert [i["key"] for i in found] == ["IT-1"]  # the user label finds exactly her issue

        listed = desk.list_for(user_id="alice")
        assert [(t["id"], t["status"], t["jira_status"]) for t in listed] == [(alice["id"], "open", "In Progress")]
        searches = server.calls("GET", "/rest/api/2/search")
        assert len(searches) == 1 and searches[0]["query"]["jql"] == "key in (IT-1)"
        assert desk.get(alice["id"])["jira_status"] == "In Progress"  # remembered locally


def test_an_issue_resolved_in_jira_closes_the_local_ticket(desk_for):
    with JiraServer() as server:
        desk = desk_for(server.url)
        ticket = desk.create(draft(), session_id="s-1", user_id="alice")
        server.set_status("IT-1", "Done")

        refreshed = desk.get(ticket["id"], refresh=True)
        assert refreshed["status"] == "closed" and refreshed["jira_status"] == "Done"
        assert refreshed["comments"] == ["Resolved in Jira: IT-1 is Done."]
        assert desk.find_open(session_id="s-1", user_id="alice", topic="vpn connection drops") is None
        assert desk.list_for(user_id="alice", status="open") == []


@pytest.mark.parametrize("resolution_required", [False, True])
def test_closing_a_ticket_comments_on_and_transitions_the_jira_issue_to_done(desk_for, resolution_required):
    with JiraServer(resolution_required=resolution_required) as server:
        desk = desk_for(server.url)
        ticket = desk.create(draft(), session_id="s-1", user_id="alice")

        closed = desk.close(ticket["id"], "The user reported that it works now.")

        assert closed["status"] == "closed" and closed["jira_status"] == "Done" and closed["jira_error"] is None
        assert closed["comments"] == ["The user reported that it works now."]
        issue = server.issues["IT-1"]
        assert issue["status"] == "Done" and issue["comments"] == ["The user reported that it works now."]
        assert issue["resolution"] == ("Done" if resolution_required else None)
        posted = server.calls("POST", "/rest/api/2/issue/IT-1/transitions")
        assert [p["body"]["transition"]["id"] for p in posted] == ["31"]  # "Done", not the first one listed


def test_jira_cloud_uses_basic_auth_and_the_jql_search_endpoint(desk_for):
    with JiraServer(email="it-bot@example.com", cloud=True) as server:
        desk = desk_for(server.url, email="it-bot@example.com")
        ticket = desk.create(draft(), session_id="s-1", user_id="alice")
        server.set_status("IT-1", "In Progress")

        assert desk.list_for(session_id="s-1")[0]["jira_status"] == "In Progress"
        assert ticket["jira_key"] == "IT-1"
        assert server.requests[0]["headers"]["authorization"].startswith("Basic ")
        assert [r["path"] for r in server.calls("GET", "/rest/api/2/search")] == ["/rest/api/2/search/jql"]


def test_a_server_without_the_jql_endpoint_is_searched_on_the_classic_one(desk_for):
    # Basic auth on Data Center (JIRA_EMAIL set to a user name): /search/jql is 404 there, /search works
    with JiraServer(email="it-bot") as server:
        desk = desk_for(server.url, email="it-bot")
        desk.create(draft(), session_id="s-1", user_id="alice")
        server.set_status("IT-1", "In Progress")
        assert desk.list_for(session_id="s-1")[0]["jira_status"] == "In Progress"
        assert desk.list_for(session_id="s-1")[0]["jira_status"] == "In Progress"
        paths = [r["path"] for r in server.calls("GET", "/rest/api/2/search")]
        assert paths == ["/rest/api/2/search/jql", "/rest/api/2/search", "/rest/api/2/search"]  # learnt once


def test_a_rejected_token_keeps_the_ticket_local_and_says_to_check_the_token(desk_for):
    with JiraServer() as server:
        desk = desk_for(server.url, token="expired-token")
        ticket = desk.create(draft(), session_id="s-1", user_id="alice")

        assert ticket["jira_key"] is None and ticket["status"] == "open"
        assert ticket["jira_error"] == "Jira answered 401 Unauthorized — check JIRA_TOKEN."
        assert desk.get(ticket["id"])["jira_error"] == ticket["jira_error"]
        assert server.issues == {}


def test_a_scripted_401_is_recorded_the_same_way(desk_for):
    with JiraServer() as server:
        server.fail_next(401)
        ticket = desk_for(server.url).create(draft(), session_id="s-1", user_id="alice")
        assert ticket["jira_key"] is None and "401" in ticket["jira_error"] and "JIRA_TOKEN" in ticket["jira_error"]


def test_a_429_with_a_short_retry_after_is_retried_once_and_succeeds(desk_for):
    waits: list[float] = []  # the client's Retry-After waits, recorded instead of slept
    with JiraServer() as server:
        server.fail_next(429, retry_after="1")
        ticket = desk_for(server.url, sleep=waits.append).create(draft(), session_id="s-1", user_id="alice")

        assert ticket["jira_key"] == "IT-1" and ticket["jira_error"] is None
        assert len(server.calls("POST", "/rest/api/2/issue")) == 2
        assert waits == [1.0]  # the retry came after the wait Jira asked for


def test_a_429_is_not_retried_twice_nor_when_jira_asks_for_a_long_wait(desk_for):
    waits: list[float] = []
    with JiraServer() as server:
        desk = desk_for(server.url, sleep=waits.append)
        server.fail_next(429, retry_after="1", times=2)
        twice = desk.create(draft(), session_id="s-1", user_id="alice")
        assert twice["jira_key"] is None and "429" in twice["jira_error"]
        assert len(server.calls("POST", "/rest/api/2/issue")) == 2 and waits == [1.0]

        server.fail_next(429, retry_after="30")
        patient = desk.create(draft("Printer jams", "printer jam"), session_id="s-2", user_id="bob")
        assert patient["jira_key"] is None and "retry after 30 s" in patient["jira_error"]
        assert len(server.calls("POST", "/rest/api/2/issue")) == 3
        assert waits == [1.0]  # no 30 s wait inside the user's request: the ticket stays local at once


def test_a_jira_500_leaves_a_local_only_ticket_with_the_reason(desk_for):
    with JiraServer() as server:
        server.fail_next(500)
        ticket = desk_for(server.url).create(draft(), session_id="s-1", user_id="alice")
        assert (
            ticket["jira_key"] is None
            and ticket["jira_error"] == "Jira answered 500 Internal Server Error: scripted 500"
        )
        assert len(server.calls("POST", "/rest/api/2/issue")) == 1  # a 500 is not retried


def test_a_field_jira_refuses_is_named_in_the_reason(desk_for):
    with JiraServer(priorities=("P1", "P2", "P3", "P4")) as server:
        ticket = desk_for(server.url).create(draft(), session_id="s-1", user_id="alice")
        assert ticket["jira_key"] is None
        assert ticket["jira_error"].startswith("Jira answered 400 Bad Request: priority: Specify the Priority")

        mapped = desk_for(server.url, priority_names=("P4", "P3", "P2", "P1"))
        assert mapped.create(draft(), session_id="s-1", user_id="alice")["jira_key"] == "IT-1"
        assert server.issues["IT-1"]["priority"] == "P2"


def test_nobody_listening_on_the_jira_port_leaves_a_local_only_ticket(desk_for):
    desk = desk_for(f"http://127.0.0.1:{free_port()}")
    ticket = desk.create(draft(), session_id="s-1", user_id="alice")
    assert ticket["jira_key"] is None and ticket["jira_error"].startswith("Jira is unreachable at http://127.0.0.1:")
    assert desk.list_for(user_id="alice")[0]["id"] == ticket["id"]


def test_a_jira_slower_than_the_timeout_leaves_a_local_only_ticket(desk_for):
    with JiraServer(delay_s=5) as server:
        ticket = desk_for(server.url, timeout_s=0.3).create(draft(), session_id="s-1", user_id="alice")
        # the client gave up (the reply was still seconds away), kept the ticket and did not try again
        assert (
            ticket["jira_key"] is None and ticket["jira_error"] == f"Jira did not answer within 0.3 s ({server.url})."
        )
        assert len(server.calls("POST", "/rest/api/2/issue")) == 1


def test_failures_after_creation_degrade_too(desk_for):
    with JiraServer() as server:
        desk = desk_for(server.url)
        ticket = desk.create(draft(), session_id="s-1", user_id="alice")
        server.set_status("IT-1", "In Progress")
        desk.list_for(user_id="alice")

        server.fail_next(500)  # the status refresh fails: the listing is the local one
        assert [t["jira_status"] for t in desk.list_for(user_id="alice")] == ["In Progress"]

        server.fail_next(503)  # the Jira comment fails: closed locally, reason recorded, Jira untouched
        closed = desk.close(ticket["id"], "The user reported that it works now.")
        assert closed["status"] == "closed"
        assert (
            closed["jira_error"] == "Closing the Jira issue failed: Jira answered 503 Service Unavailable: scripted 503"
        )
        assert server.issues["IT-1"]["status"] == "In Progress"


def test_the_settings_build_a_jira_backed_desk(make_settings):
    with JiraServer(email="it-bot@example.com", cloud=True) as server:
        settings = make_settings(
            jira_url=server.url + "/",
            jira_project_key="IT",
            jira_token=TOKEN,
            jira_email="it-bot@example.com",
            jira_issue_type="IT Help",
            jira_priorities="Low,Medium,High,Highest",
        )
        desk = build_ticket_desk(settings)
        try:
            ticket = desk.create(draft(priority="critical"), session_id="s-1", user_id="alice")
        finally:
            desk.shutdown()
        assert ticket["jira_url"] == f"{server.url}/browse/IT-1"
        assert server.issues["IT-1"]["issuetype"] == "IT Help" and server.issues["IT-1"]["priority"] == "Highest"
        assert settings.storage.tickets_db.is_file()
