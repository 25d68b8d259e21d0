"""Secrets whose value does not come right after their name: passed by position, spelled out as bytes, or
written on the lines below the name.

- A password as a positional argument of a call whose signature is known: JDBC's
  `DriverManager.getConnection(url, "app", "S3cret")`, PHP's `mysqli_connect("db", "app", "S3cret")` and
  `new PDO($dsn, 'app', 'S3cret')`, Python's `pymysql.connect("db", "app", "S3cret")`,
  `ftplib.FTP("host", "bob", "S3cret")`, paramiko's `ssh.connect(host, 22, "bob", "S3cret")`, Java's
  `new PasswordAuthentication("bob", "S3cret".toCharArray())`.
- A key written as a byte array under a key's name: `#define AESKEY {0x35, 0x34, …}`,
  `static const uint8_t aes_key[16] = {0x2b, 0x7e, …};`, `byte[] key = new byte[] { 0x2b, … }` — firmware
  and sample code pasted into a ticket. Keyboard tables (`keymap`, `keycodes`) are not keys, and an array
  of a few repeated values (`{0, 0, 0, 0, …}`) is an initialiser, not a secret.
- A YAML block scalar under a secret's name (Kubernetes and Helm values): `password: |` or
  `client_secret: >-` with the value on the indented lines below.
"""

from __future__ import annotations

import re
from typing import Iterator

from app.adapters.redaction.spans import Span
from app.adapters.redaction.values import (
    clean,
    key_name_kind,
    key_value_ok,
    value_looks_like_secret,
    value_ok_without_connector,
)

SOURCE = "chat_rules"

# one argument before the password: a string literal, a variable or attribute, a PHP variable, or a number
_ARG = r"""(?:"[^"\n]{0,200}"|'[^'\n]{0,200}'|\$?[A-Za-z_][\w.\[\]'"$>\-]{0,80}|\d{1,5})\s*,\s*"""
_PASSWORD_ARG = r"""(?P<q>["'])(?P<secret>[^"'\n]{3,100})(?P=q)"""
# (call, how many arguments come before the password)
_CALLS = (
    (r"\bgetConnection", 2),  # JDBC DriverManager.getConnection(url, user, password)
    (r"\b(?:mysqli_connect|mysqli_real_connect|mysql_p?connect|mssql_p?connect|pg_pconnect)", 2),
    (r"\bnew\s+(?:mysqli|PDO)", 2),
    (r"\b(?:pymysql|MySQLdb|mysql\.connector|pyodbc|cx_Oracle|oracledb)\.connect", 2),
    (r"(?<!\w)FTP(?:_TLS)?", 2),  # ftplib.FTP(host, user, passwd)
    (r"\b(?:ftp_login|ldap_bind|ssh2_auth_password|imap_open)", 2),  # PHP: (connection, user, password)
    (r"\.connect", 3),  # paramiko: connect(hostname, port, username, password) — needs the port, below
    (r"\b(?:new\s+)?(?:PasswordAuthentication|UsernamePasswordCredentials|NetworkCredential)", 1),  # Java, Kotlin, C#
    (r"\boci_p?connect", 1),  # PHP Oracle: (user, password, …)
)
_POSITIONAL = tuple(
    (re.compile(call + r"\s*\(\s*" + (_ARG * before) + _PASSWORD_ARG), call == r"\.connect") for call, before in _CALLS
)
_PORT_SECOND = re.compile(r"\(\s*[^,()\n]{1,200},\s*\d{1,5}\s*,")


def positional_passwords(text: str) -> Iterator[Span]:
    for pattern, needs_port in _POSITIONAL:
        for m in pattern.finditer(text):
            if needs_port and not _PORT_SECOND.match(text, text.index("(", m.start())):
                continue  # `db.connect("a", "b", "c", "d")`: only paramiko's (host, port, user, password) is known
            if value_ok_without_connector(m.group("secret")):
                yield Span(m.start("secret"), m.end("secret"), "PASSWORD", SOURCE)


# a key's name, then `=` or a C macro's whitespace, then `{`/`[` (optionally after `new byte[]`/`bytes(`)
_BYTE_ARRAY = re.compile(
    r"(?P<name>[A-Za-z_]\w{0,60})(?:\s*\[\s*\w{0,10}\s*\])?\s*(?:=\s*(?:new\s+\w+\s*\[\s*\d*\s*\]\s*|bytes\s*\(\s*|"
    r"(?:b|bytearray)?\s*)?|[ \t]+)(?P<open>[{\[])\s*(?P<items>(?:(?:0[xX][0-9A-Fa-f]{1,2}|\d{1,3})[uU]?\s*,\s*(?:\\\s*)?){7,}"
    r"(?:0[xX][0-9A-Fa-f]{1,2}|\d{1,3})?[uU]?)"
)
_BYTE = re.compile(r"0[xX][0-9A-Fa-f]{1,2}|\d{1,3}")
_KEY_NAME = re.compile(r"(?i:key|secret|passw|pwd|passphrase|psk|token|salt|nonce|seed)")
_NOT_A_KEY_NAME = re.compile(
    r"(?i:key_?(?:map|code|board|pad|stroke|press|frame|word|event|sym|s?_?(?:up|down|table|names?|list|order|len(?:gth)?"
    r"|sizes?|bits|index|count))|hot_?key|monkey|turkey|donkey|whiskey|jockey|hockey|tokeni[sz])"
)


