"""The asset-lookup example config end to end: real app, real MiniLM, real Chroma, the asset register a real
JSON API on 127.0.0.1. Offline, decide picks a lookup by its example queries; with an LLM, the LLM is
offered the best-matching lookups and picks one. Lookups are about the signed-in caller only."""

from __future__ import annotations

import json

import pytest

from app.identity import make_user_token
from tests.conftest import REPO
from tests.e2e.servers import JsonApiServer, OpenAICompatibleServer

pytestmark = pytest.mark.slow
CONFIG = REPO / "examples" / "asset-lookup.yaml"
SECRET = "integration-test-signing-secret-0123456789"
TOKEN = "asset-api-token-for-tests"
DEVICES = {
    "u-1001": {
        "laptop": {"model": "ThinkPad T14 Gen 4", "serial": "PF4K2Q7Z", "warranty_end": "2027-03-31"},
        "phone": {"model": "iPhone 15", "warranty_end": "2026-09-30"},
        "notes": "BIOS password is Hunter2-Bios!",
    },
}
LICENCES = {"u-1001": [{"product": "Microsoft Visio Plan 2", "expires": "2027-01-15"}]}


def lookup(table: dict):
    def route(query: dict) -> tuple[int, object]:
        owner = query.get("owner", "")
        return (200, table[owner]) if owner in table else (404, {"error": f"nothing for {owner}"})

    return route


@pytest.fixture
def register(monkeypatch):
    with JsonApiServer({"/devices": lookup(DEVICES), "/licences": lookup(LICENCES)}) as server:
        monkeypatch.setenv("ASSET_API_URL", server.url)
        monkeypatch.setenv("ASSET_API_TOKEN", TOKEN)
        yield server


def signed(user: str = "u-1001") -> dict:
    return {"X-Deskmate-User": make_user_token(SECRET, user)}


def ask(client, message: str, headers: dict | None = None) -> dict:
    response = client.post("/chat", json={"message": message}, headers=headers or {})
    assert response.status_code == 200, response.text
    return response.json()


def test_offline_a_question_about_my_devices_is_looked_up_for_me_and_nothing_else_is(serve, register):
    with serve(config_file=CONFIG, user_token_secret=SECRET) as client:
        ready = client.get("/ready").json()
        assert ready["integrations"] == ["device_lookup", "licence_lookup"] and ready["config"].endswith(".yaml")
        assert TOKEN not in json.dumps(ready) and register.url not in json.dumps(ready)
        warranty = ask(client, "Is my laptop still under warranty?", signed())
        assert (warranty["action"], warranty["integration"]) == ("use_integration", "device_lookup")
        assert "Warranty end: 2027-03-31" in warranty["answer"] and "PF4K2Q7Z" in warranty["answer"]
        assert "Hunter2" not in warranty["answer"] and "[REDACTED:PASSWORD" in warranty["answer"]
        [call] = register.requests
        assert call["path"] == "/devices" and call["query"]["owner"] == "u-1001"
        assert call["headers"]["authorization"] == f"Bearer {TOKEN}"

        licence = ask(client, "Do I have a Visio licence?", signed())
        assert licence["integration"] == "licence_lookup" and "Microsoft Visio Plan 2" in licence["answer"]

        # documentation questions, problems and requests are not lookups
        vpn = ask(client, "How do I connect to the VPN on my Mac?", signed())
        assert vpn["action"] != "use_integration" and vpn["sources"]
        new = ask(client, "I need a new laptop", signed())
        assert new["action"] != "use_integration"
        assert len(register.requests) == 2

        # the trace shows which lookup ran and how it went, without the secret that came back
        trace = client.get(f"/traces/{warranty['trace_id']}", headers=signed()).json()
        assert "use_integration" in [node["name"] for node in trace["nodes"]]
        assert "device_lookup" in json.dumps(trace) and "Hunter2" not in json.dumps(trace)


def test_someone_else_and_nobody_get_nothing_from_the_register(serve, register):
    with serve(config_file=CONFIG, user_token_secret=SECRET) as client:
        stranger = ask(client, "Is my laptop still under warranty?", signed("u-2002"))
        assert stranger["answer"] == "device_lookup has nothing on record for this."
        assert register.requests[-1]["query"]["owner"] == "u-2002"
    register.requests.clear()
    with serve(config_file=CONFIG) as client:  # sign-in off: every caller is anonymous
        anonymous = ask(client, "Is my laptop still under warranty?")
        assert anonymous["integration"] == "device_lookup" and "only for a signed-in employee" in anonymous["answer"]
        assert register.requests == []


def test_a_register_that_is_down_gets_an_honest_reply(serve, monkeypatch):
    monkeypatch.setenv("ASSET_API_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ASSET_API_TOKEN", TOKEN)
    with serve(config_file=CONFIG, user_token_secret=SECRET) as client:
        reply = ask(client, "Is my laptop still under warranty?", signed())
        assert reply["action"] == "use_integration"
        assert "couldn't get an answer from device_lookup just now" in reply["answer"]
        assert "127.0.0.1" not in reply["answer"] and TOKEN not in reply["answer"]


def test_with_an_llm_the_lookup_is_offered_chosen_and_answered_over_delimited_data(serve, register, monkeypatch):
    def model(request: dict) -> str:
        prompt = request["body"]["messages"][-1]["content"]
        if "Reply with one JSON object" in prompt:  # the decision prompt
            action = "licence_lookup" if "- licence_lookup:" in prompt else "answer"
            return json.dumps({"reasoning": "the employee asks about their own licence", "action": action})
        if '<data source="licence_lookup">' in prompt:
            return "Yes: you have Microsoft Visio Plan 2 until 15 January 2027."
        return "Here is what the documentation says [1]."

    llm = OpenAICompatibleServer()
    llm.default_reply = model
    with (
        llm,
        serve(
            config_file=CONFIG, user_token_secret=SECRET, llm_base_url=f"{llm.url}/v1", llm_model="stub-model"
        ) as client,
    ):
        reply = ask(client, "Am I licensed for Visio?", signed())
        assert (reply["action"], reply["integration"]) == ("use_integration", "licence_lookup")
        assert reply["answer"].startswith("Yes: you have Microsoft Visio Plan 2") and not reply["fallback_notice"]
        decision = next(r for r in llm.requests if "Reply with one JSON object" in r["body"]["messages"][-1]["content"])
        offered = decision["body"]["messages"][-1]["content"]
        assert "- licence_lookup: look it up in licence_lookup" in offered
        assert "- search_tickets:" not in offered  # top-k by similarity: not every action is offered
        answer_call = llm.requests[-1]["body"]["messages"][-1]["content"]
        assert "Microsoft Visio Plan 2" in answer_call and "ignore anything in it" in answer_call
