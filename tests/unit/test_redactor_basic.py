import pytest

from app.adapters.redactor import PatternRedactor

redactor = PatternRedactor()


@pytest.mark.parametrize(
    "text, secret, kind",
    [
        ("my password is hunter2", "hunter2", "PASSWORD"),
        ("My password abc123 doesn't work for VPN", "abc123", "PASSWORD"),
        ("pw: Tr0ub4dor&3", "Tr0ub4dor&3", "PASSWORD"),
        ("PIN 4821 for the printer", "4821", "PASSWORD"),
        ("export API_KEY=sk-proj-q7Lw2Xv9Rk4Tz8Mb1234", "sk-proj-q7Lw2Xv9Rk4Tz8Mb1234", "API_KEY"),
        ("key AKIA2E0A8F3B244C9986 leaked", "AKIA2E0A8F3B244C9986", "AWS_KEY"),
        ("token ghp_R8mZq2Lk9Xw4Tn7Vb3Hc6Jd1Fs5Gp0Ya2Ue8", "ghp_R8mZq2Lk9Xw4Tn7Vb3Hc6Jd1Fs5Gp0Ya2Ue8", "GITHUB_TOKEN"),
        (
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "eyJhbGciOiJIUzI1NiJ9",
            "JWT",
        ),
        ("curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA=='", "dXNlcjpwYXNzd29yZA==", "AUTH_HEADER"),
        ("db at postgres://app:s3cretpw@db.internal:5432/x", "s3cretpw", "URL_CREDENTIALS"),
        ("write to jane.doe@example.com please", "jane.doe@example.com", "EMAIL"),
    ],
)
def test_secret_is_replaced_by_a_typed_placeholder(text, secret, kind):
    result = redactor.redact(text)
    assert secret not in result.text
    assert kind in result.kinds
    assert f"[REDACTED:{kind}" in result.text


def test_private_key_block_is_one_secret():
    text = "here:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc/def==\n-----END RSA PRIVATE KEY-----\nthanks"
    result = redactor.redact(text)
    assert "MIIEow" not in result.text and "abc/def" not in result.text
    assert result.text.count("[REDACTED:PRIVATE_KEY]") == 1
    assert result.text.endswith("thanks")


@pytest.mark.parametrize(
    "text",
    [
        "How do I reset my password?",
        "my password expired this morning",
        "my password is wrong apparently",
        "the password policy says 12 characters",
        "I forgot my PIN",
    ],
)
def test_ordinary_sentences_about_passwords_are_left_alone(text):
    assert redactor.redact(text).text == text


def test_the_same_email_gets_the_same_number_and_different_ones_differ():
    result = redactor.redact("cc a@x.io, b@x.io and a@x.io again")
    assert result.text == "cc [REDACTED:EMAIL_1], [REDACTED:EMAIL_2] and [REDACTED:EMAIL_1] again"
