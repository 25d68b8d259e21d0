"""The local SQLite ticket store: ids, round trips, newest-first listing, closing with a comment."""

from __future__ import annotations

import re
import threading

import pytest

from app.adapters.ticket_store import SqliteTicketStore, normalise_ticket_id
from core.errors import TicketStoreError
from core.records import TicketDraft

TICKET_ID = re.compile(r"^DM-[0-9ABCDEFGHJKMNPQRSTVWXYZ]{6}$")
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def draft(
    summary: str = "Outlook asks for my password again and again", topic: str = "outlook password prompt", **changes
) -> TicketDraft:
    values = dict(
        summary=summary,
        description="Outlook keeps prompting for the password.",
        priority="medium",
        topic=topic,
        os="windows",
        steps_tried=[{"step": "Clear cached credentials", "outcome": "failed"}],
        conversation=[
            {"role": "user", "content": "my password is [REDACTED:PASSWORD] and it loops"},
            {"role": "assistant", "content": "Let's clear the cached credentials."},
        ],
    )
    values.update(changes)
    return TicketDraft(**values)


@pytest.fixture
def store(tmp_path):
    opened = SqliteTicketStore(tmp_path / "tickets.sqlite")
    yield opened
    opened.close_connection()


def test_a_created_ticket_reads_back_exactly_as_drafted(store):
    ticket = store.create(draft(), session_id="s-1", user_id="u-1")

    assert TICKET_ID.match(ticket["id"])
    assert ISO_UTC.match(ticket["created_at"]) and ticket["updated_at"] == ticket["created_at"]
    assert ticket["status"] == "open" and ticket["comments"] == []
    assert (ticket["jira_key"], ticket["jira_url"], ticket["jira_error"], ticket["jira_status"]) == (None,) * 4
    assert {k: ticket[k] for k in draft()} == draft()
    assert store.get(ticket["id"]) == ticket


def test_the_store_survives_a_restart(tmp_path):
    first = SqliteTicketStore(tmp_path / "tickets.sqlite")
    ticket = first.create(draft(), session_id="s-1", user_id="u-1")
    first.close_connection()
    again = SqliteTicketStore(tmp_path / "tickets.sqlite")
    assert again.get(ticket["id"]) == ticket
    again.close_connection()


def test_ids_are_unique_even_when_created_from_many_threads(store):
    ids: list[str] = []

    def create_five() -> None:
        for _ in range(5):
            ids.append(store.create(draft(), session_id="s", user_id="u")["id"])

    threads = [threading.Thread(target=create_five) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(ids) == 40 and len(set(ids)) == 40 and all(TICKET_ID.match(i) for i in ids)


def test_a_colliding_id_is_drawn_again(store, monkeypatch):
    taken = store.create(draft(), session_id="s", user_id="u")["id"]
    draws = iter([taken, taken, "DM-ABCDEF"])
    monkeypatch.setattr("app.adapters.ticket_store.new_ticket_id", lambda: next(draws))
    assert store.create(draft(), session_id="s", user_id="u")["id"] == "DM-ABCDEF"


def test_listing_filters_by_user_session_and_status_newest_first(store):
    first = store.create(draft(topic="vpn"), session_id="s-1", user_id="u-1")
    second = store.create(draft(topic="printer"), session_id="s-2", user_id="u-1")
    other = store.create(draft(topic="wifi"), session_id="s-3", user_id="u-2")
    store.close(first["id"], "works now")

    assert [t["id"] for t in store.list(user_id="u-1")] == [second["id"], first["id"]]
    assert [t["id"] for t in store.list(session_id="s-3")] == [other["id"]]
    assert [t["id"] for t in store.list(user_id="u-1", status="open")] == [second["id"]]
    assert [t["id"] for t in store.list(user_id="u-1", status="closed")] == [first["id"]]
    assert [t["id"] for t in store.list(user_id="u-1", limit=1)] == [second["id"]]


def test_closing_adds_the_comment_once_and_keeps_the_ticket(store):
    ticket = store.create(draft(), session_id="s-1", user_id="u-1")

    closed = store.close(ticket["id"], "The user reported that it works now.")
    again = store.close(ticket["id"], "a second close changes nothing")

    assert closed["status"] == "closed" and closed["comments"] == ["The user reported that it works now."]
    assert closed["updated_at"] >= ticket["updated_at"] and again == closed
    assert store.close("DM-000000", "nothing to close") is None


def test_comments_and_jira_links_are_stored(store):
    ticket = store.create(draft(), session_id="s-1", user_id="u-1")
    assert store.add_comment(ticket["id"], "first") and store.add_comment(ticket["id"], "second")
    assert not store.add_comment("DM-000000", "lost")

    linked = store.set_jira(ticket["id"], jira_key="IT-7", jira_url="https://jira.example/browse/IT-7")

    assert linked["comments"] == ["first", "second"] and linked["jira_key"] == "IT-7"
    with pytest.raises(ValueError):
        store.set_jira(ticket["id"], status="closed")


def test_the_store_overwrites_freed_pages(store):
    # secure_delete is a per-connection setting, so it is the store's own pooled connections that must have it
    with store.db.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA secure_delete").scalar() == 1


def test_an_unwritable_store_raises_a_ticket_store_error(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    with pytest.raises(TicketStoreError, match="cannot be opened"):
        SqliteTicketStore(blocker / "tickets.sqlite")


def test_ticket_ids_are_normalised_and_checked():
    assert normalise_ticket_id(" dm-1a2b3c ") == "DM-1A2B3C"
    assert normalise_ticket_id("DM-1A2B3") is None  # too short
    assert normalise_ticket_id("DM-1A2B3U") is None  # U is not in Crockford's alphabet
    assert normalise_ticket_id("IT-123456") is None
