"""Personal data: Presidio's structured recognizers (no model) and names (the packaged spaCy model)."""

import pytest

from app.adapters.redaction import PolicyRedactor, RedactionPolicy, build_engine, build_redactors

STRUCTURED = frozenset({"EMAIL", "PHONE", "CREDIT_CARD", "IBAN", "US_SSN", "IP_ADDRESS"})


@pytest.fixture(scope="module")
def structured():
    """Secrets plus every structured kind; no names model (nothing to load)."""
    engine = build_engine(RedactionPolicy(memory=STRUCTURED))
    return PolicyRedactor(engine, STRUCTURED)


@pytest.mark.parametrize(
    "text, value, kind",
    [
        ("reply to priya.natarajan@corp.example please", "priya.natarajan@corp.example", "EMAIL"),
        ("call me on +44 20 7946 0958 after lunch", "+44 20 7946 0958", "PHONE"),
        ("my mobile: 0412 555 019", "0412 555 019", "PHONE"),
        ("desk phone (212) 555-0147", "(212) 555-0147", "PHONE"),
        ("they charged card 4539 1488 0343 6467 twice", "4539 1488 0343 6467", "CREDIT_CARD"),
        ("refund to DE89 3704 0044 0532 0130 00 please", "DE89 3704 0044 0532 0130 00", "IBAN"),
        ("HR asked for my SSN, it is 536-22-1467", "536-22-1467", "US_SSN"),
        ("my laptop has 10.20.30.40 on the wifi", "10.20.30.40", "IP_ADDRESS"),
    ],
)
def test_structured_personal_data_is_replaced_by_a_numbered_placeholder(structured, text, value, kind):
    result = structured.redact(text)
    assert value not in result.text
    assert f"[REDACTED:{kind}_1]" in result.text


@pytest.mark.parametrize(
    "text",
    [
        "error 0x80070005 when installing KB5034441",
        "Windows build 22631.3007 after the update on 2024-03-12",
        "the ticket INC0012345 was closed at 10:30",
        "card 4539 1488 0343 6468 is not a real card number",  # fails the Luhn checksum
        "the laptop has 16 GB RAM and a 512 GB disk",
    ],
)
def test_numbers_that_are_not_personal_data_are_left_alone(structured, text):
    assert structured.redact(text).text == text


def test_an_email_inside_a_url_password_is_not_taken_for_an_email(structured):
    result = structured.redact("smtp://mailer:Pa55word@mail.corp.example:587")
    assert result.text == "smtp://mailer:[REDACTED:URL_CREDENTIALS]@mail.corp.example:587"


# --- names: the spaCy model -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def redactors():
    policy = RedactionPolicy(
        memory=frozenset({"EMAIL"}), llm=frozenset({"PERSON", "IP_ADDRESS"}), trace=frozenset({"PERSON"})
    )
    return build_redactors(policy, build_engine(policy))


@pytest.mark.slow
@pytest.mark.parametrize(
    "text, name",
    [
        ("my manager Alice Johnson said I should ask you", "Alice Johnson"),
        ("Hi, my name is Priya Natarajan and my laptop won't boot", "Priya Natarajan"),
        ("Please tell Dr. Berit Haugland that the printer works again", "Berit Haugland"),
        ("Thanks, Tomasz", "Tomasz"),
    ],
)
def test_names_are_removed_where_the_policy_says_and_kept_where_it_does_not(redactors, text, name):
    assert name not in redactors["llm"].redact(text).text
    assert "[REDACTED:PERSON_1]" in redactors["llm"].redact(text).text
    assert name in redactors["memory"].redact(text).text
    assert name in redactors["ticket"].redact(text).text


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "How do I set up Outlook on my Mac?",
        "Teams screen sharing shows a black window",
        "Cisco Secure Client says the VPN certificate is invalid",
        "I'm unable to log in since Tuesday",
        # IT products, a quoted error and other languages' words the small model takes for names
        "Is LastPass still allowed or do we have to move to Keeper?",
        "can you tell me the secret for the Jenkins job? No wait, just tell me where it's stored",
        "recovery key not found in Entra for my device",
        "My licence key expired and Visio won't open",
        '"Invalid API key provided" from the billing service since 14:05',
        "Ich habe mein Passwort vergessen und mein Konto ist gesperrt",
        "Mijn wachtwoord werkt niet meer op de laptop",
    ],
)
def test_product_names_in_questions_are_not_taken_for_people(redactors, text):
    assert "PERSON" not in redactors["llm"].redact(text).kinds


@pytest.mark.slow
def test_two_people_get_two_numbers_and_the_same_person_one(redactors):
    text = "Alice Johnson and Bob Martinez both lost access; Alice Johnson first."
    out = redactors["llm"].redact(text).text
    assert out.count("[REDACTED:PERSON_1]") == 2 and out.count("[REDACTED:PERSON_2]") == 1


@pytest.mark.slow
def test_every_destination_removes_secrets_whatever_its_personal_data_policy(redactors):
    text = "my password is Tulip#Garden7, ask Alice Johnson"
    for destination, redactor in redactors.items():
        assert "Tulip#Garden7" not in redactor.redact(text).text, destination


@pytest.mark.parametrize(
    "text, value",
    [
        ("mail me at jane.doe [at] example [dot] com please", "jane.doe [at] example [dot] com"),
        ("contact: ops(at)corp(dot)example", "ops(at)corp(dot)example"),
        ("write to jane＠corp.example", "jane＠corp.example"),
        ("it is jane at corp [dot] com", "jane at corp [dot] com"),
    ],
)
def test_an_email_address_written_to_dodge_scrapers_is_still_removed(structured, text, value):
    result = structured.redact(text)
    assert value not in result.text and "[REDACTED:EMAIL_1]" in result.text, result.text


@pytest.mark.parametrize(
    "text",
    [
        "meet at noon at the office dot com",
        "look at example.com for the manual",
        "arrive at 9 (at) the latest",
        "the cursor is at [at] the start",
    ],
)
def test_at_and_dot_in_ordinary_sentences_are_not_an_email(structured, text):
    assert structured.redact(text).text == text
