"""Teams replies as Adaptive Cards: what the card shows, and how a press redraws it."""

from __future__ import annotations

from app.channels.conversation import ReplyView, SourceLink
from app.channels.teams import after_press, card_for, card_text


def _view(**fields) -> ReplyView:
    return ReplyView(
        text=fields.pop("text", "## Reconnect\n1. Open the client\n2. Sign in again"),
        message_id="m-1",
        session_id="s-1",
        **fields,
    )


def _keys(card: dict) -> list[str]:
    return [a["data"]["deskmate"] for a in card["actions"]]


def test_headings_become_bold_lines_since_a_text_block_draws_no_headings():
    assert card_text("# Title\nbody **kept**") == "**Title**\nbody **kept**"


def test_a_walkthrough_card_shows_the_step_its_linked_sources_and_its_buttons_for_the_asker():
    view = _view(
        sources=(SourceLink("Remote access", "Reconnect", "https://dm.example.test/view/doc-1#Reconnect"),),
        buttons=("works", "broken", "next"),
        step=(2, 5),
    )
    card = card_for(view, owner="aad-1")
    text = "\n".join(block["text"] for block in card["body"])
    assert "**Reconnect**" in text and "Step 2 of 5" in text
    assert "[Remote access › Reconnect](https://dm.example.test/view/doc-1#Reconnect)" in text
    assert _keys(card) == ["works", "broken", "next", "helpful", "not_helpful"]
    assert all(
        a["type"] == "Action.Submit" and a["data"]["m"] == "m-1" and a["data"]["u"] == "aad-1" for a in card["actions"]
    )


def test_a_source_without_a_public_url_is_named_without_a_link():
    card = card_for(_view(sources=(SourceLink("Printing", "", None),)))
    assert any(block["text"] == "Sources: Printing" for block in card["body"])


def test_a_step_press_removes_the_step_buttons_and_keeps_the_votes_and_a_vote_removes_only_the_votes():
    card = card_for(_view(buttons=("works", "broken", "next")), owner="aad-1")
    pressed = after_press(card, "broken", "Alice")
    assert _keys(pressed) == ["helpful", "not_helpful"] and pressed["body"][-1]["text"] == "✕ Still broken (Alice)"
    voted = after_press(pressed, "helpful", "Alice")
    assert _keys(voted) == [] and "Marked helpful" in voted["body"][-1]["text"]
    assert card["body"][0] == voted["body"][0]  # the answer itself stays as it was


def test_a_press_that_arrives_before_its_card_was_kept_still_finds_the_card(tmp_path):
    """A click right after the card appeared can reach deskmate before the delivery that posted the card has kept
    it: the press waits for it briefly instead of leaving the card's buttons in place."""
    import threading
    import types

    from app.channels.store import ChannelStore
    from app.channels.teams import TeamsChannel, TeamsThread
    from app.storage import Database

    db = Database.open(f"sqlite:///{tmp_path / 'channels.sqlite'}")
    store = ChannelStore(db)
    thread = TeamsThread("https://smba.example.test", "19:helpdesk@thread.tacv2", "1700000000100")
    card = {"type": "AdaptiveCard", "body": [{"type": "TextBlock", "text": "Step 1 of 3"}]}
    keeper = threading.Timer(0.3, store.keep_card, args=(f"teams:card:{thread.target}:1000000000002", card))
    keeper.start()
    channel = types.SimpleNamespace(store=store)  # the one collaborator `_card` reads
    try:
        assert TeamsChannel._card(channel, thread, "1000000000002") == card  # type: ignore[arg-type]
        assert TeamsChannel._card(channel, thread, "") is None
    finally:
        keeper.join()
        db.close()
