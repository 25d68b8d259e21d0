"""How an answer looks in Slack: Markdown as mrkdwn, Block Kit within Slack's limits, buttons after a press."""

import json

from app.channels.conversation import ReplyView, SourceLink, source_url
from app.channels.slack import SECTION_CHARS, after_press, blocks_for, mrkdwn


def test_markdown_becomes_mrkdwn_and_code_keeps_every_character():
    text = "## Reset it\n**Open** the *app* and see [the guide](https://kb.example/x).\n- one\n- two\n\n`\\\\srv\\share & <b>`"
    out = mrkdwn(text)
    assert out.splitlines()[0] == "*Reset it*"
    assert "*Open* the _app_ and see <https://kb.example/x|the guide>." in out
    assert "• one\n• two" in out
    assert out.endswith("`\\\\srv\\share & <b>`")  # code spans untouched: backslashes, & and < kept


def test_text_outside_code_is_escaped_so_it_cannot_ping_or_link():
    assert mrkdwn("a <!channel> & b > c") == "a &lt;!channel&gt; &amp; b &gt; c"


def test_a_long_answer_is_split_into_sections_slack_accepts():
    long = "\n\n".join(f"{i}. " + "word " * 200 for i in range(1, 12))
    view = ReplyView(text=long, message_id="m1", session_id="s1")
    sections = [b for b in blocks_for(view) if b["type"] == "section"]
    assert len(sections) > 1 and all(len(b["text"]["text"]) <= SECTION_CHARS for b in sections)
    assert "".join(b["text"]["text"] for b in sections).count("word") == 11 * 200


def test_a_walkthrough_reply_has_its_step_its_sources_and_its_buttons():
    view = ReplyView(
        text="1. Open Settings",
        message_id="trace-1",
        session_id="s1",
        sources=(SourceLink("VPN", "Windows", source_url("https://dm.example", "doc1", "Windows")),),
        buttons=("works", "broken", "next"),
        step=(1, 4),
    )
    blocks = blocks_for(view, owner="U1")
    [actions] = [b for b in blocks if b["type"] == "actions"]
    keys = [e["action_id"] for e in actions["elements"]]
    assert keys == ["deskmate:works", "deskmate:broken", "deskmate:next", "deskmate:helpful", "deskmate:not_helpful"]
    assert all(json.loads(e["value"]) == {"m": "trace-1", "u": "U1"} for e in actions["elements"])
    contexts = " ".join(e["text"] for b in blocks if b["type"] == "context" for e in b["elements"])
    assert "Step 1 of 4" in contexts and "<https://dm.example/view/doc1#Windows|VPN › Windows>" in contexts


def test_a_press_retires_its_buttons_and_a_vote_only_the_vote_buttons():
    view = ReplyView(text="x", message_id="t", session_id="s", buttons=("works", "broken"), step=(1, 3))
    blocks = blocks_for(view)
    pressed = after_press(blocks, "broken", "U1")
    left = [e["action_id"] for b in pressed if b["type"] == "actions" for e in b["elements"]]
    assert left == ["deskmate:helpful", "deskmate:not_helpful"] and "Still broken" in json.dumps(pressed)
    voted = after_press(blocks, "helpful", "U1")
    left = [e["action_id"] for b in voted if b["type"] == "actions" for e in b["elements"]]
    assert left == ["deskmate:works", "deskmate:broken"] and "helpful" in json.dumps(voted[-1])


def test_without_a_public_url_sources_are_named_not_linked():
    assert source_url(None, "doc1", "x") is None
    view = ReplyView(text="x", message_id="t", session_id="s", sources=(SourceLink("VPN", "", None),))
    assert "Sources: VPN" in json.dumps(blocks_for(view))


def test_the_plain_text_sources_list_gives_way_to_the_linked_one():
    from app.channels.conversation import without_sources_list

    answer = "Step 1: restart.\n\nSources:\n[1] VPN › Windows — kb/vpn.md\n[2] Wi-Fi — kb/wifi.md"
    assert without_sources_list(answer) == "Step 1: restart."
    kept = "See below.\nSources:\nthe vendor's site"  # not a list of citations: left alone
    assert without_sources_list(kept) == kept
