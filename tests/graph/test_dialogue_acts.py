"""Dialogue acts through the compiled support graph: asking for a person, for a ticket's status, for something
new; thanks and goodbye that close what is open; yes and no in free words; off-topic, "are you a bot?",
"what can you do?"; and messages in other languages (the real language model; a scripted LLM translates)."""

import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from app.adapters.language import Py3LangidDetector
from graphs.support import build_support_graph, turn_input, turn_result
from tests.fakes import FakeStatusChecker, FakeTicketDesk, ScriptedChatModel, status_report

PROBLEM = "My VPN keeps disconnecting"
CONTACT = "call +1 555 0100 or open https://it.example.test/portal"


class Conversation:
    def __init__(self, context, user_id="alice"):
        self.graph = build_support_graph(InMemorySaver())
        self.context = context
        self.config = {"configurable": {"thread_id": uuid.uuid4().hex, "user_id": user_id}}

    def say(self, text, user_os=None):
        return turn_result(
            self.graph.invoke(turn_input(text, user_os), self.config, context=self.context, durability="exit")
        )


@pytest.fixture(scope="module")
def detector():
    return Py3LangidDetector()


@pytest.fixture
def desk():
    return FakeTicketDesk()


@pytest.fixture
def support(fake_kb_context, desk, detector):
    def factory(**overrides):
        return fake_kb_context(**({"tickets": desk, "language": detector} | overrides))

    return factory


# --- asking for a person ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "real agent please",
        "can you transfer me to a human?",
        "can I talk to someone",
        "is there a human there",
        "I want to speak with IT support staff",
    ],
)
def test_asking_for_a_person_is_a_handoff_never_a_knowledge_base_answer(support, text):
    out = Conversation(support()).say(text)
    assert out["action"] == "create_ticket" and out["ticket_event"] == "offered" and out["sources"] == []
    assert out["ticket_offer"]["kind"] == "handoff" and "pass this to a person" in out["answer"]


def test_the_handoff_ticket_carries_the_redacted_conversation_and_the_problem(support, desk):
    chat = Conversation(support())
    chat.say("my vpn drops, my password is Hunter2Secret! by the way")
    offer = chat.say("this isn't helping, let me talk to a real person")
    assert offer["ticket_offer"]["kind"] == "handoff"
    created = chat.say("yes please")
    assert created["ticket_event"] == "created"
    (ticket,) = desk.tickets.values()
    transcript = " ".join(m["content"] for m in ticket["conversation"])
    assert "my vpn drops" in transcript and "Hunter2Secret" not in transcript
    assert "talk to a person" in ticket["description"] and ticket["summary"].lower().startswith("my vpn drops")


def test_a_configured_contact_is_given_with_the_handoff_and_to_are_you_a_bot(support):
    out = Conversation(support(handoff_contact=CONTACT)).say("human please")
    assert CONTACT in out["answer"] and out["ticket_event"] == "offered"
    bot = Conversation(support(handoff_contact=CONTACT)).say("are you a bot?")
    assert bot["action"] == "converse" and "automated assistant" in bot["answer"] and CONTACT in bot["answer"]


def test_without_a_ticket_desk_the_handoff_is_the_configured_contact(support):
    out = Conversation(support(tickets=None, handoff_contact=CONTACT)).say("transfer me to a person")
    assert CONTACT in out["answer"] and not out["needs_input"] and out["ticket_offer"] is None
    without = Conversation(support(tickets=None)).say("transfer me to a person")
    assert "contact the IT service desk" in without["answer"]


def test_asking_for_a_person_mid_troubleshooting_pauses_it_and_hands_over(support):
    chat = Conversation(support())
    chat.say(PROBLEM)
    out = chat.say("can I speak to a technician instead?")
    assert out["action"] == "create_ticket" and out["troubleshooting"]["status"] == "paused"
    assert out["ticket_offer"]["summary"] == PROBLEM


# --- tickets: status, free-word yes and no ----------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "any update on my issue?",
        "has someone looked at my request yet",
        "status of incident INC0012345",
        "when will my problem be fixed",
    ],
)
def test_asking_about_ones_ticket_looks_up_the_tickets(support, text):
    out = Conversation(support()).say(text)
    assert out["action"] == "search_tickets" and "couldn't find any tickets" in out["answer"]


