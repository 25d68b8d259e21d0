"""Troubleshooting, tickets and status through the compiled support graph (fakes for desk and status page)."""

import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs.support import build_support_graph, turn_input, turn_result
from tests.fakes import FakeStatusChecker, FakeTicketDesk, ScriptedChatModel, incident, status_report

PROBLEM = "My VPN keeps disconnecting"


class Conversation:
    def __init__(self, context, graph=None, user_id="alice"):
        self.graph = graph or build_support_graph(InMemorySaver())
        self.context = context
        self.config = {"configurable": {"thread_id": uuid.uuid4().hex, "user_id": user_id}}

    def say(self, text, user_os=None):
        return turn_result(
            self.graph.invoke(turn_input(text, user_os), self.config, context=self.context, durability="exit")
        )


@pytest.fixture
def desk():
    return FakeTicketDesk()


@pytest.fixture
def support(fake_kb_context, desk):
    def factory(**overrides):
        return fake_kb_context(**({"tickets": desk} | overrides))

    return factory


def test_a_problem_with_documented_steps_is_guided_step_by_step_to_resolution(support):
    chat = Conversation(support())
    first = chat.say(PROBLEM)
    assert first["action"] == "troubleshoot" and first["needs_input"]
    assert "Step 1 of 4:** Open a public website" in first["answer"]
    assert first["sources"][0]["source"] == "kb/vpn-connect.md"
    second = chat.say("still broken")
    assert "Step 2 of 4:** Quit Secure Client" in second["answer"]
    assert second["troubleshooting"]["failed"] == 1
    done = chat.say("It works now!")
    assert done["troubleshooting"]["status"] == "resolved" and not done["needs_input"]
    assert [s["outcome"] for s in done["troubleshooting"]["steps"]] == ["failed", "resolved", "pending", "pending"]
    assert "glad that fixed it" in done["answer"]


def test_an_unclear_reply_is_asked_about_once_then_counted_as_not_fixed(support):
    chat = Conversation(support())
    chat.say(PROBLEM)
    asked = chat.say("I opened a website and it loaded")
    assert asked["troubleshooting"]["current"] == 0 and "Did that fix it?" in asked["answer"]
    moved_on = chat.say("the page loaded fine")
    assert moved_on["troubleshooting"]["current"] == 1


def test_three_failed_steps_escalate_to_a_ticket_that_is_created_only_after_yes(support, desk):
    chat = Conversation(support())
    chat.say(PROBLEM, user_os="windows")
    chat.say("still broken")
    chat.say("no luck")
    offer = chat.say("still the same problem")
    assert offer["troubleshooting"]["status"] == "escalated"
    assert offer["ticket_event"] == "offered" and offer["needs_input"]
    assert "didn't fix it either" in offer["answer"] and "Shall I create it?" in offer["answer"]
    assert desk.tickets == {}  # nothing is created without consent
    edited = chat.say("make it high priority")
    assert edited["ticket_event"] == "edited" and edited["ticket_offer"]["priority"] == "high"
    created = chat.say("yes")
    assert created["ticket_event"] == "created" and created["ticket"]["status"] == "open"
    (ticket,) = desk.tickets.values()
    assert ticket["priority"] == "high" and ticket["os"] == "Windows" and ticket["user_id"] == "alice"
    assert [s["outcome"] for s in ticket["steps_tried"]] == ["failed", "failed", "failed"]
    assert ticket["summary"] == "My VPN keeps disconnecting"
    assert any(m["content"] == PROBLEM for m in ticket["conversation"])


def test_the_same_escalation_twice_yields_one_ticket(support, desk):
    graph = build_support_graph(InMemorySaver())
    chat = Conversation(support(), graph)
    for reply in (PROBLEM, "still broken", "still broken", "still broken", "yes"):
        chat.say(reply)
    again = chat.say("can you open a ticket for my vpn please")
    assert again["ticket_event"] == "existing" and again["ticket"]["id"] in again["answer"]
    other_session = Conversation(support(), graph, user_id="alice")  # same user, same problem, new chat
    for reply in (PROBLEM, "still broken", "still broken", "still broken"):
        repeat = other_session.say(reply)
    assert repeat["ticket_event"] == "existing"
    assert len(desk.tickets) == 1


def test_it_works_now_closes_the_ticket_of_the_conversation(support, desk):
    chat = Conversation(support())
    for reply in (PROBLEM, "still broken", "still broken", "still broken", "yes"):
        chat.say(reply)
    closed = chat.say("it works now")
    assert closed["ticket_event"] == "closed" and closed["ticket"]["status"] == "closed"
    (ticket,) = desk.tickets.values()
    assert ticket["status"] == "closed" and "works now" in desk.closed_with[ticket["id"]]


def test_declining_the_offer_creates_nothing(support, desk):
    chat = Conversation(support())
    offer = chat.say("please open a ticket, my vpn keeps disconnecting")
    assert offer["ticket_event"] == "offered"
    declined = chat.say("no thanks")
    assert declined["ticket_event"] == "declined" and desk.tickets == {}


def test_stop_leaves_the_workflow(support):
    chat = Conversation(support())
    chat.say(PROBLEM)
    out = chat.say("never mind")
    assert out["troubleshooting"]["status"] == "exited" and not out["needs_input"]