_ARRAY_START = re.compile(r"[{\[]\s*(?:0[xX][0-9A-Fa-f]{1,2}|\d{1,3})[uU]?\s*,")


def _byte_value(literal: str) -> int:
    """0x2b, 023 (C octal), 43; `08` is not valid octal in C, read it as decimal rather than fail."""
    if literal[:2] in ("0x", "0X"):
        return int(literal, 16)
    if len(literal) > 1 and literal[0] == "0" and all(c in "01234567" for c in literal):
        return int(literal, 8)
    return int(literal, 10)


def byte_array_keys(text: str) -> Iterator[Span]:
    if _ARRAY_START.search(text) is None:
        return  # most texts hold no array of numbers: skip the name-by-name scan
    for m in _BYTE_ARRAY.finditer(text):
        name = m.group("name")
        if not _KEY_NAME.search(name) or _NOT_A_KEY_NAME.search(name):
            continue
        values = [_byte_value(b) for b in _BYTE.findall(m.group("items"))]
        if len(set(values)) >= 5 and all(v <= 255 for v in values):
            yield Span(m.start("items"), m.end("items"), "SECRET", SOURCE)


# `password: |` / `client_secret: >-` (a block scalar's indicator, an optional comment), then the value on
# the lines indented below it; at most 40 lines, and each line is redacted as written
_YAML_BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)(?:-[ \t]+)?[\"']?(?P<name>[A-Za-z_][\w.\-]{0,60})[\"']?[ \t]*:[ \t]*"
    r"[|>][+\-]?\d?[ \t]*(?:#[^\n]*)?\r?\n(?P<body>(?:(?P=indent)[ \t]+\S[^\n]*(?:\n|$)){1,40})",
    re.M,
)


def yaml_block_values(text: str) -> Iterator[Span]:
    for m in _YAML_BLOCK.finditer(text):
        kind = key_name_kind(m.group("name"))
        if kind is None:
            continue
        lines = [line.strip() for line in m.group("body").splitlines()]
        first = lines[0]
        if kind == "PASSWORD":
            ok = len(lines) == 1 and len(clean(first)) >= 4 and value_looks_like_secret(first)
        else:
            ok = value_looks_like_secret(first) and key_value_ok("".join(lines))
        if ok:
            start = m.start("body") + len(m.group("body")) - len(m.group("body").lstrip())
            yield Span(start, m.start("body") + len(m.group("body").rstrip()), kind, SOURCE)


# A Kubernetes `Secret` manifest: every value under its `data:` (base64) or `stringData:` is a secret, whatever
# its key is called (`db-url`, `tls.key`, `.dockerconfigjson`); a ConfigMap's data beside it is not.
_SECRET_KIND = re.compile(r"^kind:[ \t]*[\"']?Secret[\"']?[ \t]*$", re.M)
_DOCUMENT = re.compile(r"(?:^|\n)---[^\n]*\n")
_DATA_BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)(?:data|stringData):[ \t]*\r?\n(?P<body>(?:(?P=indent)[ \t]+[^\n]*\n?)+)", re.M
)
_DATA_ENTRY = re.compile(
    r"^[ \t]+[\"']?[\w.\-]{1,253}[\"']?:[ \t]*(?P<q>[\"']?)(?P<secret>[^\s\"'#|>][^\n\"']*?)"
    r"(?P=q)[ \t]*$",
    re.M,
)
_JSON_SECRET = re.compile(r"\"kind\"\s*:\s*\"Secret\"")
_JSON_DATA = re.compile(r"\"(?:data|stringData)\"\s*:\s*\{(?P<body>[^{}]{1,20000})\}")
_JSON_ENTRY = re.compile(r"\"[\w.\-]{1,253}\"\s*:\s*\"(?P<secret>[^\"\n]{4,})\"")


def kubernetes_secret_values(text: str) -> Iterator[Span]:
    """The values of a Kubernetes `Secret` manifest (YAML or JSON), one span each."""
    if "Secret" not in text:
        return
    if _JSON_SECRET.search(text):
        for block in _JSON_DATA.finditer(text):
            for m in _JSON_ENTRY.finditer(block.group("body")):
                at = block.start("body")
                yield Span(at + m.start("secret"), at + m.end("secret"), "SECRET", SOURCE)
    starts = [0, *(m.end() for m in _DOCUMENT.finditer(text)), len(text)]
    for begin, end in zip(starts, starts[1:]):
        document = text[begin:end]
        if not _SECRET_KIND.search(document):
            continue
        for block in _DATA_BLOCK.finditer(document):
            for m in _DATA_ENTRY.finditer(block.group("body")):
                value = m.group("secret").strip()
                if len(value) >= 4 and value_looks_like_secret(value):
                    at = begin + block.start("body")
                    yield Span(at + m.start("secret"), at + m.start("secret") + len(value), "SECRET", SOURCE)
