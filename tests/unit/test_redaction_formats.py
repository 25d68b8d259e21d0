"""Credential formats of languages, package managers and orchestrators, and look-alikes that are public by
design — one table per family: (what, examples whose secret must go, examples that must stay as they are).
The examples were written from the formats' public documentation; the secrets in them are made up."""

import pytest

from app.adapters.redaction import PolicyRedactor, RedactionPolicy, build_engine

SECRET = "Zq7!Lp4#Wg7y"
KEY = "q8Zr3LmN0pX7vB2kT9wY4cH6"

# (family, text, the secret value that must not survive)
MUST_GO = [
    ("typed declaration (Go)", f'var apiToken string = "{KEY}"', KEY),
    ("typed declaration (Java)", f'private static final String CLIENT_SECRET = "{KEY}";', KEY),
    ("typed declaration (TypeScript)", f'const apiKey: string = "{KEY}";', KEY),
    ("Go raw string", f"password := `{SECRET}`", SECRET),
    ("PHP concatenation", f'$password .= "{SECRET}";', SECRET),
    ("Makefile ?=", f"API_TOKEN ?= {KEY}", KEY),
    ("Makefile :=", "DB_PASSWORD := Zq7Lp4Wg7y9", "Zq7Lp4Wg7y9"),
    ("Makefile ::=", f"SECRET_KEY ::= {KEY}", KEY),
    ("escaped newlines in a JSON string", f'"config": "user=admin\\npassword={SECRET}\\nport=5432"', SECRET),
    ("NuGet ClearTextPassword", f'<add key="ClearTextPassword" value="{SECRET}" />', SECRET),
    (
        "Maven settings.xml",
        f"<server><id>corp</id><username>alice</username><password>{SECRET}</password></server>",
        SECRET,
    ),
    (".npmrc _authToken", f"//npm.corp.example/:_authToken={KEY}", KEY),
    (".npmrc _auth (base64 user:password)", "_auth=YWxpY2U6WnE3IUxwNCNXZzd5", "YWxpY2U6WnE3IUxwNCNXZzd5"),
    (".npmrc _password (base64)", "//npm.corp.example/:_password=WnE3IUxwNCNXZzd5", "WnE3IUxwNCNXZzd5"),
    ("pip.conf index URL", "index-url = https://alice:Zq7Lp4Wg7y9@pypi.corp.example/simple", "Zq7Lp4Wg7y9"),
    ("pip.conf token index URL", f"extra-index-url = https://__token__:{KEY}@pypi.corp.example/simple", KEY),
    (
        "Kubernetes Secret data (any key)",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  db-url: cG9zdGdyZXM6Ly9kYi5jb3JwOjU0MzIvYXBw\n",
        "cG9zdGdyZXM6Ly9kYi5jb3JwOjU0MzIvYXBw",
    ),
    ("Kubernetes Secret stringData", "kind: Secret\nstringData:\n  config: S3cretValue1\n", "S3cretValue1"),
    (
        "Kubernetes Secret as JSON",
        '{"kind": "Secret", "data": {"tls.crt": "cG9zdGdyZXM6Ly9kYi5jb3JwOjU0MzI="}}',
        "cG9zdGdyZXM6Ly9kYi5jb3JwOjU0MzI=",
    ),
    (
        "Docker config.json auth",
        '{"auths": {"https://index.docker.io/v1/": {"auth": "YWxpY2U6WnE3IUxwNCNXZzd5"}}}',
        "YWxpY2U6WnE3IUxwNCNXZzd5",
    ),
    (
        "Docker config.json identity token",
        f'{{"auths": {{"registry.corp.example": {{"identitytoken": "{KEY}"}}}}}}',
        KEY,
    ),
    ("curl --user, single quotes", f"curl --user 'alice:{SECRET}' https://api.corp.example", SECRET),
    ("curl -u, double quotes with a space", 'curl -u "alice:Zq7 Lp4x" https://api.corp.example', "Lp4x"),
    ("curl -u glued to its value", "curl -ualice:Zq7Lp4Wg7y9 https://api.corp.example", "Zq7Lp4Wg7y9"),
    ("curl --user=", "curl --user=alice:Zq7Lp4Wg7y9 https://api.corp.example", "Zq7Lp4Wg7y9"),
]

MUST_STAY = [
    ("a public key named like a secret", f'"publicKey": "{KEY}q8Zr3LmN0pX7"'),
    ("a primary key", '"primaryKey": "8f14e45fceea167a5a36dedd4bea2543"'),
    ("a primary key, snake case", 'primary_key = "a3f9c2e1b4d6a3f9c2e1b4d6"'),
    ("a form's anti-forgery token", f'<input type="hidden" name="csrf_token" value="{KEY}q8Zr3LmN">'),
    ("Rails' authenticity token", f'<input type="hidden" name="authenticity_token" value="{KEY}+q8Zr3LmN==">'),
    ("a csrf meta tag", f'<meta name="csrf-token" content="{KEY}q8Zr3LmN">'),
    (
        "a CloudFront signed link",
        "https://d111111abcdef8.cloudfront.net/image.jpg?Expires=1700000000&Signature="
        f"{KEY}~q8Zr3LmN0pX7&Key-Pair-Id=K2JCJMDEHXQW5F",
    ),
    (
        "an S3 presigned link",
        "https://bucket.s3.amazonaws.com/a.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600"
        "&X-Amz-Signature=8f14e45fceea167a5a36dedd4bea25438f14e45fceea167a5a36dedd4bea2543",
    ),
    ("an empty value", 'password = ""'),
    ("a placeholder", 'api_key = "<your-key>"'),
    ("a mask", "token: xxxx"),
    ("a variable", "DB_PASSWORD=${DB_PASSWORD}"),
    ("a fill-in", 'apiKey: "YOUR_API_KEY"'),
    ("a ConfigMap's data", "kind: ConfigMap\ndata:\n  mode: fast-mode-on\n"),
]


@pytest.fixture(scope="module")
def redactor():
    kinds = frozenset({"EMAIL", "PHONE", "CREDIT_CARD", "IBAN", "US_SSN"})
    return PolicyRedactor(build_engine(RedactionPolicy(memory=kinds)), kinds)


@pytest.mark.parametrize("family, text, secret", MUST_GO, ids=[row[0] for row in MUST_GO])
def test_a_credential_in_a_documented_format_is_removed(redactor, family, text, secret):
    assert secret not in redactor.redact(text).text


@pytest.mark.parametrize("family, text", MUST_STAY, ids=[row[0] for row in MUST_STAY])
def test_a_look_alike_that_is_public_by_design_or_a_placeholder_stays(redactor, family, text):
    assert redactor.redact(text).text == text


def test_a_password_field_in_the_same_form_as_a_csrf_token_is_still_removed(redactor):
    page = (
        f'<form><input type="hidden" name="csrf_token" value="{KEY}">'
        f'<input type="password" name="pw" value="{SECRET}"></form>'
    )
    out = redactor.redact(page).text
    assert SECRET not in out and KEY in out


def test_an_api_key_in_a_signed_link_is_still_removed(redactor):
    link = (
        "https://d111111abcdef8.cloudfront.net/a.jpg?Expires=1700000000&Signature=abc&Key-Pair-Id=K2JCJMDEHXQW5F"
        f"&api_key={KEY}"
    )
    assert KEY not in redactor.redact(link).text