def test_a_new_question_mid_workflow_is_answered_and_the_workflow_can_resume(support):
    chat = Conversation(support())
    chat.say(PROBLEM)
    aside = chat.say("How do I submit an expense claim in Ledgerly?")
    assert aside["action"] == "answer" and "Click New claim" in aside["answer"]
    assert aside["troubleshooting"]["status"] == "paused" and 'say "continue"' in aside["answer"]
    back = chat.say("continue")
    assert back["troubleshooting"]["status"] == "in_progress" and "Step 1 of 4" in back["answer"]


def test_ticket_status_question_lists_the_users_tickets(support):
    chat = Conversation(support())
    for reply in (PROBLEM, "still broken", "still broken", "still broken", "yes"):
        created = chat.say(reply)
    status = chat.say("what's the status of my ticket?")
    assert status["action"] == "search_tickets"
    assert created["ticket"]["id"] in status["answer"] and "open" in status["answer"]


def test_an_outage_question_reports_the_status_page(support):
    checker = FakeStatusChecker(
        status_report(
            incidents=[incident("VPN connectivity issues", ["VPN"])],
            components=[{"name": "VPN", "status": "major_outage"}, {"name": "Email", "status": "operational"}],
        )
    )
    out = Conversation(support(status=checker)).say("Is there an outage?")
    assert out["action"] == "answer" and out["status_checked"]
    assert "VPN connectivity issues" in out["answer"]
    assert checker.calls == 1


def test_a_problem_matching_a_known_incident_is_told_about_it_instead_of_troubleshooting(support):
    checker = FakeStatusChecker(
        status_report(
            incidents=[incident("VPN connectivity issues", ["VPN"], update="We are investigating VPN disconnects.")]
        )
    )
    out = Conversation(support(status=checker)).say(PROBLEM)
    assert out["action"] == "answer" and out["incidents"][0]["name"] == "VPN connectivity issues"
    assert out["answer"].index("VPN connectivity issues") < out["answer"].index("knowledge base says")


def test_an_unreachable_status_page_is_mentioned_and_help_continues(support):
    checker = FakeStatusChecker(status_report(ok=False, error="the status page did not answer within 3 s"))
    out = Conversation(support(status=checker)).say(PROBLEM)
    assert out["action"] == "troubleshoot"
    assert out["status_checked"] and out["status_ok"] is False


def test_a_problem_the_kb_does_not_cover_is_offered_a_ticket(support):
    out = Conversation(support(min_score=0.95)).say("the coffee machine app keeps crashing")
    assert out["action"] == "create_ticket" and out["ticket_event"] == "offered"


def test_with_an_llm_steps_come_from_it_and_a_bad_reply_falls_back_to_the_docs(support):
    llm = ScriptedChatModel(
        [
            '{"reasoning": "problem with steps", "action": "troubleshoot"}',
            '{"steps": ["Check the Wi-Fi icon", "Restart Secure Client", "Restart the laptop", "Reinstall it"]}',
        ]
    )
    out = Conversation(support(llm=llm)).say(PROBLEM)
    assert out["decided_by"] == "llm" and "Step 1 of 4:** Check the Wi-Fi icon" in out["answer"]
    broken = ScriptedChatModel(['{"action": "troubleshoot"}', "sure! here are steps: 1) a 2) b"])
    out = Conversation(support(llm=broken)).say(PROBLEM)
    assert out["fallback_notice"] and "Step 1 of 4:** Open a public website" in out["answer"]


def test_code_overrides_an_llm_that_answers_a_problem_with_documented_steps(support):
    llm = ScriptedChatModel(['{"reasoning": "just answer", "action": "answer"}'])
    out = Conversation(support(llm=llm)).say(PROBLEM)
    assert out["action"] == "troubleshoot" and "instead of answering at once" in out["decision_reasoning"]


def test_next_walks_the_whole_procedure_then_still_broken_offers_a_ticket(support, desk):
    chat = Conversation(support())
    chat.say(PROBLEM)
    replies = [chat.say(word) for word in ("next", "ok", "done")]
    assert [r["troubleshooting"]["current"] for r in replies] == [1, 2, 3]
    assert "Step 4 of 4:** Reinstall Secure Client" in replies[-1]["answer"]
    assert all(r["troubleshooting"]["failed"] == 0 for r in replies)
    end = chat.say("next")
    assert end["troubleshooting"]["status"] == "completed" and "last step" in end["answer"]
    offer = chat.say("still broken")
    assert offer["troubleshooting"]["status"] == "escalated" and offer["ticket_event"] == "offered"
    assert desk.tickets == {}


def test_all_steps_at_once_shows_the_whole_procedure(support):
    chat = Conversation(support())
    chat.say(PROBLEM)
    listed = chat.say("can you show me all the steps at once?")
    assert listed["action"] == "troubleshoot"
    for step in ("Open a public website", "Quit Secure Client", "Restart your computer", "Reinstall Secure Client"):
        assert step in listed["answer"]
    assert chat.say("it works now")["troubleshooting"]["status"] == "resolved"


def test_a_model_that_drops_documented_steps_is_not_used_for_the_walkthrough(support):
    llm = ScriptedChatModel(['{"action": "troubleshoot"}', '{"steps": ["Check the Wi-Fi icon", "Restart the laptop"]}'])
    out = Conversation(support(llm=llm)).say(PROBLEM)
    assert "Step 1 of 4:** Open a public website" in out["answer"]
