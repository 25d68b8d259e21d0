"""Jira configuration (all-or-nothing) and how a ticket is written into a Jira issue."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from pydantic import ValidationError

from app.adapters.jira import _done_transition, _retry_after_s, issue_description, issue_summary
from app.settings import Settings
from core.records import Ticket
from tests.unit.test_ticket_store import draft

JIRA = {"jira_url": "https://acme.atlassian.net", "jira_project_key": "IT", "jira_token": "tok"}


def ticket(**changes) -> Ticket:
    values = dict(
        draft(),
        id="DM-1A2B3C",
        status="open",
        session_id="s-1",
        user_id="u-1",
        created_at="2025-01-01T00:00:00.000Z",
        updated_at="2025-01-01T00:00:00.000Z",
        jira_key=None,
        jira_url=None,
        jira_error=None,
        jira_status=None,
        comments=[],
    )
    values.update(changes)
    return Ticket(**values)


# --- settings ------------------------------------------------------------------------------------
def test_jira_is_off_by_default_and_on_when_url_project_and_token_are_set(tmp_path):
    assert not Settings(_env_file=None).integrations.jira_enabled
    settings = Settings(_env_file=None, data_dir=tmp_path, **JIRA)
    assert settings.integrations.jira_enabled and settings.storage.tickets_db == tmp_path / "tickets.sqlite"
    assert settings.integrations.jira_priority_names == ("Low", "Medium", "High", "Highest")


@pytest.mark.parametrize(
    "given, missing",
    [
        ({"jira_url": "https://acme.atlassian.net"}, "JIRA_PROJECT_KEY, JIRA_TOKEN"),
        ({"jira_url": "https://acme.atlassian.net", "jira_project_key": "IT"}, "JIRA_TOKEN"),
        ({"jira_token": "tok"}, "JIRA_URL, JIRA_PROJECT_KEY"),
        ({"jira_email": "bot@acme.example"}, "JIRA_URL, JIRA_PROJECT_KEY, JIRA_TOKEN"),
    ],
)
def test_a_partial_jira_configuration_is_refused_at_start_up(given, missing):
    with pytest.raises(
        ValidationError, match=f"Jira needs JIRA_URL, JIRA_PROJECT_KEY and JIRA_TOKEN together; missing: {missing}"
    ):
        Settings(_env_file=None, **given)


def test_unusable_jira_values_are_refused_with_the_fix():
    with pytest.raises(ValidationError, match="JIRA_URL must start with https://"):
        Settings(_env_file=None, **{**JIRA, "jira_url": "acme.atlassian.net"})
    with pytest.raises(ValidationError, match="JIRA_PROJECT_KEY is a project key"):
        Settings(_env_file=None, **{**JIRA, "jira_project_key": "IT Help Desk"})
    with pytest.raises(ValidationError, match="JIRA_PRIORITIES needs four"):
        Settings(_env_file=None, **JIRA, jira_priorities="Low,High")
    assert Settings(_env_file=None, **JIRA, jira_priorities="").integrations.jira_priority_names is None


def test_jira_is_configured_from_the_environment(monkeypatch):
    monkeypatch.setenv("JIRA_URL", "https://jira.acme.example")
    monkeypatch.setenv("JIRA_PROJECT_KEY", "HELP")
    monkeypatch.setenv("JIRA_API_TOKEN", "pat-s3cret")
    monkeypatch.setenv("DESKMATE_JIRA_TIMEOUT_S", "3")
    settings = Settings(_env_file=None)
    assert settings.integrations.jira_enabled and settings.integrations.jira_token.get_secret_value() == "pat-s3cret"
    assert settings.integrations.jira_timeout_s == 3 and "s3cret" not in repr(settings)


# --- the issue's text ----------------------------------------------------------------------------
def test_the_summary_is_one_line_within_jiras_limit():
    assert issue_summary(ticket(summary="VPN\n  drops\tagain")) == "VPN drops again"
    long = issue_summary(ticket(summary="word " * 100))
    assert len(long) == 250 and long.endswith("…")


def test_the_description_holds_problem_steps_and_conversation_verbatim():
    text = issue_description(ticket())
    assert "Raised by deskmate as ticket DM-1A2B3C. Priority: medium. OS: windows." in text
    assert "1. Clear cached credentials — failed" in text
    assert "user: my password is [REDACTED:PASSWORD] and it loops" in text
    assert text.count("{noformat}") == 6  # three verbatim blocks, so [..] is not read as a wiki link


def test_user_text_cannot_break_out_of_its_verbatim_block():
    text = issue_description(ticket(description="{noformat} *bold* {NOFORMAT}"))
    assert text.count("{noformat}") == 6 and "{ noformat} *bold* { NOFORMAT}" in text


def test_a_long_conversation_keeps_its_newest_messages_within_jiras_limit():
    conversation = [{"role": "user", "content": f"message {n} " + "x" * 3000} for n in range(40)]
    text = issue_description(ticket(conversation=conversation))
    assert len(text) < 32_767
    assert "message 39 " in text and "message 0 " not in text and "earlier messages omitted" in text


# --- protocol details ----------------------------------------------------------------------------
def test_retry_after_is_read_in_seconds_or_as_a_date():
    assert _retry_after_s("1") == 1.0 and _retry_after_s("0.5") == 0.5
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < _retry_after_s(soon) <= 30
    assert _retry_after_s(None) is None and _retry_after_s("soon") is None


def test_the_done_transition_is_chosen_by_status_category_then_by_name():
    def transition(tid, name, category="", to=None):
        return {"id": tid, "name": name, "to": {"name": to or name, "statusCategory": {"key": category}}}

    workflow = [
        transition("11", "Start Progress", "indeterminate"),
        transition("51", "Won't fix", "done"),
        transition("31", "Resolve Issue", "done", to="Resolved"),
    ]
    assert _done_transition(workflow)["id"] == "31"
    assert _done_transition([transition("11", "Start Progress"), transition("61", "Closed")])["id"] == "61"
    assert _done_transition([transition("41", "Reopen", "new")]) is None
