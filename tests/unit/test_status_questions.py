"""Which messages ask whether a service is down (the status check), read from their wording alone."""

import pytest

from core.lexicon import asks_status


@pytest.mark.parametrize(
    "message",
    [
        "is there an outage right now?",
        "is email down for everyone or is it just me",
        'the app shows "A service outage is affecting your region" when I sign in',
    ],
)
def test_a_question_about_an_outage_asks_for_the_status_check(message):
    assert asks_status(message)


@pytest.mark.parametrize(
    "message",
    [
        "how do I get an alert whenever someone writes 'outage' in any channel?",
        'can I add "incident" as a keyword that notifies me?',
    ],
)
def test_a_status_word_only_mentioned_in_quotes_is_not_a_status_question(message):
    assert not asks_status(message)
