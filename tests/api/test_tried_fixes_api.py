"""A fix the employee says they already tried is not handed back to them as the answer (the real app over a small
KB: MiniLM, Chroma, POST /chat, the local ticket store)."""

from __future__ import annotations

import pytest

from tests.conftest import chat as ask
from tests.conftest import module_client

pytestmark = pytest.mark.slow
client = module_client("tried_kb")
REASON = "You've already tried reinstalling, and “Installing the Relay desktop app” is about doing that."


@pytest.mark.parametrize(
    "message",
    [
        "the relay desktop app won't start on my windows laptop, I already reinstalled it",
        "relay app on my mac keeps crashing even after reinstalling",
    ],
)
def test_an_app_that_still_fails_after_a_reinstall_is_not_sent_back_to_the_install_guide(client, message):
    reply = ask(client, message)
    assert reply["action"] == "create_ticket" and not reply["sources"]
    assert "Download the Relay" not in reply["answer"] and REASON in reply["answer"]


def test_the_ticket_records_what_the_employee_already_tried(client):
    first = ask(client, "relay app on my mac keeps crashing even after reinstalling")
    done = ask(client, "yes", first["session_id"])
    ticket = client.get(f"/tickets/{done['ticket']['id']}").json()
    assert "Already tried before asking, as the employee said: reinstalling" in ticket["description"]


def test_asking_how_to_install_is_still_answered_from_the_install_guide(client):
    reply = ask(client, "how do I install the relay desktop app on windows")
    assert reply["action"] == "answer" and reply["sources"][0]["source"].endswith("installing-the-relay-desktop-app.md")
    assert "Download the Relay installer" in reply["answer"]


def test_a_restart_already_tried_leaves_the_troubleshooting_article_to_answer(client):
    reply = ask(client, "the vpn keeps disconnecting every few minutes, I already restarted the vpn client twice")
    assert reply["sources"][0]["source"].endswith("vpn-keeps-disconnecting.md")


def test_a_walkthrough_starts_after_the_steps_the_employee_already_did(client):
    reply = ask(client, "the mail app keeps freezing, I already restarted my computer")
    assert reply["action"] == "troubleshoot"
    assert "You've already tried restarting, so we'll start at step 2." in reply["answer"]
    assert "**Step 2 of 4:** Start the mail app in safe mode" in reply["answer"]
    assert "Restart your computer" not in reply["answer"]


def test_without_an_attempt_named_the_walkthrough_starts_at_step_one(client):
    reply = ask(client, "the mail app keeps freezing")
    assert "**Step 1 of 4:** Restart your computer." in reply["answer"] and "already tried" not in reply["answer"]
