"""TicketService: de-duplication, local-first creation, Jira degradation, closing, status merge."""

from __future__ import annotations

import pytest

from app.adapters.jira import JiraIssue
from app.adapters.ticket_store import SqliteTicketStore
from app.adapters.tickets import TicketService, topic_similarity, topic_words
from core.errors import JiraError
from core.ports import TicketDesk
from tests.fakes import support_state
from tests.unit.test_ticket_store import draft


class RecordingJira:
    """A JiraClient double: records calls; `fail_with` makes the next call raise."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.issues: dict[str, JiraIssue] = {}
        self.fail_with: JiraError | None = None

    def _maybe_fail(self) -> None:
        if self.fail_with is not None:
            error, self.fail_with = self.fail_with, None
            raise error

    def create_issue(self, ticket) -> JiraIssue:
        self.calls.append(("create", ticket["id"]))
        self._maybe_fail()
        key = f"IT-{len(self.issues) + 1}"
        self.issues[key] = JiraIssue(
            key=key, url=f"https://jira.example/browse/{key}", status="To Do", status_category="new"
        )
        return self.issues[key]

    def add_comment(self, key: str, body: str) -> None:
        self.calls.append(("comment", key, body))
        self._maybe_fail()

    def transition_to_done(self, key: str) -> str:
        self.calls.append(("transition", key))
        self._maybe_fail()
        return "Done"

    def issues_by_key(self, keys) -> dict[str, JiraIssue]:
        self.calls.append(("search", tuple(keys)))
        self._maybe_fail()
        return {k: self.issues[k] for k in keys if k in self.issues}

    def close(self) -> None:
        self.calls.append(("close",))


@pytest.fixture
def jira():
    return RecordingJira()


@pytest.fixture
def desk(tmp_path, jira):
    service = TicketService(SqliteTicketStore(tmp_path / "tickets.sqlite"), jira)
    yield service
    service.shutdown()


@pytest.fixture
def local_desk(tmp_path):
    service = TicketService(SqliteTicketStore(tmp_path / "local.sqlite"))
    yield service
    service.shutdown()


def test_the_service_is_a_ticket_desk(desk):
    assert isinstance(desk, TicketDesk)


# --- de-duplication ------------------------------------------------------------------------------
def test_an_open_ticket_of_the_same_session_is_found_whatever_the_topic(local_desk):
    ticket = local_desk.create(draft(topic="outlook password prompt"), session_id="s-1", user_id="u-1")
    found = local_desk.find_open(session_id="s-1", user_id="someone-else", topic="printer jam")
    assert found["id"] == ticket["id"]


def test_an_open_ticket_of_the_same_user_on_a_similar_topic_is_found(local_desk):
    ticket = local_desk.create(draft(topic="VPN not connecting"), session_id="s-1", user_id="u-1")
    found = local_desk.find_open(session_id="s-2", user_id="u-1", topic="vpn connection fails")
    assert found["id"] == ticket["id"]


def test_the_most_similar_open_ticket_of_the_user_is_chosen(local_desk):
    local_desk.create(draft(topic="outlook calendar sync"), session_id="s-1", user_id="u-1")
    best = local_desk.create(draft(topic="outlook password prompt loop"), session_id="s-2", user_id="u-1")
    found = local_desk.find_open(session_id="s-3", user_id="u-1", topic="Outlook password prompt keeps looping")
    assert found["id"] == best["id"]


def test_a_different_topic_another_users_ticket_or_an_anonymous_user_find_nothing(local_desk):
    local_desk.create(draft(topic="vpn not working"), session_id="s-1", user_id="u-1")
    assert local_desk.find_open(session_id="s-2", user_id="u-1", topic="printer not working") is None
    assert local_desk.find_open(session_id="s-2", user_id="u-2", topic="vpn not working") is None
    assert local_desk.find_open(session_id="s-2", user_id=" ", topic="vpn not working") is None


def test_anonymous_users_are_never_grouped_by_topic(local_desk):
    local_desk.create(draft(topic="vpn not working"), session_id="s-1", user_id="anonymous")
    assert local_desk.find_open(session_id="s-2", user_id="anonymous", topic="vpn not working") is None
    with pytest.raises(ValueError):
        local_desk.list_for(user_id="anonymous")
    assert len(local_desk.list_for(user_id="anonymous", session_id="s-1")) == 1


def test_closed_tickets_are_not_returned(local_desk):
    ticket = local_desk.create(draft(topic="vpn not connecting"), session_id="s-1", user_id="u-1")
    local_desk.close(ticket["id"], "it works now")
    assert local_desk.find_open(session_id="s-1", user_id="u-1", topic="vpn not connecting") is None


def test_topics_compare_by_their_content_words():
    assert topic_words("The VPN isn't connecting!") == {"vpn", "connect"}
    assert topic_similarity("vpn not connecting", "VPN connection fails") == 1.0
    assert topic_similarity("vpn not working", "printer not working") == 0.0
    assert topic_similarity("outlook password prompt", "outlook calendar") == pytest.approx(1 / 4)
    assert topic_similarity("", "") == 0.0 and topic_similarity("it is not working", "not working") == 0.0


# --- creation ------------------------------------------------------------------------------------
def test_without_jira_a_ticket_is_local_and_complete(local_desk):
    ticket = local_desk.create(draft(priority="URGENT"), session_id="s-1", user_id="u-1")
    assert ticket["status"] == "open" and ticket["jira_key"] is None and ticket["jira_error"] is None
    assert ticket["priority"] == "medium"  # unknown priorities are not stored as given
    assert local_desk.get(ticket["id"]) == ticket and not local_desk.jira_enabled


def test_the_store_keeps_a_bounded_draft(local_desk):
    messages = [{"role": "user", "content": f"message {n}", "debug": "not part of a ticket"} for n in range(300)]
    ticket = local_desk.create(draft(conversation=messages, description="x" * 50_000), session_id="s", user_id="u")
    assert len(ticket["conversation"]) == 100 and ticket["conversation"][-1] == {
        "role": "user",
        "content": "message 299",
    }
    assert len(ticket["description"]) == 8_000


def test_a_draft_without_summary_is_refused(local_desk):
    with pytest.raises(ValueError, match="summary"):
        local_desk.create(draft(summary="  "), session_id="s-1", user_id="u-1")


def test_a_created_ticket_is_linked_to_its_jira_issue(desk, jira):
    ticket = desk.create(draft(priority="High"), session_id="s-1", user_id="u-1")
    assert (ticket["jira_key"], ticket["jira_url"]) == ("IT-1", "https://jira.example/browse/IT-1")
    assert ticket["priority"] == "high" and jira.calls == [("create", ticket["id"])]
    assert desk.get(ticket["id"])["jira_key"] == "IT-1"


def test_a_jira_failure_still_returns_the_local_ticket_with_the_reason(desk, jira, caplog):
    jira.fail_with = JiraError("Jira answered 401 Unauthorized — check JIRA_TOKEN.", status=401)
    ticket = desk.create(draft(), session_id="s-1", user_id="u-1")

    assert ticket["status"] == "open" and ticket["jira_key"] is None
    assert ticket["jira_error"] == "Jira answered 401 Unauthorized — check JIRA_TOKEN."
    assert desk.get(ticket["id"]) == ticket
    assert any(r.levelname == "WARNING" and "JIRA_TOKEN" in r.getMessage() for r in caplog.records)


# --- closing -------------------------------------------------------------------------------------
def test_closing_comments_locally_and_in_jira_then_transitions(desk, jira):
    ticket = desk.create(draft(), session_id="s-1", user_id="u-1")
    closed = desk.close(ticket["id"], "The user reported that it works now.")

    assert closed["status"] == "closed" and closed["comments"] == ["The user reported that it works now."]
    assert closed["jira_status"] == "Done" and closed["jira_error"] is None
    assert jira.calls[1:] == [("comment", "IT-1", "The user reported that it works now."), ("transition", "IT-1")]


def test_closing_twice_or_an_unknown_ticket_changes_nothing(desk, jira):
    ticket = desk.create(draft(), session_id="s-1", user_id="u-1")
    first = desk.close(ticket["id"], "works now")
    assert desk.close(ticket["id"], "works now") == first and len(jira.calls) == 3
    assert desk.close("DM-000000", "works now") is None


def test_a_jira_failure_while_closing_is_recorded_and_the_ticket_is_closed(desk, jira):
    ticket = desk.create(draft(), session_id="s-1", user_id="u-1")
    jira.fail_with = JiraError("Jira answered 500 Internal Server Error.", status=500)
    closed = desk.close(ticket["id"], "works now")
    assert closed["status"] == "closed" and closed["comments"] == ["works now"]
    assert closed["jira_error"] == "Closing the Jira issue failed: Jira answered 500 Internal Server Error."


def test_a_ticket_never_linked_is_closed_without_calling_jira(desk, jira):
    jira.fail_with = JiraError("Jira is unreachable.", status=None)
    ticket = desk.create(draft(), session_id="s-1", user_id="u-1")
    desk.close(ticket["id"], "works now")
    assert jira.calls == [("create", ticket["id"])]


# --- listing -------------------------------------------------------------------------------------
def test_listing_needs_a_user_or_a_session(desk):
    with pytest.raises(ValueError):
        desk.list_for()


def test_listing_merges_jira_statuses_in_one_search(desk, jira):
    first = desk.create(draft(topic="vpn"), session_id="s-1", user_id="u-1")
    second = desk.create(draft(topic="printer"), session_id="s-2", user_id="u-1")
    jira.issues["IT-1"] = JiraIssue(key="IT-1", url="u", status="In Progress", status_category="indeterminate")
    jira.issues["IT-2"] = JiraIssue(key="IT-2", url="u", status="Closed", status_category="done")

    listed = desk.list_for(user_id="u-1")

    assert [(t["id"], t["status"], t["jira_status"]) for t in listed] == [
        (second["id"], "closed", "Closed"),
        (first["id"], "open", "In Progress"),
    ]
    assert listed[0]["comments"] == ["Resolved in Jira: IT-2 is Closed."]
    assert [c for c in jira.calls if c[0] == "search"] == [("search", ("IT-2", "IT-1"))]
    assert [t["id"] for t in desk.list_for(user_id="u-1", status="open")] == [first["id"]]


def test_a_local_close_is_not_undone_by_an_open_jira_issue(desk, jira):
    ticket = desk.create(draft(), session_id="s-1", user_id="u-1")
    jira.fail_with = JiraError("Jira answered 500.", status=500)
    desk.close(ticket["id"], "works now")  # the Jira transition failed: the issue is still open there
    assert desk.list_for(session_id="s-1")[0]["status"] == "closed"


def test_listing_falls_back_to_the_local_store_when_jira_fails(desk, jira):
    ticket = desk.create(draft(), session_id="s-1", user_id="u-1")
    jira.fail_with = JiraError("Jira is unreachable.", status=None)
    assert [t["id"] for t in desk.list_for(session_id="s-1")] == [ticket["id"]]
    assert desk.get(ticket["id"])["jira_error"] is None  # a failed refresh is not a ticket error


def test_get_refreshes_from_jira_only_when_asked(desk, jira):
    ticket = desk.create(draft(), session_id="s-1", user_id="u-1")
    jira.issues["IT-1"] = JiraIssue(key="IT-1", url="u", status="Waiting for customer", status_category="indeterminate")
    assert desk.get(ticket["id"])["jira_status"] is None
    assert desk.get(ticket["id"], refresh=True)["jira_status"] == "Waiting for customer"
    assert [c[0] for c in jira.calls] == ["create", "search"]


def test_a_ticket_request_in_front_of_the_problem_is_left_out_of_the_summary():
    from nodes.support.ticket_ops import draft_ticket

    state = {"query": "please open a ticket, teams screen sharing is greyed out", "messages": []}
    assert draft_ticket(support_state(state))["summary"].startswith("Teams screen sharing is greyed out")
    state = {"query": "can you create a ticket: printer jams on tray 2", "messages": []}
    assert draft_ticket(support_state(state))["summary"] == "Printer jams on tray 2"
