"""A password, an API key and an e-mail address typed in chat appear nowhere afterwards.

Through the real app (real MiniLM, real Chroma, real SQLite) with an OpenAI-compatible LLM server and a
Langfuse receiver on 127.0.0.1; then every place text can end up is searched for the raw values: every
file under the data directory (sessions, tickets, feedback, traces — whatever exists), the log output
(records and the stream on stderr), every LLM request body and every Langfuse export.
"""

import gzip
import json
import logging
import sqlite3

import pytest

from app.adapters.memory import CompressedSerializer
from app.adapters.traces import unpack_record
from tests.e2e.servers import OpenAICompatibleServer, RecordingServer

pytestmark = pytest.mark.slow

PASSWORD = "Zebra!Quill-4471"
API_KEY = "sk-proj-Wq7Lm2Xz9Rk4Tn1Vb6Hc3Jd8Fs5Gp0Ya"
EMAIL = "dana.whitfield@corp-mail.example"
NAME = "Marguerite Okonkwo"
MESSAGE = (
    f"my password is {PASSWORD} and my api key {API_KEY} stopped working for the VPN on my Mac; "
    f"my manager {NAME} says mail me at {EMAIL}"
)
RAW_VALUES = [PASSWORD, API_KEY, EMAIL]


def llm_reply(request: dict) -> str:
    prompt = json.dumps(request["body"]["messages"])
    if "Reply with one JSON object" in prompt:
        return json.dumps({"reasoning": "the VPN article covers it", "action": "answer"})
    return "Open Secure Client and connect to the VPN [1]."


def chat_once(make_settings, serve, message: str, session_id: str):
    """One chat turn through the real app with an LLM server on 127.0.0.1: (reply, every LLM request body
    as JSON, the session read back, settings). Fails when the LLM was never called."""
    llm = OpenAICompatibleServer()
    llm.default_reply = llm_reply
    with llm:
        settings = make_settings(llm_base_url=f"{llm.url}/v1", llm_model="stub")
        with serve(settings) as client:
            reply = client.post("/chat", json={"message": message, "session_id": session_id})
            history = client.get(f"/sessions/{session_id}")
    assert llm.requests, "the LLM was never called"
    return reply, json.dumps([r["body"] for r in llm.requests]), history, settings


