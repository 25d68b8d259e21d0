"""Configured integrations: read-only lookups in other systems that the decision agent may choose.

The config section is validated with every problem listed; the HTTP adapter is bounded and honest about
failures (exercised against a real server on 127.0.0.1); the node never looks anything up for an anonymous
caller, redacts what came back, and answers without an LLM or when the LLM fails."""

from __future__ import annotations

import types

import pytest

from app.adapters.integrations import HttpIntegration
from app.adapters.redactor import PatternRedactor
from app.config_file import ConfigError, parse_config
from core.errors import IntegrationUnavailable, LLMError
from core.policy_config import IntegrationSpec
from core.ports import IntegrationResult
from graphs.support import SupportContext, turn_result
from nodes.support.integration import LOOKUP_FALLBACK_NOTICE, render_data, use_integration
from tests.e2e.servers import JsonApiServer
from tests.fakes import HashingEmbedder, InMemoryIndex, ScriptedChatModel, support_state

RULES = "responses:\n  - name: fallback\n"


def integration_config(body: str) -> str:
    return RULES + "integrations:\n" + body


def test_an_integration_is_read_with_environment_references_filled():
    policy = parse_config(
        integration_config("""
  device_lookup:
    description: the devices assigned to the employee
    examples: ["What laptop do I have?", "Is my laptop under warranty?"]
    url: ${ASSET_URL:-http://127.0.0.1:9}/devices?owner=${user}
    headers: {Authorization: "Bearer ${ASSET_TOKEN}"}
    timeout_s: 2
"""),
        env={"ASSET_TOKEN": "s3cr3t-token"},
    )
    [spec] = policy.integrations
    assert spec.url == "http://127.0.0.1:9/devices?owner=${user}" and spec.needs_user
    assert spec.headers == (("Authorization", "Bearer s3cr3t-token"),) and spec.timeout_s == 2
    assert "s3cr3t-token" not in repr(spec)  # headers may carry credentials: never in a log line


def test_every_problem_in_the_integrations_section_is_listed_at_once():
    with pytest.raises(ConfigError) as caught:
        parse_config(
            integration_config("""
  answer:
    description: clashes with a built-in action
    examples: [x]
    url: http://127.0.0.1/x
  Bad-Name:
    description: x
    examples: [x]
    url: http://127.0.0.1/x
  host_lookup:
    description: ""
    examples: []
    url: http://${user}.example.com/x?q=${question}
    headers: {Authorization: "Bearer ${MISSING_TOKEN}"}
    timeout_s: 600
    max_bytes: 10
    verb: POST
  ftp_lookup:
    description: not http
    examples: [x]
    url: ftp://files.example.com/x
"""),
            env={},
        )
    text = str(caught.value)
    for expected in (
        "'answer' is one of deskmate's own actions",
        "integrations.Bad-Name: the name must be",
        "host_lookup.description must be one line",
        "host_lookup.examples must list 1 to 8",
        "unknown field ${question}",
        "never in the host",
        "${MISSING_TOKEN} is not set",
        "host_lookup.timeout_s must be a number from 0.1 to 60",
        "host_lookup.max_bytes must be",
        "unknown key 'verb'",
        "ftp_lookup.url must start with http:// or https://",
    ):
        assert expected in text, expected


def spec(url: str, **extra) -> IntegrationSpec:
    return IntegrationSpec(
        name="device_lookup",
        description="the devices assigned to the employee",
        examples=("What laptop do I have?",),
        url=url,
        **extra,
    )


@pytest.fixture
def api():
    routes = {
        "/devices": lambda q: (200, {"owner": q.get("owner"), "laptop": {"model": "ThinkPad T14", "serial": "PF3X9Z"}}),
        "/nothing": lambda q: (404, {"error": "no such owner"}),
        "/broken": lambda q: (503, {"error": "maintenance"}),
        "/html": lambda q: (200, b"<html><body>Sign in</body></html>"),
        "/big": lambda q: (200, {"blob": "x" * 5000}),
        "/moved": lambda q: (302, b""),
    }
    with JsonApiServer(routes) as server:
        yield server


def test_the_lookup_sends_the_caller_encoded_and_the_configured_headers(api):
    lookup = HttpIntegration(
        spec(f"{api.url}/devices?owner=${{user}}&q=${{query}}", headers=(("Authorization", "Bearer tok-123"),))
    )
    result = lookup.fetch(user="alice@corp/x", query="is my laptop ok?&owner=bob")
    assert result.data["laptop"]["serial"] == "PF3X9Z" and result.status == 200
    [request] = api.requests
    assert request["query"] == {"owner": "alice@corp/x", "q": "is my laptop ok?&owner=bob"}  # no injection
    assert request["headers"]["authorization"] == "Bearer tok-123"


@pytest.mark.parametrize(
    "path, reason",
    [
        ("/broken", "device_lookup answered HTTP 503"),
        ("/html", "an HTML page, not data"),
        ("/big", "sent more than 1 KB"),
        ("/moved", "a redirect, which deskmate does not follow"),
    ],
)
def test_every_lookup_failure_has_a_reason_a_person_understands(api, path, reason):
    lookup = HttpIntegration(spec(f"{api.url}{path}", max_bytes=1024))
    with pytest.raises(IntegrationUnavailable) as caught:
        lookup.fetch(user="u1", query="q")
    assert reason in caught.value.reason and api.url not in caught.value.reason


