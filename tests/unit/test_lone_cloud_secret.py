"""A cloud secret access key sent alone — no key id, no keyword — is removed from the access log and traces when it
is as random as a generated key, and kept when its context shows a public digest."""

from __future__ import annotations

import logging

import pytest

from app.adapters.redaction import RedactionPolicy, build_engine, build_redactors
from app.logging_setup import RedactingFilter

LONE_KEY = "Hq7/Zr3mKp9+Lw2Xv8Nc4Bd6Tf1Gy5Js0Ua3Ee7R"


@pytest.fixture(scope="module")
def redactors():
    policy = RedactionPolicy(memory=frozenset({"EMAIL"}))
    return build_redactors(policy, build_engine(policy, with_detect_secrets=False))


def test_a_lone_secret_key_in_a_query_parameter_leaves_the_access_log(redactors):
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/search?q=" + LONE_KEY.replace("/", "%2F").replace("+", "%2B"), "1.1", 200),
        None,
    )
    RedactingFilter(redactors["log"]).filter(record)
    line = record.getMessage()
    assert "Hq7" not in line and "Ee7R" not in line and "[REDACTED:AWS_KEY]" in line


@pytest.mark.parametrize("text", [f"here it is: {LONE_KEY}", f"key {LONE_KEY} thanks", LONE_KEY])
def test_a_lone_secret_key_in_a_message_or_trace_is_removed(redactors, text):
    assert LONE_KEY not in redactors["trace"].redact(text).text


@pytest.mark.parametrize(
    "text",
    [
        f"sha1: {LONE_KEY}",  # a digest named just before it
        f'integrity="sha384-{LONE_KEY}"',
        "see docs/Windows/Configure/VPN/Client/Setup1 for the steps",  # a worded path
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",  # hex: one case only
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # AWS's documentation key
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA1",  # a pattern, not a key
    ],
)
def test_public_forty_character_values_are_kept(redactors, text):
    assert redactors["trace"].redact(text).text == text