def test_an_outage_question_still_goes_to_the_status_page(support):
    checker = FakeStatusChecker(status_report())
    out = Conversation(support(status=checker)).say("is outlook down for everyone?")
    assert out["status_checked"] and checker.calls == 1 and out["action"] == "answer"


@pytest.mark.parametrize(
    "yes", ["Yes, please create a ticket", "sure, go ahead and file it", "ok open one", "do it", "please do"]
)
def test_a_yes_in_free_words_creates_the_offered_ticket(support, desk, yes):
    chat = Conversation(support())
    chat.say("please open a ticket, the kiosk printer jams every morning")
    out = chat.say(yes)
    assert out["ticket_event"] == "created" and len(desk.tickets) == 1


@pytest.mark.parametrize("no", ["nah leave it", "no thanks, I'll wait", "don't bother"])
def test_a_no_in_free_words_declines_the_offer(support, desk, no):
    chat = Conversation(support())
    chat.say("please open a ticket, the kiosk printer jams every morning")
    out = chat.say(no)
    assert out["ticket_event"] == "declined" and desk.tickets == {}


@pytest.mark.parametrize("still", ["still broken", "it still doesn't work", "no luck, still the same"])
def test_still_broken_in_reply_to_an_offer_asks_again_and_keeps_it(support, desk, still):
    chat = Conversation(support())
    offered = chat.say("please open a ticket, the kiosk printer jams every morning")
    out = chat.say(still)
    assert out["action"] == "create_ticket" and desk.tickets == {}  # no yes: nothing is created
    assert out["answer"].startswith("I'm sorry it's still not working.") and "Shall I create it?" in out["answer"]
    assert out["ticket_offer"] == offered["ticket_offer"]
    assert chat.say("yes")["ticket_event"] == "created" and len(desk.tickets) == 1


def test_a_detail_given_as_the_reply_to_an_offer_edits_the_draft(support):
    chat = Conversation(support())
    chat.say("please open a ticket, the kiosk printer jams every morning")
    out = chat.say("my phone number is 555 0100 and I'm in building 2")
    assert out["ticket_event"] == "edited" and "building 2" in out["ticket_offer"]["description"]


def test_yes_with_a_priority_creates_the_ticket_with_that_priority(support, desk):
    chat = Conversation(support())
    chat.say("please open a ticket, the kiosk printer jams every morning")
    chat.say("yes please, and it's urgent")
    assert [t["priority"] for t in desk.tickets.values()] == ["high"]


# --- closings ---------------------------------------------------------------------------------------------
def test_thank_you_that_worked_closes_without_replaying_the_answer(support):
    chat = Conversation(support())
    first = chat.say("How do I submit an expense claim in Ledgerly?")
    out = chat.say("thank you, that worked!")
    assert out["action"] == "converse" and out["sources"] == [] and "Click New claim" not in out["answer"]
    assert "glad" in out["answer"].lower() and first["answer"] not in out["answer"]


def test_thanks_during_troubleshooting_marks_the_issue_resolved(support):
    chat = Conversation(support())
    chat.say(PROBLEM)
    out = chat.say("thanks!")
    assert out["troubleshooting"]["status"] == "resolved" and not out["needs_input"]
    assert "resolved" in out["answer"]


def test_goodbye_during_troubleshooting_closes_it_without_claiming_it_is_fixed(support):
    chat = Conversation(support())
    chat.say(PROBLEM)
    out = chat.say("ok bye")
    assert out["troubleshooting"]["status"] == "exited" and "Bye" in out["answer"]


def test_thanks_withdraws_a_pending_ticket_offer(support, desk):
    chat = Conversation(support())
    chat.say("please open a ticket, the kiosk printer jams every morning")
    out = chat.say("thanks, bye")
    assert out["ticket_event"] == "declined" and out["ticket_offer"] is None and desk.tickets == {}


def test_thanks_right_after_a_ticket_was_created_keeps_it_open(support, desk):
    chat = Conversation(support())
    chat.say("please open a ticket, the kiosk printer jams every morning")
    chat.say("yes")
    out = chat.say("thanks!")
    assert out["action"] == "converse" and [t["status"] for t in desk.tickets.values()] == ["open"]


