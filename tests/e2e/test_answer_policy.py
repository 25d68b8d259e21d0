"""Each example configuration starts and answers as documented: rules, collections, lazy intent, modes,
directives. Real app, real MiniLM, real Chroma; the LLMs are OpenAI/Groq-speaking servers on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.e2e.servers import OpenAICompatibleServer

pytestmark = pytest.mark.slow
EXAMPLES = REPO / "examples"
HR_DOC = b"""# Annual leave policy

## How many days of annual leave do I get

Full-time employees get 28 days of paid annual leave per year, including public holidays. Part-time
employees get the same pro rata. Request leave in the HR portal at least two weeks ahead.
"""


def scripted(request: dict) -> str:
    """A model that answers by the kind of prompt it gets, so tests can see which path sent it."""
    prompt = json.dumps(request["body"]["messages"])
    if "Reply with one JSON object" in prompt:
        return json.dumps({"reasoning": "answer it", "action": "answer"})
    if "Classify the employee" in prompt:
        return "hr_question"
    return (
        "From the documentation: see the steps [1]."
        if 'source id=\\"1\\"' in prompt
        else "In general, restart the device and try again."
    )


@pytest.fixture
def llm():
    server = OpenAICompatibleServer()
    server.default_reply = scripted
    with server:
        yield server


def ask(client, message: str, **extra) -> dict:
    response = client.post("/chat", json={"message": message, "debug": True, **extra})
    assert response.status_code == 200, response.text
    return response.json()


def systems(server) -> list[str]:
    return [r["body"]["messages"][0]["content"] for r in server.requests]


def test_the_offline_example_answers_extractively_and_refuses_what_the_documents_lack(serve):
    with serve(config_file=EXAMPLES / "offline.yaml") as client:
        vpn = ask(client, "How do I connect to the VPN on my Mac?")
        assert vpn["answer_policy"]["rule"]["name"] == "knowledge base match"
        assert vpn["answer_policy"]["profile"]["rag_result"] == "match" and vpn["sources"]
        other = ask(client, "what is the capital of france")
        assert other["answer_policy"]["rule"]["name"] == "not found" and other["sources"] == []
        assert other["mode_notice"] and "RAG_ONLY" in other["mode_notice"]  # the mode was chosen: it says so


def test_the_groq_example_sends_the_collection_prompt_and_budget_and_falls_back_to_general_help(
    serve, llm, monkeypatch
):
    monkeypatch.setenv("GROQ_API_KEY", "gsk_test_key")
    monkeypatch.setenv("GROQ_BASE_URL", llm.url)  # the groq SDK posts to <base>/openai/v1/chat/completions
    with serve(config_file=EXAMPLES / "groq-single-collection.yaml") as client:
        vpn = ask(client, "How do I connect to the VPN on my Mac?")
        assert vpn["answer_policy"]["rule"]["name"] == "documented answer"
        answer_call = next(
            r for r in llm.requests if "Answer as Brightwave's IT service desk" in r["body"]["messages"][0]["content"]
        )
        assert answer_call["path"].endswith("/openai/v1/chat/completions")
        assert answer_call["headers"]["authorization"] == "Bearer gsk_test_key"
        assert answer_call["body"]["max_tokens"] == 700  # ${profile.service_tokens}
        assert '<source id="1"' in answer_call["body"]["messages"][0]["content"]
        assert vpn["answer"].startswith("From the documentation") and vpn["sources"][0]["n"] == 1

        llm.requests.clear()
        other = ask(client, "what is the capital of france")
        assert other["answer_policy"]["rule"]["name"] == "general help"
        assert any("documentation does not cover this" in s for s in systems(llm))
        assert other["answer_policy"]["plan"]["source"] == "llm"
        assert other["mode_notice"] == "This answer comes from general knowledge, not from our documentation."


def test_the_multi_collection_example_answers_hr_from_its_collection_and_detects_intent_only_when_needed(
    serve, llm, monkeypatch
):
    monkeypatch.setenv("OLLAMA_BASE_URL", f"{llm.url}/v1")
    with serve(config_file=EXAMPLES / "ollama-multi-collection.yaml") as client:
        stored = client.post(
            "/documents?wait=true",
            files={"file": ("leave-policy.md", HR_DOC, "text/markdown")},
            data={"collection": "hr"},
        )
        assert stored.status_code == 201, stored.text
        assert (
            client.get("/documents", params={"collection": "hr"}).json()["documents"][0]["title"]
            == "Annual leave policy"
        )
        assert (
            client.post(
                "/documents?wait=true",
                files={"file": ("x.md", HR_DOC, "text/markdown")},
                data={"collection": "payroll"},
            ).status_code
            == 422
        )

        leave = ask(client, "how many days of annual leave do I get", collections=["hr"])
        assert leave["answer_policy"]["rule"]["name"] == "HR policy"
        assert leave["answer_policy"]["profile"]["collection"] == "hr"
        assert any("HR assistant" in s and "28 days" in s for s in systems(llm))
        assert not any("Classify the employee" in json.dumps(r["body"]) for r in llm.requests)  # a match: no intent

        llm.requests.clear()
        vpn = ask(client, "How do I connect to the VPN on my Mac?")
        assert vpn["answer_policy"]["rule"]["name"] == "IT article"
        assert not any("Classify the employee" in json.dumps(r["body"]) for r in llm.requests)

        llm.requests.clear()
        vague = ask(client, "zebra quantum marmalade")
        assert vague["answer_policy"]["profile"]["rag_result"] == "none"
        assert vague["answer_policy"]["profile"]["intent_detected"] is True
        assert vague["answer_policy"]["rule"]["name"] == "HR question without a clear policy"
        assert sum("Classify the employee" in json.dumps(r["body"]) for r in llm.requests) == 1

        unknown = client.post("/chat", json={"message": "hi", "collections": ["finance"]})
        assert unknown.status_code == 422 and "kb, hr" in unknown.json()["detail"]


def test_the_chat_only_example_answers_every_question_from_the_llm_with_its_persona(serve, llm, monkeypatch):
    monkeypatch.setenv("OLLAMA_BASE_URL", f"{llm.url}/v1")
    with serve(config_file=EXAMPLES / "chat-only.yaml", kb_dir=None) as client:
        reply = ask(client, "how do I speed up my laptop?")
        assert reply["answer_policy"]["rule"]["name"] == "chat"
        assert any("friendly IT helper" in s for s in systems(llm))
        assert reply["answer"].startswith("_This answer comes from general knowledge")
        assert reply["sources"] == []


def test_system_message_directives_steer_the_mode_and_bad_ones_are_refused_or_reported(serve, llm):
    with serve(llm_base_url=f"{llm.url}/v1", llm_model="stub") as client:
        hybrid = ask(
            client,
            "what is the capital of france",
            system="You are the IT desk.\nRESPONSE_MODE: LLM_ONLY\nMIN_CONFIDENCE: high",
        )
        assert hybrid["answer_policy"]["plan"]["source"] == "llm" and hybrid["mode_notice"]
        assert any("MIN_CONFIDENCE" in w for w in hybrid["directive_warnings"])
        assert any("You are the IT desk." in json.dumps(r["body"]) for r in llm.requests)  # the persona
        refused = client.post("/chat", json={"message": "hi", "system": "RESPONSE_MODE: MAGIC"})
        assert refused.status_code == 422 and "RESPONSE_MODE" in refused.json()["detail"]
        bad_mode = client.post("/chat", json={"message": "hi", "response_mode": "magic"})
        assert bad_mode.status_code == 422


def test_a_broken_configuration_file_stops_the_start_with_every_problem_listed(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "llms:\n  a: {type: openai-compatible}\nresponses:\n  - match: {rag_result: maybe}\n    llm: nowhere\n"
    )
    started = subprocess.run(
        [sys.executable, "-m", "app.cli", "serve", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"DESKMATE_CONFIG": str(broken), "PATH": "/usr/bin:/bin", "DESKMATE_DATA_DIR": str(tmp_path / "d")},
    )
    assert started.returncode == 2 and "Traceback" not in started.stderr
    for problem in ("needs base_url", "rag_result must be one of", "unknown LLM 'nowhere'", "no fallback rule"):
        assert problem in started.stderr, started.stderr


PROMPT_OF = {  # a phrase only that prompt template holds → which path wrote the answer
    "documents": "using ONLY the numbered sources below",
    "documents+llm": "from the numbered sources below first",
    "llm": "from your general IT knowledge",
}


@pytest.mark.parametrize(
    "mode, min_confidence, question, source",
    [
        ("RAG_ONLY", 0.0, "what is the capital of france", "refuse"),
        ("RAG_ONLY", 1.0, "How do I connect to the VPN on my Mac?", "documents"),
        ("LLM_ONLY", 0.0, "How do I connect to the VPN on my Mac?", "llm"),
        ("HYBRID", 0.0, "How do I connect to the VPN on my Mac?", "documents+llm"),
        ("SMART_FALLBACK", 0.0, "How do I connect to the VPN on my Mac?", "documents"),
        ("SMART_FALLBACK", 1.0, "How do I connect to the VPN on my Mac?", "documents+llm"),
        ("SMART_FALLBACK", 0.5, "what is the capital of france", "llm"),
        ("RAG_PRIORITY", 1.0, "How do I connect to the VPN on my Mac?", "documents"),
        ("LLM_PRIORITY", 0.0, "How do I connect to the VPN on my Mac?", "documents+llm"),
        ("LLM_PRIORITY", 1.0, "How do I connect to the VPN on my Mac?", "llm"),
    ],
)
def test_each_response_mode_answers_through_its_own_path(serve, llm, mode, min_confidence, question, source):
    with serve(llm_base_url=f"{llm.url}/v1", llm_model="stub") as client:
        llm.requests.clear()
        reply = ask(client, question, system=f"RESPONSE_MODE: {mode}\nMIN_CONFIDENCE: {min_confidence}")
        assert reply["answer_policy"]["plan"]["source"] == source, reply["answer_policy"]["plan"]
        prompts_sent = json.dumps([r["body"] for r in llm.requests])
        for path, phrase in PROMPT_OF.items():
            assert (phrase in prompts_sent) == (path == source), (path, source)
        if source == "refuse":
            assert reply["sources"] == [] and "RAG_ONLY" in reply["mode_notice"]
        if source == "llm":
            assert reply["sources"] == [] and "general knowledge" in reply["mode_notice"]
        if source in ("documents", "documents+llm"):
            assert reply["sources"]


def test_without_an_llm_modes_that_need_one_say_so_and_answer_from_the_documents(serve):
    with serve() as client:
        documented = ask(client, "How do I connect to the VPN on my Mac?", response_mode="LLM_ONLY")
        assert documented["answer_policy"]["plan"]["source"] == "documents" and documented["sources"]
        assert documented["mode_notice"].startswith("No LLM is configured, so LLM_ONLY mode cannot answer")
        nothing = ask(client, "what is the capital of france", response_mode="HYBRID")
        assert nothing["answer_policy"]["plan"]["source"] == "needs_llm" and nothing["sources"] == []
        assert "No LLM is configured" in nothing["mode_notice"]
        default = ask(client, "How do I connect to the VPN on my Mac?")  # the default mode: no notice offline
        assert default["mode_notice"] is None and default["sources"]
