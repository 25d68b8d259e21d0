"""The signed user header: what a portal's token must hold for deskmate to accept it."""

from __future__ import annotations

import time

import jwt
import pytest

from app.identity import IdentityError, make_user_token, verify_user_token

SECRET = "portal-signing-" + "Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8"


def test_a_valid_token_names_the_user_and_their_normalised_groups():
    caller = verify_user_token(make_user_token(SECRET, "alice@corp", ["Finance", "hr, Finance"]), SECRET)
    assert caller.user_id == "alice@corp" and caller.groups == frozenset({"finance", "hr"}) and caller.signed_in
    assert verify_user_token("Bearer " + make_user_token(SECRET, "bob"), SECRET).groups == frozenset()


@pytest.mark.parametrize(
    "claims, reason",
    [
        ({"sub": "alice"}, "lacks the 'exp' claim"),
        ({"exp": 4_000_000_000}, "lacks the 'sub' claim"),
        ({"sub": "anonymous", "exp": 4_000_000_000}, "not 'anonymous'"),
        ({"sub": "alice; drop table", "exp": 4_000_000_000}, "user id of 1–128"),
        ({"sub": "alice", "exp": 4_000_000_000, "groups": "x" * 80}, "'groups' claim is invalid"),
        ({"sub": "alice", "exp": 4_000_000_000, "groups": [1, 2]}, "'groups' claim is invalid"),
        ({"sub": "alice", "exp": int(time.time()) - 120}, "expired"),
        ({"sub": 1042, "exp": 4_000_000_000}, "signed correctly but a claim is invalid: Subject must be a string"),
        ({"sub": "alice", "exp": 4_000_000_000, "iat": "today"}, "signed correctly but a claim is invalid"),
        ({"sub": "alice", "exp": "4000000000"}, "'exp' claim is a str, not a number of seconds"),
        ({"sub": "alice", "exp": str(int(time.time()) + 86_400)}, "'exp' claim is a str"),
    ],
)
def test_tokens_missing_or_misusing_a_claim_are_refused_with_the_reason(claims, reason):
    with pytest.raises(IdentityError, match=reason):
        verify_user_token(jwt.encode(claims, SECRET, algorithm="HS256"), SECRET)


def test_forged_unsigned_and_oversized_tokens_are_refused():
    with pytest.raises(IdentityError, match="not a valid HS256 token"):
        verify_user_token(make_user_token("another-secret-" + "Zx9Cv8Bn7Mm6Ll5Kk4Jj3Hh2", "alice"), SECRET)
    unsigned = jwt.encode({"sub": "alice", "exp": 4_000_000_000}, key=None, algorithm="none")
    with pytest.raises(IdentityError, match="not a valid HS256 token"):
        verify_user_token(unsigned, SECRET)
    with pytest.raises(IdentityError, match="longer than"):
        verify_user_token("a" * 5000, SECRET)