def test_it_works_now_closes_the_sessions_open_ticket(support, desk):
    chat = Conversation(support())
    chat.say("please open a ticket, the kiosk printer jams every morning")
    chat.say("yes")
    out = chat.say("it works now, thanks")
    assert out["ticket_event"] == "closed" and [t["status"] for t in desk.tickets.values()] == ["closed"]


# --- service requests -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "I need a new laptop",
        "can I get access to the finance share",
        "please install Visio on my PC",
        "I'd like a second monitor",
    ],
)
def test_a_service_request_is_offered_as_a_request_not_answered_from_the_kb(support, text):
    out = Conversation(support()).say(text)
    offer = out["ticket_offer"]
    assert out["action"] == "create_ticket" and offer["kind"] == "request" and out["sources"] == []
    assert offer["summary"].startswith("Request: ") and "Service request" in offer["description"]
    assert "open a request" in out["answer"]


def test_a_confirmed_request_is_created_as_a_request(support, desk):
    chat = Conversation(support())
    chat.say("I need a new laptop")
    out = chat.say("yes")
    assert "opened request" in out["answer"]
    assert [t["summary"] for t in desk.tickets.values()] == ["Request: I need a new laptop"]


def test_how_to_request_something_is_a_question_for_the_kb(support):
    out = Conversation(support()).say("how do I request software?")
    assert out["dialogue_act"] != "service_request" and out["search_count"] >= 1
    # the fixture KB has no such article: the ticket offered is the "not found" fallback, not a request
    assert "couldn't find this in the knowledge base" in out["answer"]
    assert out["ticket_offer"] is None or out["ticket_offer"].get("kind", "incident") != "request"


def test_a_request_is_not_swallowed_by_an_open_fault_ticket(support, desk):
    chat = Conversation(support())
    chat.say("please open a ticket, the kiosk printer jams every morning")
    chat.say("yes")
    out = chat.say("I'd also like a second monitor")
    assert out["ticket_event"] == "offered" and out["ticket_offer"]["kind"] == "request"


# --- what deskmate is and does, off-topic -----------------------------------------------------------------
@pytest.mark.parametrize(
    "text", ["what's the weather", "tell me a joke", "who won the game last night", "book me a flight"]
)
def test_an_off_topic_message_the_knowledge_base_does_not_cover_is_told_what_the_help_desk_does(support, text):
    out = Conversation(support(min_score=0.6)).say(text)  # nothing in the fixture KB answers these at 0.6
    assert out["action"] == "converse" and out["dialogue_act"] == "out_of_scope" and "IT help desk" in out["answer"]
    assert out["sources"] == [] and out["search_count"] == 1  # searched once: it only sounded off-topic


def test_are_you_a_bot_discloses_the_assistant_and_how_to_reach_a_person(support):
    out = Conversation(support()).say("am I talking to a human?")
    assert "automated assistant" in out["answer"] and "not a person" in out["answer"]
    assert 'say "talk to a person"' in out["answer"]


def test_what_can_you_do_lists_only_what_this_deployment_can(support):
    full = Conversation(support(status=FakeStatusChecker(status_report()))).say("what can you do?")
    assert "status page" in full["answer"] and "open a ticket" in full["answer"]
    bare = Conversation(support(tickets=None)).say("what can you do?")
    assert "status page" not in bare["answer"] and "open a ticket" not in bare["answer"]


def test_an_aside_during_troubleshooting_reminds_how_to_resume(support):
    chat = Conversation(support())
    chat.say(PROBLEM)
    out = chat.say("are you a bot?")
    assert out["troubleshooting"]["status"] == "paused" and 'say "continue"' in out["answer"]


# --- other languages --------------------------------------------------------------------------------------
def test_offline_a_german_question_gets_the_notice_and_a_ticket_offer_in_german_that_ja_creates(support, desk):
    context = support()
    calls = len(context.embedder.calls)
    chat = Conversation(context)
    out = chat.say("Wie verbinde ich mich von zu Hause mit dem VPN?")
    assert out["language"] == "de" and out["action"] == "create_ticket" and out["ticket_event"] == "offered"
    assert "Englisch" in out["answer"] and "als Ticket an den IT-Servicedesk" in out["answer"]
    assert "Shall I create it?" not in out["answer"]
    assert len(context.embedder.calls) == calls
    created = chat.say("ja")
    assert created["ticket_event"] == "created"
    assert [t["summary"] for t in desk.tickets.values()] == ["Wie verbinde ich mich von zu Hause mit dem VPN?"]


