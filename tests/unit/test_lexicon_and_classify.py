from core.lexicon import (
    detect_os,
    is_troubleshooting,
    it_topics,
    looks_like_follow_up,
    small_talk_kind,
    strip_placeholders,
)
from graphs.support import turn_result
from nodes.support.classify import classify
from tests.fakes import support_state


def test_detect_os_reads_common_ways_people_name_their_system():
    assert detect_os("How do I connect to the VPN on my Mac?") == "macos"
    assert detect_os("im on linux") == "linux"
    assert detect_os("I use Ubuntu 22.04") == "linux"
    assert detect_os("windows 11 laptop") == "windows"


def test_mac_address_is_not_an_operating_system():
    assert detect_os("how do I find my MAC address") is None


def test_two_operating_systems_in_one_message_are_ambiguous():
    assert detect_os("it works on windows but not on my mac") is None


def test_it_topics_are_found_by_synonym():
    assert it_topics("AnyConnect keeps dropping") == ["vpn"]
    assert "e-mail" in it_topics("Outlook is stuck in the outbox")


def test_small_talk_only_for_short_pure_pleasantries():
    assert small_talk_kind("hi") == "greeting"
    assert small_talk_kind("Thanks!") == "thanks"
    assert small_talk_kind("bye") == "farewell"
    assert small_talk_kind("hi, my VPN is broken and I need it for a client call in ten minutes") == ""


def test_follow_up_is_short_and_leans_on_the_previous_topic():
    assert looks_like_follow_up("im on linux", has_topic_words=False)
    assert looks_like_follow_up("what about windows 11", has_topic_words=False)
    assert not looks_like_follow_up("how do I reset my password for the expenses tool", has_topic_words=True)


def test_redaction_placeholders_are_not_search_words():
    assert strip_placeholders("My password [REDACTED:PASSWORD] doesn't work") == "My password doesn't work"


def test_classify_separates_problems_from_questions():
    assert turn_result(classify(support_state({"query": "My VPN keeps disconnecting"})))["intent"] == "troubleshooting"
    assert turn_result(classify(support_state({"query": "How do I set up the VPN?"})))["intent"] == "informative"
    assert turn_result(classify(support_state({"query": "my printer won't print"})))["intent"] == "troubleshooting"


def test_classify_marks_messages_that_name_no_system_as_vague():
    assert turn_result(classify(support_state({"query": "It's not working"})))["is_vague"] is True
    assert turn_result(classify(support_state({"query": "help"})))["is_vague"] is True
    assert turn_result(classify(support_state({"query": "my printer won't print"})))["is_vague"] is False


def test_classify_remembers_a_stated_operating_system():
    assert turn_result(classify(support_state({"query": "how do I map a drive on my MacBook"})))["user_os"] == "macos"
    assert "user_os" not in turn_result(classify(support_state({"query": "how do I map a drive"})))


def test_a_problem_word_inside_another_word_is_no_problem():
    for text in ("what's on the canteen menu today?", "I need to change my display name", "are pajamas allowed?"):
        assert not is_troubleshooting(text), text
    for text in ("I can't log in", "Outlook hangs on start", "the printer jammed", "calls keep getting dropped"):
        assert is_troubleshooting(text), text


def test_it_in_capitals_is_the_it_team_and_the_pronoun_is_not():
    from core.lexicon import it_topics

    assert it_topics("how do I contact IT") == ["service desk"]
    assert "service desk" in it_topics("call the service desk") and "service desk" in it_topics("the helpdesk")
    for message in ("it is broken", "does it support dark mode", "IT'S BROKEN AGAIN"):
        assert "service desk" not in it_topics(message)
