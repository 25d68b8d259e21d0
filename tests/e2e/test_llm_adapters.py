"""The OpenAI-compatible and Groq adapters over real HTTP against a protocol-speaking server on 127.0.0.1."""

import json

import pytest

from app.adapters.llm import build_chat_model
from core.errors import LLMError
from core.ports import ChatMessage
from tests.e2e.servers import OpenAICompatibleServer

pytestmark = pytest.mark.slow
DECISION = json.dumps({"reasoning": "the VPN article covers it", "action": "answer"})


def test_openai_compatible_adapter_sends_the_chat_and_reads_the_reply(make_settings):
    with OpenAICompatibleServer(["Hello from the model"]) as server:
        llm = build_chat_model(make_settings(llm_base_url=f"{server.url}/v1", llm_model="qwen-test"))
        reply = llm.complete([ChatMessage("system", "be brief"), ChatMessage("user", "hi")], max_tokens=50)
    assert reply == "Hello from the model"
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "qwen-test" and request["body"]["max_tokens"] == 50
    assert [m["role"] for m in request["body"]["messages"]] == ["system", "user"]


def test_groq_adapter_speaks_groqs_openai_path_with_the_key(make_settings):
    with OpenAICompatibleServer(["hi from groq"]) as server:
        llm = build_chat_model(
            make_settings(groq_api_key="gsk_test_key_123", groq_base_url=server.url, groq_model="llama-test")
        )
        assert llm.name == "groq:llama-test"
        assert llm.complete([ChatMessage("user", "hi")]) == "hi from groq"
    request = server.requests[0]
    assert request["path"] == "/openai/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer gsk_test_key_123"
    assert request["body"]["model"] == "llama-test"


@pytest.mark.parametrize("reply", [500, 429, "<<not json>>", ""])
def test_server_errors_and_garbage_become_llm_errors(make_settings, reply):
    with OpenAICompatibleServer([reply, reply, reply]) as server:
        llm = build_chat_model(make_settings(llm_base_url=f"{server.url}/v1", llm_model="m"))
        with pytest.raises(LLMError):
            llm.complete([ChatMessage("user", "hi")])


def test_a_slow_server_times_out_into_an_llm_error(make_settings):
    with OpenAICompatibleServer(["late"] * 3, delay_s=3) as server:
        llm = build_chat_model(make_settings(llm_base_url=f"{server.url}/v1", llm_model="m", llm_timeout_s=0.5))
        with pytest.raises(LLMError):
            llm.complete([ChatMessage("user", "hi")])


def test_chat_through_the_app_uses_the_configured_llm_end_to_end(serve):
    answer = "Open Secure Client, type vpn.example.test and click Connect [1]."
    with OpenAICompatibleServer([DECISION, answer]) as server:
        with serve(llm_base_url=f"{server.url}/v1", llm_model="stub") as client:
            reply = client.post("/chat", json={"message": "How do I connect to the VPN on my Mac?"}).json()
    assert reply["answer"].startswith(answer) and reply["fallback_notice"] is None
    assert reply["sources"][0]["n"] == 1 and reply["sources"][0]["source"] == "kb/vpn-connect.md"
    prompt = server.requests[1]["body"]["messages"][1]["content"]
    assert '<source id="1"' in prompt and "Enter the number shown on your Mac" in prompt


def test_a_broken_llm_never_breaks_the_chat_and_the_reply_says_so(serve):
    with OpenAICompatibleServer([500, 500, 500, 500]) as server:
        with serve(llm_base_url=f"{server.url}/v1", llm_model="stub") as client:
            response = client.post("/chat", json={"message": "How do I connect to the VPN on my Mac?"})
    assert response.status_code == 200
    reply = response.json()
    assert "could not be reached" in reply["fallback_notice"]
    assert "Enter the number shown on your Mac" in reply["answer"] and reply["sources"]


def test_the_llm_never_receives_a_typed_password(serve):
    with OpenAICompatibleServer([DECISION, "Reset it at the portal [1]."]) as server:
        with serve(llm_base_url=f"{server.url}/v1", llm_model="stub") as client:
            client.post("/chat", json={"message": "my password is Hunter2Secret! and the VPN says login failed"})
    bodies = json.dumps([r["body"] for r in server.requests])
    assert server.requests and "Hunter2Secret" not in bodies and "[REDACTED:PASSWORD]" in bodies


def test_the_llm_writes_from_the_resolution_the_offline_answer_would_quote(serve):
    """A symptom-worded question: source [1] of the prompt is the article's resolution (role given), the
    symptoms it matched are not what the LLM is asked to answer from."""
    article = (
        b"# Badge reader rejects my badge\n\n## Symptoms\n\nThe door reader blinks red three times when you "
        b"hold your badge to it, and the door stays locked.\n\n## Cause\n\nThe badge certificate expired.\n\n"
        b"## Resolution\n\n1. Open the Badge portal and choose Renew.\n2. Hold the badge to the desk reader "
        b"at reception for ten seconds.\n3. Try the door again after five minutes.\n"
    )
    answer = "Renew your badge in the Badge portal, then hold it to the reception reader [1]."
    decision = '{"action": "answer", "reasoning": "the knowledge base covers it"}'
    with OpenAICompatibleServer([decision, answer]) as server:
        with serve(llm_base_url=f"{server.url}/v1", llm_model="stub") as client:
            assert client.post("/documents?wait=true", files={"file": ("badge.md", article)}).status_code == 201
            reply = client.post(
                "/chat",
                json={
                    "message": "the door reader gives three red flashes when i hold my "
                    "badge to it and the door stays shut"
                },
            ).json()
    assert reply["answer"].startswith(answer) and reply["fallback_notice"] is None
    assert reply["sources"][0]["source"] == "uploads/badge.md" and reply["sources"][0]["section"] == "Resolution"
    prompt = server.requests[-1]["body"]["messages"][1]["content"]
    first = prompt.split('<source id="1"')[1].split("</source>")[0]
    assert 'role="resolution"' in first and "Open the Badge portal and choose Renew" in first
    assert "blinks red three times" not in first