def test_offline_without_a_ticket_desk_a_german_question_gets_the_notice_alone(support):
    out = Conversation(support(tickets=None)).say("Wie verbinde ich mich von zu Hause mit dem VPN?")
    assert out["action"] == "converse" and "Englisch" in out["answer"] and "Ticket" not in out["answer"]


@pytest.mark.parametrize("no", ["nein", "non", "nee"])
def test_a_no_in_the_offers_language_declines_it(support, desk, no):
    chat = Conversation(support())
    chat.say("Mein Drucker druckt nicht mehr, was kann ich tun?")
    assert chat.say(no)["ticket_event"] == "declined" and desk.tickets == {}


def test_a_language_without_fixed_sentences_gets_the_english_notice(support):
    out = Conversation(support()).say("Tulostin ei tulosta ollenkaan, mitä voin tehdä?")
    assert out["language"] == "fi" and "only search the IT knowledge base in English" in out["answer"]
    assert "as a ticket" in out["answer"]


@pytest.mark.parametrize("text", ["ok", "VPN?", "danke", "Jürgen from accounting can't open the Zürich share"])
def test_short_replies_and_english_with_foreign_names_are_read_as_english(support, text):
    assert Conversation(support()).say(text)["language"] == ""


def test_with_an_llm_a_german_question_is_searched_in_english_and_answered_in_german(support):
    llm = ScriptedChatModel(
        [
            "How do I submit an expense claim in Ledgerly?",
            '{"reasoning": "the expenses doc covers it", "action": "answer"}',
            "Click New claim and attach the receipt [1].",
            "Klicken Sie auf New claim und hängen Sie den Beleg an [1].",
        ]
    )
    out = Conversation(support(llm=llm)).say("Wie reiche ich eine Spesenabrechnung in Ledgerly ein?")
    assert out["language"] == "de" and out["translated"] and out["query"].startswith("How do I submit")
    assert out["sources"][0]["source"] == "kb/expenses-tool.md"
    assert out["answer"].startswith("Klicken Sie auf New claim")
    first, last = llm.history[0][-1].content, llm.history[-1][-1].content
    assert 'from German (language code "de") into English' in first and "Spesenabrechnung" in first
    assert 'into German (language code "de")' in last and "Click New claim" in last


def test_a_failed_translation_falls_back_to_the_notice_in_the_users_language(support):
    from core.errors import LLMError

    llm = ScriptedChatModel([LLMError("HTTP 500")])
    out = Conversation(support(llm=llm)).say("Comment me connecter au VPN depuis chez moi ?")
    assert out["language"] == "fr" and not out["translated"] and "anglais" in out["answer"]
    assert out["fallback_notice"] and len(llm.history) == 1


def test_a_problem_and_a_request_for_a_person_in_one_message_keeps_the_problem(support):
    out = Conversation(support()).say("my printer is jammed again, can I talk to a human?")
    assert out["ticket_offer"]["kind"] == "handoff" and "printer is jammed" in out["ticket_offer"]["summary"]


@pytest.mark.parametrize("reply", ["escalate", "escalated", "please escalate it"])
def test_escalate_as_the_reply_to_an_offer_raises_the_drafts_priority(support, desk, reply):
    chat = Conversation(support())
    chat.say("please open a ticket, the kiosk printer jams every morning")
    out = chat.say(reply)
    assert out["ticket_event"] == "edited" and out["ticket_offer"]["priority"] == "high" and desk.tickets == {}


def test_asking_for_a_person_while_an_offer_is_pending_is_still_a_handoff(support):
    chat = Conversation(support())
    chat.say("please open a ticket, the kiosk printer jams every morning")
    out = chat.say("can you escalate this to a real person?")
    assert out["ticket_offer"]["kind"] == "handoff"


