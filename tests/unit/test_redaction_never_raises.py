"""The redactor runs on every message before anything else: no input may make it raise. Seeded soups of the
fragments its rules look for (brackets, byte literals, quotes, escapes, keywords, token prefixes, control
and non-Latin characters) — the kind of input that once made a C byte-array rule fail on `08`."""

import random

import pytest

from app.adapters.redactor import PatternRedactor

_FRAGMENTS = [
    "password",
    "pw:",
    "PIN ",
    "key = ",
    "{",
    "}",
    "[",
    "]",
    "0x",
    "08",
    "09",
    "0x2b, ",
    "023, ",
    ", ",
    "\n",
    "\n  ",
    "|",
    ">-",
    '"',
    "'",
    "`",
    "\\",
    "\\t",
    "#define ",
    "getConnection(",
    "mysqli_connect(",
    ".connect(",
    "22, ",
    "$",
    "@",
    "!",
    "#",
    "%",
    "&",
    "?",
    "~",
    "=",
    ":",
    "::",
    "eyJ",
    "AKIA",
    "ghp_",
    "sk-",
    "Basic ",
    "Bearer ",
    "-----BEGIN PRIVATE KEY-----",
    "-----END",
    "é",
    "ß",
    "密码",
    "\u200b",
    "\x00",
    "\x1b[32m",
    "a",
    "Z",
    "9",
    "Qv7",
    "mTz29k",
    "BUNDLE_A__B__COM=",
    "sqlcmd -P ",
    "schtasks /RP ",
    "puk ",
    "token code ",
    "https://",
    "user:pass@",
    "<password>",
    "</password>",
    "AES_KEY ",
    "(",
    ")",
    ";",
    "&#x27;",
    "%3D",
    "%26",
    "jdbc:oracle:thin:",
    "net user ",
    "mysql -p",
    "wifi key for the ",
    " is ",
    "clave ",
    "c'est ",
    "passowrd ",
    "login error ",
    "model#",
    "nt!Ki",
    "Response$1",
    "qwen2_5_",
    "_mmk",
    "password: |\n  ",
    "static uint8_t key[] = {",
    "08, 09, 0x7e, 0x15, 0x16, 0x28, 0xae, ",
]


@pytest.mark.parametrize("seed", range(4))
def test_the_redactor_never_raises_on_fragment_soup(seed):
    redactor = PatternRedactor()
    rng = random.Random(seed)
    for _ in range(400):
        text = "".join(rng.choice(_FRAGMENTS) for _ in range(rng.randint(1, 40)))
        result = redactor.redact(text)
        assert isinstance(result.text, str)
        assert "[REDACTED" in result.text or not result.findings