def trace_records(path) -> bytes:
    """The trace records an SQLite file holds, decompressed (the raw file holds them zlib-compressed, where a
    byte search finds nothing either way)."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT record, packed FROM runs").fetchall()
    except sqlite3.Error:  # not a database, or one without traces
        return b""
    return "\n".join(unpack_record(packed if packed is not None else text) for text, packed in rows).encode()


def checkpoints(path) -> bytes:
    """The session checkpoints (and pending writes) an SQLite file holds, decompressed: the session store
    compresses them too."""
    serde = CompressedSerializer()
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            rows = conn.execute(
                "SELECT type, checkpoint FROM checkpoints UNION ALL SELECT type, value FROM writes"
            ).fetchall()
    except sqlite3.Error:  # not a database, or one without checkpoints
        return b""
    return b"\n".join(
        json.dumps(serde.loads_typed((kind, blob)), default=repr).encode()
        for kind, blob in rows
        if kind and blob is not None
    )


def files_containing(root, values: list[str]) -> list[str]:
    hits = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if data.startswith(b"SQLite format 3"):
            data += trace_records(path) + checkpoints(path)
        hits += [
            f"{path.relative_to(root)}: {v}" for v in values if v.encode() in data or v.encode("utf-16-le") in data
        ]
    return hits


def test_a_password_api_key_and_email_typed_in_chat_appear_nowhere_afterwards(make_settings, serve, caplog, capfd):
    llm = OpenAICompatibleServer()
    llm.default_reply = llm_reply
    with llm, RecordingServer() as langfuse:
        # its own Langfuse key: the SDK keeps one exporter per public key for the whole process
        settings = make_settings(
            llm_base_url=f"{llm.url}/v1",
            llm_model="stub",
            langfuse_public_key="pk-lf-noleaks",
            langfuse_secret_key="sk-lf-noleaks",
            langfuse_host=langfuse.url,
            log_level="DEBUG",
        )
        with caplog.at_level(logging.DEBUG):
            with serve(settings) as client:
                first = client.post("/chat", json={"message": MESSAGE, "session_id": "leak-1"})
                # a follow-up, and a feedback reason: more paths that store or send text
                client.post("/chat", json={"message": f"still failing, pw {PASSWORD} again", "session_id": "leak-1"})
                client.post(
                    "/feedback",
                    json={
                        "message_id": first.json()["trace_id"],
                        "session_id": "leak-1",
                        "rating": "down",
                        "reason": f"my password {PASSWORD} is still refused",
                    },
                )
                history = client.get("/sessions/leak-1")
                # a library that logs what it was given (a debug line, a stray exception message) is covered too
                logging.getLogger("uvicorn.error").warning("could not parse request body: %s", MESSAGE)
            # leaving the app closes the stores and flushes the tracer
        logs = caplog.text + "\n".join(capfd.readouterr())

    assert first.status_code == 200
    reply = first.json()
    assert reply["redaction_notice"] and "change any password" in reply["redaction_notice"]

    # the data directory: SQLite sessions (and its WAL), tickets, feedback, traces, Chroma — every file
    assert files_containing(settings.storage.data_dir, RAW_VALUES) == []
    assert any(settings.storage.data_dir.rglob("sessions.sqlite*")), "the session store was not written"
    traced = b"".join(trace_records(p) for p in settings.storage.data_dir.rglob("*.sqlite"))
    assert b"[REDACTED:PASSWORD]" in traced, "the turn's trace (decompressed) was not searched"
    saved = b"".join(checkpoints(p) for p in settings.storage.data_dir.rglob("sessions.sqlite"))
    assert b"[REDACTED:PASSWORD]" in saved, "the session's checkpoint (decompressed) was not searched"

    # the log output: records and what the handlers wrote
    assert logs.strip(), "nothing was logged"
    assert [v for v in RAW_VALUES if v in logs] == []

    # every request the LLM received; the name is also kept from it (the LLM policy removes names)
    assert llm.requests, "the LLM was never called"
    bodies = json.dumps([r["body"] for r in llm.requests])
    assert [v for v in RAW_VALUES + [NAME] if v in bodies] == []
    assert "[REDACTED:PASSWORD]" in bodies and "[REDACTED:EMAIL_1]" in bodies and "[REDACTED:PERSON_1]" in bodies

    # every export Langfuse received (OTLP protobuf, maybe gzipped: strings are stored as UTF-8)
    assert langfuse.requests, "nothing was traced"
    exports = b"".join(
        gzip.decompress(r["body"]) if r["body"][:2] == b"\x1f\x8b" else r["body"] for r in langfuse.requests
    )
    assert [v for v in RAW_VALUES + [NAME] if v.encode() in exports] == []
    assert b"[REDACTED:PASSWORD]" in exports

    # what the session remembers, read back through the API, is the redacted turn
    assert history.status_code == 200  # the remembered conversation, read back through the API
    assert [v for v in RAW_VALUES if v in history.text] == []


def test_a_private_key_pasted_in_chat_is_stored_and_sent_as_one_placeholder(serve):
    key = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
        "QyNTUxOQAAACBvZk3C1fKq8K3x2ZzE2Hc9G6fX0tq9hT0W6fZ8pB4kXgAAAJgN0Y5ZDdGO\n-----END OPENSSH PRIVATE KEY-----"
    )
    llm = OpenAICompatibleServer()
    llm.default_reply = llm_reply
    with llm:
        with serve(llm_base_url=f"{llm.url}/v1", llm_model="stub") as client:
            reply = client.post("/chat", json={"message": f"is this key ok for the VPN?\n{key}"}).json()
    bodies = json.dumps([r["body"] for r in llm.requests])
    assert "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" not in bodies and "[REDACTED:PRIVATE_KEY]" in bodies
    assert "private key" in reply["redaction_notice"]


def test_passwords_in_a_pasted_command_and_config_never_reach_the_store_or_the_llm(make_settings, serve):
    share_pw, db_pw = "Wint3r#Share24", "Kube!Secret-9931"
    paste = (
        "the drive mapping fails:\n"
        f"C:\\> net use Z: \\\\fs01\\finance {share_pw} /user:CORP\\jdoe\n"
        "System error 53 has occurred.\n"
        "and our app's deployment has\n"
        f'env:\n  - name: DB_PASSWORD\n    value: "{db_pw}"\n  - name: DB_HOST\n    value: db01'
    )
    reply, bodies, history, settings = chat_once(make_settings, serve, paste, "paste-1")
    assert reply.status_code == 200 and reply.json()["redaction_notice"]
    assert share_pw not in bodies and db_pw not in bodies
    assert "db01" in bodies and "fs01" in bodies  # the rest of the paste still reaches the LLM
    assert files_containing(settings.storage.data_dir, [share_pw, db_pw]) == []
    assert share_pw not in history.text and db_pw not in history.text


def test_a_password_mentioned_twice_in_passing_never_reaches_the_store_or_the_llm(make_settings, serve):
    pw = "Lm4!quartz88"
    message = f"outlook keeps asking for my password, I entered {pw} like 5 times. then teams said {pw} is wrong too"
    reply, bodies, history, settings = chat_once(make_settings, serve, message, "twice-1")
    assert reply.status_code == 200 and "password" in reply.json()["redaction_notice"]
    assert pw not in bodies and "outlook keeps asking" in bodies
    assert files_containing(settings.storage.data_dir, [pw]) == []
    assert pw not in history.text


def test_pasted_code_keeps_its_code_and_loses_only_the_credentials(make_settings, serve):
    import base64

    key = "Zq8vT3kLm9WxR2pN7cYb4HsD"
    blob = base64.b64encode(b"jdoe:Wint3r#Reg24").decode()
    paste = (
        "our sync script fails with 401, this is the client:\n"
        "def connect(host: str, password: str | None = None, retries: int = 3):\n"
        "    token = Name.Builtin if password else None\n"
        f'    api_key = "{key}"\n'
        f'and ~/.docker/config.json has {{"auths": {{"registry.corp.example": {{"auth": "{blob}"}}}}}}'
    )
    reply, bodies, history, settings = chat_once(make_settings, serve, paste, "code-1")
    assert reply.status_code == 200 and reply.json()["redaction_notice"]
    assert key not in bodies and blob not in bodies
    # the code around them reaches the LLM as written, so it can still help with the 401
    assert "password: str | None = None" in bodies and "token = Name.Builtin if password" in bodies
    assert files_containing(settings.storage.data_dir, [key, blob]) == []
    assert key not in history.text and blob not in history.text


def test_a_password_pasted_by_mistake_with_no_word_about_it_never_reaches_the_store_or_the_llm(make_settings, serve):
    pw = "fsgb682$LDE"
    message = f"vpn drops every 10 minutes on the Model#UN55 dock\nsorry wrong window, {pw}"
    reply, bodies, history, settings = chat_once(make_settings, serve, message, "mistake-1")
    assert reply.status_code == 200 and reply.json()["redaction_notice"]
    assert pw not in bodies and "Model#UN55 dock" in bodies  # the rest of the message reaches the LLM as typed
    assert files_containing(settings.storage.data_dir, [pw]) == []
    assert pw not in history.text


def test_a_passphrase_of_several_words_never_reaches_the_store_or_the_llm(make_settings, serve):
    words = ["marigold", "saxophone", "glacier"]
    message = f"my new password is {' '.join(words)} 17, but the vpn client on my mac still says authentication failed"
    reply, bodies, history, settings = chat_once(make_settings, serve, message, "passphrase-1")
    assert reply.status_code == 200 and "password" in reply.json()["redaction_notice"]
    assert not [w for w in words if w in bodies] and "the vpn client on my mac" in bodies
    assert files_containing(settings.storage.data_dir, words) == []
    assert not [w for w in words if w in history.text]


def test_a_password_in_the_system_message_or_as_user_colon_password_never_reaches_the_store(make_settings, serve):
    persona_pw, pair_pw = "Tundra#Wick-5520", "Zq7!Lp4#Wg7y"
    system = f"You are the help desk of Acme. The lab admin password is {persona_pw}; never share it."
    llm = OpenAICompatibleServer()
    llm.default_reply = llm_reply
    with llm:
        settings = make_settings(llm_base_url=f"{llm.url}/v1", llm_model="stub")
        with serve(settings) as client:
            chat = client.post(
                "/chat",
                json={"message": f"vpn login fails with bob:{pair_pw}", "system": system, "session_id": "persona-1"},
            )
            v1 = client.post(
                "/v1/chat/completions",
                json={
                    "model": "deskmate",
                    "messages": [
                        {"role": "system", "content": system},
                        {"role": "user", "content": "how do I connect to the vpn?"},
                    ],
                },
            )
            history = client.get("/sessions/persona-1")
    assert chat.status_code == 200 and v1.status_code == 200, (chat.text, v1.text)
    assert "password" in chat.json()["redaction_notice"]
    bodies = json.dumps([r["body"] for r in llm.requests])
    assert persona_pw not in bodies and pair_pw not in bodies and "help desk of Acme" in bodies
    assert files_containing(settings.storage.data_dir, [persona_pw, pair_pw]) == []
    assert persona_pw not in history.text and pair_pw not in history.text