# --- acts that carry other words: urgency, shouting, the desk, colleagues, a question with no IT in it ----------
@pytest.mark.parametrize("yes", ["Great, please do, it's urgent!", "excellent, open it right away!!"])
def test_a_yes_with_urgency_creates_the_offered_ticket_at_high_priority(support, desk, yes):
    chat = Conversation(support())
    chat.say("please open a ticket, the kiosk printer jams every morning")
    out = chat.say(yes)
    assert out["ticket_event"] == "created" and [t["priority"] for t in desk.tickets.values()] == ["high"]


def test_shouting_for_a_person_during_a_walkthrough_hands_over_instead_of_stopping(support):
    chat = Conversation(support())
    assert chat.say(PROBLEM)["action"] == "troubleshoot"
    out = chat.say("STOP WASTING MY TIME AND GIVE ME A HUMAN")
    assert out["action"] == "create_ticket" and out["ticket_offer"]["kind"] == "handoff"
    assert out["troubleshooting"]["status"] == "paused"


def test_refusing_a_ticket_in_favour_of_a_person_is_a_handoff_not_a_no(support, desk):
    chat = Conversation(support())
    chat.say("please open a ticket, the kiosk printer jams every morning")
    out = chat.say("STOP. I WANT A PERSON, NOT A TICKET")
    assert out["ticket_event"] == "offered" and out["ticket_offer"]["kind"] == "handoff"


@pytest.mark.parametrize("text", ["send someone from IT to my desk", "can a technician come over and look at it?"])
def test_asking_for_someone_at_the_desk_is_a_handoff(support, text):
    out = Conversation(support()).say(text)
    assert out["action"] == "create_ticket" and out["ticket_offer"]["kind"] == "handoff"


def test_access_for_oneself_and_a_colleague_is_a_request(support):
    out = Conversation(support()).say("please give me and Sam access to the Falcon project site")
    assert out["action"] == "create_ticket" and out["ticket_offer"]["kind"] == "request"


def test_a_question_with_no_it_in_it_gets_the_out_of_scope_reply_not_a_ticket(support):
    out = Conversation(support(min_score=0.6)).say("what's on the canteen menu today?")
    assert out["action"] == "converse" and out["dialogue_act"] == "out_of_scope"
    assert not out.get("ticket_offer") and "IT help desk" in out["answer"]


# --- a request: the knowledge base's request procedure first, the request offered beside it ------------------
@pytest.fixture(scope="module")
def requests_kb():
    from tests.conftest import FIXTURES, index_fixture_kb
    from tests.fakes import HashingEmbedder, InMemoryIndex

    embedder, index = HashingEmbedder(), InMemoryIndex()
    index_fixture_kb(embedder, index, FIXTURES / "requests_kb")
    return embedder, index


def test_a_request_gets_the_kbs_request_procedure_first_and_the_request_offered_beside_it(requests_kb, desk):
    from app.adapters.redactor import PatternRedactor
    from graphs.support import SupportContext

    embedder, index = requests_kb
    context = SupportContext(embedder=embedder, index=index, redactor=PatternRedactor(), tickets=desk, min_score=0.2)
    chat = Conversation(context)
    out = chat.say("I need a drawing tablet ordered, it is not in the catalogue")
    assert out["action"] == "create_ticket" and out["ticket_offer"]["kind"] == "request"
    assert out["sources"][0]["section"] == "Request an item that is not in the catalogue"
    answer = out["answer"]
    assert answer.index("choose New request") < answer.index("open a request") < answer.index("Sources:")
    assert chat.say("yes")["ticket_event"] == "created"


def test_a_procedure_that_reports_something_is_given_whole_not_asked_did_that_fix_it(requests_kb, desk):
    from app.adapters.redactor import PatternRedactor
    from graphs.support import SupportContext

    embedder, index = requests_kb
    context = SupportContext(embedder=embedder, index=index, redactor=PatternRedactor(), tickets=desk, min_score=0.2)
    out = Conversation(context).say("I lost my laptop on the train, the device is missing")
    assert out["action"] == "answer" and out["sources"][0]["section"] == "Report a lost or stolen device"
    assert "Did that fix it?" not in out["answer"] and "crime number" in out["answer"]
