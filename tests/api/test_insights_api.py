"""GET /admin/insights through the real app (real embedder, Chroma, SQLite): conversations with known outcomes
give exact figures; the meeting-room gap, the Helpful VPN article and the ticket show; admins only."""

from __future__ import annotations

import csv
import io

import pytest

from app.identity import make_user_token

pytestmark = pytest.mark.slow

ADMIN_KEY = "adm-" + "Qm4Lx8Rt2Vb6Nz1Kp9Wc3Hs7Jd5Gf0Ya"
USER_SECRET = "usr-" + "Tz1Rk9Wm4Pc7Hs2Jd5Gf0YaVb8Nq3Lx6"
ROOM_QUESTIONS = (
    "How do I book a meeting room?",
    "can I book the boardroom for a client meeting",
    "I need to reserve a meeting room for my team on Thursday, how do I do that?",
)
VPN_QUESTIONS = ("How do I connect to the VPN?", "How do I set up the VPN on Windows?")


def chat(client, message: str, channel: str, session_id: str | None = None, headers: dict | None = None) -> dict:
    body = {"message": message, "channel": channel} | ({"session_id": session_id} if session_id else {})
    response = client.post("/chat", json=body, headers=headers or {})
    assert response.status_code == 200, response.text
    return response.json()


def vote(client, reply: dict, rating: str, headers: dict | None = None) -> None:
    body = {"session_id": reply["session_id"], "message_id": reply["message_id"], "rating": rating}
    assert client.post("/feedback", json=body, headers=headers or {}).status_code == 201


def test_three_people_asking_for_a_meeting_room_two_helpful_vpn_answers_and_a_ticket_give_exact_figures(serve):
    with serve() as client:
        rooms = [chat(client, q, "web") for q in ROOM_QUESTIONS]
        assert all(not r["sources"] for r in rooms), "the sample KB has nothing on meeting rooms"
        offered = next(r for r in rooms if r["ticket_event"] == "offered")
        created = chat(client, "yes", "web", offered["session_id"])
        assert created["ticket_event"] == "created"
        vpn = [chat(client, q, "cli") for q in VPN_QUESTIONS]
        assert all(r["sources"] and r["sources"][0]["title"] == "Connecting to the VPN" for r in vpn)
        for reply in vpn:
            vote(client, reply, "up")
        figures = client.get("/admin/insights").json()
        exported = client.get("/admin/insights.csv")

    volume = figures["volume"]
    assert volume["turns"] == 6
    assert {(row["channel"], row["turns"]) for row in volume["by_day"]} == {("web", 4), ("cli", 2)}
    assert volume["by_outcome"]["ticket_created"] == 1
    assert volume["by_outcome"]["answered"] + volume["by_outcome"]["walkthrough_step"] == 2
    # five conversations: the two VPN ones ended answered with no ticket, and their users said so (Helpful)
    assert figures["deflection"] == {
        "conversations": 5,
        "deflected": 2,
        "deflection_rate": 0.4,
        "resolved_by_user": 2,
        "resolved_by_user_rate": 0.4,
        "with_ticket": 1,
    }
    assert figures["tickets"] == {"created": 1, "by_category": {"incident": 1}, "by_priority": {"medium": 1}}

    [gap] = figures["knowledge_gaps"]
    assert gap["size"] == 3 and gap["askers"] == 3
    assert {"meeting", "room"} <= set(gap["label"].split())
    assert sorted(gap["examples"]) == sorted(ROOM_QUESTIONS)
    assert gap["draft"].startswith("# ") and all(f"- {q}" in gap["draft"] for q in ROOM_QUESTIONS)

    articles = figures["articles"]
    assert articles["votes_by_article"] == [
        {"doc_id": vpn[0]["sources"][0]["doc_id"], "title": "Connecting to the VPN", "helpful": 2, "not_helpful": 0}
    ]
    assert articles["most_cited"][0]["title"] == "Connecting to the VPN" and articles["most_cited"][0]["citations"] == 2
    assert "Connecting to the VPN" not in {a["title"] for a in articles["never_cited"]}
    assert len(articles["never_cited"]) == 3  # the fixture KB's other three articles

    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(exported.text)))
    assert ["deflection", "deflection_rate", "", "0.4"] in rows
    assert ["turns_per_day", figures["volume"]["by_day"][0]["day"], "web", "4"] in rows


