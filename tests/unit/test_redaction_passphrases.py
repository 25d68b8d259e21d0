"""Passwords of more than one word, and more than one password after one password word (own examples)."""

import pytest

from app.adapters.redactor import PatternRedactor

redactor = PatternRedactor()


@pytest.mark.parametrize(
    "text, words",
    [
        ("my password is correct horse battery staple", ["correct", "horse", "battery", "staple"]),
        ("password: correct horse battery staple", ["horse", "battery", "staple"]),
        ("my new passphrase is Purple Monkey Dishwasher 42", ["Purple", "Monkey", "Dishwasher", "42"]),
        ("password is lemon tiger cloud, can you reset it?", ["lemon", "tiger", "cloud"]),
        ("the wifi password is orange kayak meadow and it still won't connect", ["orange", "kayak", "meadow"]),
        ("PW = seven blue lanterns", ["blue", "lanterns"]),
        ("the wifi key for the guest network is harbor violin sunset", ["harbor", "violin", "sunset"]),
    ],
)
def test_a_passphrase_of_several_words_is_removed_whole(text, words):
    result = redactor.redact(text)
    for word in words:
        assert word not in result.text, result.text
    assert "PASSWORD" in result.kinds


@pytest.mark.parametrize(
    "text, values",
    [
        ("password: Summer2024! Winter2023!", ["Summer2024", "Winter2023"]),
        ("pw: Tq7#kd2 Lm9$xx4", ["Tq7#kd2", "Lm9$xx4"]),
    ],
)
def test_two_passwords_after_one_password_word_are_both_removed(text, values):
    result = redactor.redact(text)
    for value in values:
        assert value not in result.text, result.text


@pytest.mark.parametrize(
    "text, phrase",
    [
        ('my passphrase is "purple monkey dishwasher"', "purple monkey dishwasher"),
        ("the wifi password is 'the quick brown fox' with spaces", "the quick brown fox"),
        ("my password is ‘correct horse battery staple’", "correct horse battery staple"),
        ("password: “Tea for two at 4pm”", "Tea for two at 4pm"),
    ],
)
def test_a_quoted_password_is_removed_to_its_closing_quote(text, phrase):
    result = redactor.redact(text)
    for word in phrase.split():
        if len(word) > 3:
            assert word not in result.text, result.text
    # the quotes and the sentence around them stay readable
    assert result.text.count("[REDACTED:PASSWORD]") == 1, result.text


@pytest.mark.parametrize(
    "text",
    [
        "my password is not accepted by outlook",
        "the password is too short according to the portal",
        "Password: see the onboarding email from HR",
        "Password: the same one you use for Windows",
        "password is locked after three failed attempts",
        "my password is about to expire in 3 days",
        "my new password is working now, thanks",
        "the wifi password is written on the back of the router",
        "Password is stored in Keeper under IT shared folder",
        "Password: Your Active Directory password",
        "password: whatever you chose at first login",
        "my password is definitely right but it says invalid",
        "password is case sensitive remember caps lock",
        "Password: at least 12 characters with one number",
        "Password: minimum eight characters",
        "my password is less than 90 days old",
        "password: same as before the migration",
        "password is greyed out in settings app",
        "Password: do not share it with anyone",
        "password: leave blank for SSO users",
        "My PIN is six digits long",
        'the password is "incorrect"',
        'the error says password is "not set"',
        'Password: "********"',
        'password: "<your password here>"',
        "password: str | None = None",
        "if password is None or password == '':",
    ],
)
def test_sentences_that_go_on_after_password_is_are_left_alone(text):
    assert redactor.redact(text).text == text


def test_redacting_a_redacted_passphrase_changes_nothing():
    once = redactor.redact("password: correct horse battery staple, and it fails").text
    assert redactor.redact(once).text == once
