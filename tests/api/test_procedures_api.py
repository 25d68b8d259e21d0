"""Procedures through the real app (MiniLM, Chroma, BM25, HTTP): a walkthrough reaches every documented step with
"next", and a fix written for the IT team is never handed to the employee as their step 1."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import FIXTURES

pytestmark = pytest.mark.slow
PROCEDURES_KB = FIXTURES / "procedures_kb"
REJOIN_STEPS = [
    "Exit Outlook and the other Office apps.",
    "Open a command prompt and run",
    "Restart the laptop.",
    "to register the laptop again.",
    "Sign in with your work account.",
    "Start Outlook and check that it stops asking for your password.",
]


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import Settings

    root = tmp_path_factory.mktemp("procedures")
    kb = root / "kb"
    shutil.copytree(PROCEDURES_KB, kb)
    with TestClient(
        create_app(Settings(_env_file=None, data_dir=root / "data", kb_dir=kb)), base_url="http://localhost"
    ) as test_client:
        yield test_client


def chat(client, message, session_id=None):
    body = {"message": message} | ({"session_id": session_id} if session_id else {})
    response = client.post("/chat", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_next_reaches_every_step_of_the_procedure_in_order_and_then_still_broken_offers_a_ticket(client):
    first = chat(client, "Outlook keeps asking for my password on my work laptop")
    assert first["action"] == "troubleshoot" and first["sources"][0]["section"] == "Resolution"
    session, shown = first["session_id"], [first["answer"]]
    reply = first
    while reply["troubleshooting"]["status"] == "in_progress" and len(shown) < 12:
        reply = chat(client, "next", session)
        shown.append(reply["answer"])
        assert not reply.get("ticket_offer")
    text = "\n".join(shown)
    positions = [text.index(step) for step in REJOIN_STEPS]
    assert positions == sorted(positions)  # every step, in order: the leave is followed by the join
    assert "Remove-MgDevice" not in text  # the administrators' part is not the employee's
    flow = reply["troubleshooting"]
    assert flow["status"] == "completed" and {s["outcome"] for s in flow["steps"]} == {"done"}  # none failed
    offer = chat(client, "still broken", session)
    assert offer["ticket_event"] == "offered"


def test_a_fix_for_the_it_team_is_offered_for_them_and_not_walked_through(client):
    reply = chat(client, "my laptop's bitlocker recovery key should be stored centrally, how do I set that up?")
    assert reply["sources"][0]["source"] == "kb/recovery-key-escrow.md"
    assert reply["action"] == "answer" and not reply.get("troubleshooting")
    assert reply["answer"].index("for your IT team") < reply["answer"].index("Group Policy Management Console")