def test_a_walkthrough_that_fails_ends_in_a_ticket_and_a_down_vote_makes_its_question_a_gap_candidate(serve):
    with serve() as client:
        step = chat(client, "the VPN keeps disconnecting every few minutes", "api")
        assert step["action"] == "troubleshoot", step["answer"]
        session = step["session_id"]
        reply = step
        for _ in range(6):  # "still broken" until the walkthrough hands over to a ticket offer
            if reply["ticket_event"] == "offered":
                break
            reply = chat(client, "still broken", "api", session)
        assert reply["ticket_event"] == "offered"
        assert chat(client, "yes", "api", session)["ticket_event"] == "created"
        answered = chat(client, "How do I connect to the VPN?", "api")
        vote(client, answered, "down")
        figures = client.get("/admin/insights").json()

    [ended] = figures["articles"]["walkthroughs_ending_in_ticket"]
    assert ended["title"] == "Connecting to the VPN" and ended["walkthroughs"] == 1 and ended["ended_in_ticket"] == 1
    assert figures["deflection"]["conversations"] == 2 and figures["deflection"]["with_ticket"] == 1
    assert figures["deflection"]["deflected"] == 1 and figures["deflection"]["resolved_by_user"] == 0
    assert figures["articles"]["votes_by_article"][0]["not_helpful"] == 1
    # a single down-voted question is a gap candidate, but one question from one person is never shown
    assert figures["gap_questions_considered"] >= 1 and figures["knowledge_gaps"] == []


def test_a_gap_is_shown_only_when_at_least_two_people_asked(serve):
    def person(name: str) -> dict:
        return {"X-Deskmate-User": make_user_token(USER_SECRET, name, [], ttl_s=600)}

    with serve(admin_key=ADMIN_KEY, user_token_secret=USER_SECRET) as client:
        admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
        for question in ROOM_QUESTIONS:  # one person, three conversations
            chat(client, question, "web", headers=person("ana"))
        alone = client.get("/admin/insights", headers=admin).json()
        chat(client, "where do I book a meeting room for a workshop?", "web", headers=person("ben"))
        together = client.get("/admin/insights", headers=admin).json()
    assert alone["gap_questions_considered"] == 3 and alone["knowledge_gaps"] == []
    [gap] = together["knowledge_gaps"]
    assert gap["size"] == 4 and gap["askers"] == 2


def test_insights_are_for_admins_only_and_a_bad_window_is_refused(serve):
    with serve(admin_key=ADMIN_KEY) as client:
        assert client.get("/admin/insights").status_code == 401
        assert client.get("/admin/insights.csv").status_code == 401
        wrong = client.get("/admin/insights", headers={"Authorization": "Bearer not-the-key"})
        assert wrong.status_code == 401
        admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
        assert client.get("/admin/insights", headers=admin).status_code == 200
        backwards = client.get("/admin/insights?from=2026-02-01&to=2026-01-01", headers=admin)
        assert backwards.status_code == 422 and "after" in backwards.json()["detail"]
        assert client.get("/admin/insights?from=2020-01-01&to=2026-01-01", headers=admin).status_code == 422
        assert client.get("/admin/insights?from=yesterday", headers=admin).status_code == 422
        unknown = client.get("/admin/insights?collection=nope", headers=admin)
        assert unknown.status_code == 422 and "Unknown collection" in unknown.json()["detail"]
        assert client.post("/chat", json={"message": "hi", "channel": "fax"}).status_code == 422


def test_deskmate_report_writes_one_self_contained_page_from_the_data_folder(serve, make_settings, tmp_path):
    import os
    import subprocess
    import sys

    settings = make_settings()
    with serve(settings) as client:
        for question in ROOM_QUESTIONS:
            chat(client, question, "web")
        reply = chat(client, VPN_QUESTIONS[0], "cli")
        vote(client, reply, "up")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKMATE_", "GROQ_", "LANGFUSE_", "CHROMA_"))}
    env |= {"DESKMATE_DATA_DIR": str(settings.storage.data_dir)}
    out = tmp_path / "report.html"
    run = subprocess.run(
        [sys.executable, "-m", "app.cli", "report", "--local", "--since", "7d", "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "4 turns" in run.stdout and "4 conversations" in run.stdout and "1 knowledge gap" in run.stdout
    page = out.read_text()
    # everything inlined: Chart.js, the drawing script, the figures; nothing fetched from anywhere
    assert "Chart.js v4" in page and "DeskmateInsights" in page and "book a meeting room" in page
    assert " src=" not in page and "<link" not in page and "http://" not in page.split("<script>")[0]
    bad = subprocess.run(
        [sys.executable, "-m", "app.cli", "report", "--local", "--since", "last week"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "7d or 4w" in bad.stderr