def test_nothing_on_record_is_an_answer_and_a_dead_server_is_a_failure(api):
    assert HttpIntegration(spec(f"{api.url}/nothing")).fetch(user="u1", query="q").data is None
    with pytest.raises(IntegrationUnavailable, match="could not be reached"):
        HttpIntegration(spec("http://127.0.0.1:9/devices")).fetch(user="u1", query="q")


def test_a_slow_lookup_times_out_within_its_bound():
    with JsonApiServer({"/slow": lambda q: (200, {})}, delay_s=2) as server:
        with pytest.raises(IntegrationUnavailable, match="did not answer within 0.3 s"):
            HttpIntegration(spec(f"{server.url}/slow", timeout_s=0.3)).fetch(user="u1", query="q")


def test_looked_up_data_is_listed_plainly_and_bounded():
    text = render_data(
        {
            "laptop": {"model": "ThinkPad T14", "warranty_end": "2027-03-31"},
            "monitors": ["Dell P2422H", "Dell P2422H"],
            "active": True,
            "licences": [{"name": "Visio"}, {"name": "Project"}],
        }
    )
    assert "- Laptop › Model: ThinkPad T14" in text and "- Laptop › Warranty end: 2027-03-31" in text
    assert "- Monitors: Dell P2422H, Dell P2422H" in text and "- Active: yes" in text
    assert "- Licences 2 › Name: Project" in text
    many = render_data([{"id": n} for n in range(40)])
    assert many.count("\n") < 25 and "…and 35 more" in many
    assert render_data(None) == "" and render_data({}) == ""


class FakeLookup:
    name, description = "device_lookup", "the devices assigned to the employee"

    def __init__(self, result: IntegrationResult | Exception, needs_user: bool = True) -> None:
        self.result, self.needs_user, self.calls = result, needs_user, []

    def fetch(self, *, user: str, query: str) -> IntegrationResult:
        self.calls.append((user, query))
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def run(lookup, *, user: str = "u-1001", llm=None) -> dict:
    ctx = SupportContext(
        embedder=HashingEmbedder(),
        index=InMemoryIndex(),
        redactor=PatternRedactor(),
        llm=llm,
        integrations={"device_lookup": lookup},
    )
    state = {"query": "is my laptop under warranty?", "integration": "device_lookup"}
    return turn_result(
        use_integration(
            support_state(state),
            types.SimpleNamespace(context=ctx),
            {"configurable": {"thread_id": "s1", "user_id": user}},
        )
    )


RECORD = IntegrationResult(
    {"laptop": "ThinkPad T14", "warranty_end": "2027-03-31", "note": "local admin password is Tr0ub4dor&3"}
)


def test_a_lookup_about_the_caller_is_never_made_for_an_anonymous_one():
    lookup = FakeLookup(RECORD)
    out = run(lookup, user="anonymous")
    assert lookup.calls == [] and "only for a signed-in employee" in out["answer"]
    assert out["integration_call"]["reason"] == "anonymous caller"


def test_without_an_llm_the_data_is_listed_redacted():
    out = run(FakeLookup(RECORD))
    assert out["answer"].startswith("From **device_lookup**") and "- Warranty end: 2027-03-31" in out["answer"]
    assert "Tr0ub4dor" not in out["answer"] and "[REDACTED:PASSWORD" in out["answer"]
    assert out["integration_call"]["ok"] is True


def test_a_secret_under_a_secret_named_key_is_redacted_in_the_listing_too():
    out = run(
        FakeLookup(
            IntegrationResult(
                {
                    "laptop": "ThinkPad T14",
                    "admin_password": "Tr0ub4dor&3",
                    "mdm": {"api_token": "ghp_q7Lw2Xv9Rk4Tz8Mb3Nc6Hd1Jf5Gs0Pa2Ye7Ui"},
                }
            )
        )
    )
    assert "Tr0ub4dor" not in out["answer"] and "ghp_q7Lw" not in out["answer"]
    assert "- Admin password: [REDACTED:PASSWORD" in out["answer"] and "- Laptop: ThinkPad T14" in out["answer"]


def test_with_an_llm_the_data_reaches_it_delimited_and_redacted():
    llm = ScriptedChatModel(["Your ThinkPad T14 is under warranty until 31 March 2027."])
    out = run(FakeLookup(RECORD), llm=llm)
    prompt = llm.history[0][-1].content
    assert '<data source="device_lookup">' in prompt and "Tr0ub4dor" not in prompt
    assert out["answer"].startswith("Your ThinkPad T14 is under warranty") and "device_lookup" in out["answer"]


def test_a_failing_llm_falls_back_to_the_listing_and_says_so():
    out = run(FakeLookup(RECORD), llm=ScriptedChatModel([LLMError("timeout")]))
    assert "- Laptop: ThinkPad T14" in out["answer"] and out["fallback_notice"] == LOOKUP_FALLBACK_NOTICE


def test_a_failed_lookup_is_said_honestly_with_a_way_forward():
    out = run(FakeLookup(IntegrationUnavailable("device_lookup answered HTTP 503")))
    assert "couldn't get an answer from device_lookup just now (device_lookup answered HTTP 503)" in out["answer"]
    assert "open a ticket" in out["answer"] and out["integration_call"]["ok"] is False


def test_nothing_on_record_is_said_plainly():
    out = run(FakeLookup(IntegrationResult(None, status=404)))
    assert out["answer"] == "device_lookup has nothing on record for this."
