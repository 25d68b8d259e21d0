"""Secrets the way people type them into a support chat, or paste them from a terminal or config file.

"my password is hunter2", "pw: Tr0ub4dor&3", "PIN 4821", `DB_PASSWORD=…` lines from a `.env`,
connection strings, `Authorization:` headers, `curl -u user:pass`, SQL `IDENTIFIED BY '…'`,
private-key blocks (one secret from BEGIN to END, or to the end of the text when END is missing),
vendor tokens (vendor_tokens.py) and random strings a keyword points at ("the api key 8d7f…").
Each rule yields the span of the secret value only, so the sentence around it stays readable. The rules
with a fixed kind are data tables with examples (chat_phrases.py, command_lines.py); what stays here as
code reads the kind from a name in the text (`DB_PASSWORD=…`, `<apiKey>…</apiKey>`) or weighs the
context around a value. What a secret's name and value look like (shared with the detect-secrets
adapter) is in values.py; code and documentation that only talk about secrets are recognised in
code_shapes.py.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from typing import Iterator

from app.adapters.redaction.chat_phrases import (
    CHAT_SHAPES,
    LOGIN_CALLS,
    PHRASES,
    PRIVATE_KEYS,
    SYMBOL,
    password_shaped,
    strong,
    without_punctuation,
)
from app.adapters.redaction.code_shapes import (
    DOTTED_NAME,
    NAME_PARTS,
    is_camel_case_name,
    is_code_value,
    is_declaration,
    is_description,
    is_word,
)
from app.adapters.redaction.command_lines import COMMAND_LINES
from app.adapters.redaction.detached_values import (
    byte_array_keys,
    kubernetes_secret_values,
    positional_passwords,
    yaml_block_values,
)
from app.adapters.redaction.heuristics import SSH_KEY_TYPE, looks_fake, looks_random
from app.adapters.redaction.passphrases import passphrases
from app.adapters.redaction.rule_table import AnchorIndex
from app.adapters.redaction.spans import PLACEHOLDER, Span
from app.adapters.redaction.values import (
    FILE_NAME,
    NOT_A_SECRET,
    SECRET_WORD,
    WEAK_SUFFIXES,
    clean,
    is_snake_name,
    key_name_kind,
    key_value_ok,
    names_a_setting,
    value_looks_like_secret,
    value_ok_without_connector,
)
from app.adapters.redaction.vendor_tokens import (
    TOKEN_RULES,
    VENDOR_NAMES,
    atlassian_pats,
    aws_secret_keys,
    azure_ai_keys,
    basic_credentials,
    github_checksum_ok,
    jose_tokens,
    otp_seeds,
    starts_word,
)

SOURCE = "chat_rules"

# `::` is a scope operator (`ks!CKsPin::Release+0x1e` in a stack trace, `Auth::Token` in C++/Ruby), not an assignment
_OPERATOR = re.compile(r":=|=>|->|==|!=|=|(?<!:):(?!:)")
# `DB_PASSWORD`, `"apiKey"`, `--token`, `$config['pass']`, C's `char key[] = …` / `key[16] = …`
_NAME_BEFORE = re.compile(
    r"(?<![A-Za-z0-9_])[-]{0,2}[A-Za-z_][A-Za-z0-9_.\-]{0,60}(?:\[\d{0,4}\])?(?:\\?[\"'\]]){0,2}\s*$"
)
_VALUE_AFTER = re.compile(
    r"""\s*(?:(?:[rbuRBU]{1,2}|L|@)?\\?(?P<q>["'`])(?P<quoted>[^"'`\n\\]{1,200})\\?(?P=q)|(?P<bare>[^\s"'`,;&<>)\]}]{1,200}))"""
)


# a reCAPTCHA site key is public too; a primary or foreign key is a row's id, not a credential
_PUBLIC_PARTS = frozenset({"public", "pub", "publishable", "site", "primary", "foreign", "partition", "sort", "row"})
_EMAIL_LIKE = re.compile(r"@[\w\-]+\.[\w.\-]+$")
# names that hold a secret when their value is random: `…key`, `nonce`, `salt`, and (as CredSweeper's
# keyword rules have it) anything about auth, an API, a signature or a credential: `x_auth`, `api`, `hmac`
_KEY_LAST = re.compile(r"(?:key|keys|nonce|salt|auth|api|apis|signature|sig|hmac|cred|creds|credential|seed)$", re.I)


# what a name after a service's name holds when it is not a credential: `twitter_handle`, `slack_channel`
_NOT_CREDENTIAL_LAST = frozenset(
    {
        "handle",
        "user",
        "username",
        "login",
        "email",
        "mail",
        "region",
        "org",
        "team",
        "workspace",
        "channel",
        "project",
        "host",
        "domain",
        "site",
        "bucket",
        "account",
        "plan",
        "tier",
        "sdk",
        "client",
        "lib",
        "package",
        "module",
        "theme",
        "icon",
        "logo",
        "color",
        "colour",
        "link",
        "page",
        "profile",
        "sid",
    }
)


def _random_value_name(name: str) -> str | None:
    """`ANY_key`, `aesKey`, `key_wrap`, `nonce`, `salt` ("key"), a service's name (`twitter`, `algolia_admin`:
    "vendor"): names that hold a secret only when the value is random (so `sort_key = "name"` stays)."""
    parts = [p.lower() for p in NAME_PARTS.findall(name.rsplit(".", 1)[-1])]  # `key_node.tag` names a tag
    if not parts or parts[-1] in WEAK_SUFFIXES or any(p in _PUBLIC_PARTS for p in parts):
        return None
    if any(_KEY_LAST.match(p) for p in parts):
        return "key"
    if any(p in VENDOR_NAMES for p in parts) and parts[-1] not in _NOT_CREDENTIAL_LAST:
        return "vendor"
    return None


def _value_span(text: str, at: int) -> tuple[int, int, str, bool] | None:
    """(start, end, value, bare) of the value after an operator: quoted (without quotes) or bare, and not
    code that fetches it (a call or a lookup)."""
    m = _VALUE_AFTER.match(text, at)
    if m is None:
        return None
    bare = m.group("quoted") is None
    group = "bare" if bare else "quoted"
    value = m.group(group)
    if bare and (text[m.end(group) : m.end(group) + 1] == "(" or value.endswith("[")):
        return None  # password = getpass(…), password = creds["password"]
    if m.group("q") == "`":
        return None  # password: `cat /run/secrets/db` (a shell command), `${…}` (a template literal)
    return m.start(group), m.end(group), value, bare


# `#define DB_PASSWORD "x"` (C/C++ macros: the name and the value separated by whitespace, or by an escaped
# tab when the macro is quoted inside a string)
_DEFINE = re.compile(r"(?:^|[\s\"'])#\s*define(?:\s|\\t)+(?P<name>[A-Za-z_]\w{0,60})(?:[ \t]|\\t)+(?=\S)")
# `key_wrap = 'KJH…\` (a Python string continued on the next line), `k = '''…` (triple quotes)
_OPEN_STRING = re.compile(r"""\s*(?:[rbuf]{0,2}(?:'{3}|"{3}|["'`]))(?P<open>[A-Za-z0-9+/=_\-]{16,200})\\?$""")


# a declared type between the name and '=': `let dbPassword: String = "…"`, `val token: String? = "…"`
_TYPED_NAME = re.compile(
    r"(?<![A-Za-z0-9_])(?P<name>[A-Za-z_]\w{0,60})\s*:\s*[A-Za-z_][\w.]{0,40}(?:<[^<>=\n]{0,40}>)?"
    r"(?:\[\])?\??\s*$"
)


def _operators(text: str) -> Iterator[tuple[int, int, str]]:
    """(name end, value start, name) for every `name <op>` and `#define name` in `text`."""
    for op in _OPERATOR.finditer(text):
        before = _NAME_BEFORE.search(text, max(0, op.start() - 66), op.start())
        if before is not None:
            yield op.start(), op.end(), before.group(0).strip("\"'] \t-\\")
        if op.group(0) in ("=", ":="):
            typed = _TYPED_NAME.search(text, max(0, op.start() - 110), op.start())
            if typed is not None:
                yield op.start(), op.end(), typed.group("name")
    for m in _DEFINE.finditer(text):
        yield m.end("name"), m.end(), m.group("name")


def _assignments(text: str) -> Iterator[Span]:
    """`NAME = value` / `"name": "value"` / `name: value` / `#define NAME value` where NAME announces a
    secret. Each operator is looked at on its own, so `value="pass: x"` and `ID:master/PASS:x` find the
    inner assignment too."""
    for op_at, value_at, name in _operators(text):
        if text[op_at:value_at].strip() == ":" and is_declaration(text, op_at, value_at):
            continue
        kind = key_name_kind(name)
        if kind is None:
            holder = _random_value_name(name)
            if holder is not None:
                yield from _random_value(text, value_at, vendor_name=holder == "vendor")
            continue
        found = _value_span(text, value_at)
        if found is None:
            continue
        start, end, value, bare = found
        if bare and _quoted_namespace(text, start, end):
            continue  # `debug("pw:android")`
        if bare and value[0] in "{([":
            continue  # password = {0x48, 0x65, …}: an array or tuple literal in code, not a typed value
        if bare and (
            is_code_value(value, text[end : end + 40])
            or is_description(value, text[end : end + 40], name, password=kind == "PASSWORD")
        ):
            continue  # `username + ":" + password`, `token = Name.Builtin`, `password: Optional password for …`
        if bare and kind != "PASSWORD" and is_camel_case_name(value):
            continue  # `"token2wav_config": Qwen2_5OmniToken2WavConfig,`: a class in code
        cleaned = clean(value)
        minimum = 4 if kind == "PASSWORD" else 6
        if len(cleaned) < minimum or not value_looks_like_secret(value):
            continue
        if kind != "PASSWORD" and not key_value_ok(cleaned):
            continue
        yield Span(start, end, kind, SOURCE)


def _random_value(text: str, at: int, vendor_name: bool = False) -> Iterator[Span]:
    """The value at `at` when it looks random (an unterminated string continued on the next line too)."""
    found = _value_span(text, at)
    if found is None:
        line_end = text.find("\n", at)
        opened = _OPEN_STRING.match(text[at : line_end if line_end >= 0 else len(text)])
        if opened is None:
            return
        found = at + opened.start("open"), at + opened.end("open"), opened.group("open"), False
    start, end, value, _ = found
    if _EMAIL_LIKE.search(value):
        return  # "key": "f45VgF8jX79o@mail.example" is an address, however random its local part
    if (
        looks_random(clean(value))
        and value_looks_like_secret(value)
        and key_value_ok(clean(value))
        and not (
            vendor_name
            and any(len(part) >= 4 and part.isalpha() and part.islower() for part in re.split(r"[^A-Za-z0-9]+", value))
        )
    ):
        # not `cache_key = qwen2_5_omni_thinker` (a snake-case name), nor `openai:text-embedding-3-small` (a model)
        yield Span(start, end, "API_KEY", SOURCE)


# (the value may sit on a line of its own: `<password>\n    S3cret\n</password>`)
_XML_ELEMENT = re.compile(
    r"<(?P<tag>[A-Za-z_][\w:.\-]{0,60})(?:\s[^<>]{0,200})?>[ \t]*(?:\r?\n[ \t]*)?"
    r"(?P<secret>[^<>\s][^<>\n]{2,200}?)[ \t]*(?:\r?\n[ \t]*)?</(?P=tag)>"
)


def _xml_elements(text: str) -> Iterator[Span]:
    """`<password>…</password>`, `<apiKey>…</apiKey>` in pasted XML configuration."""
    for m in _XML_ELEMENT.finditer(text):
        kind = key_name_kind(m.group("tag").split(":")[-1])
        if kind and value_looks_like_secret(m.group("secret")) and len(clean(m.group("secret"))) >= 4:
            yield Span(m.start("secret"), m.end("secret"), kind, SOURCE)


# options that name where a secret comes from, or take no value (`--password-stdin`, `--token-file path`,
# PowerShell's `-Credential CORP\jdoe` (a user name or credential object) and `-UseDefaultCredentials`)
_FLAG_WITHOUT_SECRET = re.compile(
    r"(?i:.*[\-_](?:stdin|file|path|env|prompt|cmd|command|length|policy|type|mode|"
    r"hash|expiry|expires|reset)|credentials?|use\w+|\w*default\w*)"
)


def _flags(text: str) -> Iterator[Span]:
    """Command-line options: `--password Secret1`, `--super-secret_token 1ace…`, `-dbpwd=x`."""
    for m in re.finditer(
        r"(?:^|\s)--?(?P<name>[A-Za-z][\w\-]{1,40})(?:\s+|=)[\"']?(?P<secret>[^\s\"'\-][^\s\"']*)", text
    ):
        if _FLAG_WITHOUT_SECRET.fullmatch(m.group("name")):
            continue
        kind = key_name_kind(m.group("name"))
        if kind and value_looks_like_secret(m.group("secret")) and len(clean(m.group("secret"))) >= 4:
            yield Span(m.start("secret"), m.end("secret"), kind, SOURCE)


# `mysql -u root -pS3cret` (the password attached to -p); `psexec -u x -p S3cret`, `docker login -u x -p S3cret`
_MYSQL = re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlsh)\b")
_ATTACHED_P = re.compile(r"(?:^|\s)-p(?P<secret>[^\s\"'\-][^\s\"']{2,})")
_PORT_MAPPING = re.compile(r"^(?:[\d.]+:)?\d+(?::\d+)?(?:/(?:tcp|udp))?$")  # `docker run -u 1000 -p 8080:80`
_USER_THEN_P = re.compile(r"(?:^|\s)-u\s+[\"']?[^\s\"']+[\"']?\s+-p\s+[\"']?(?P<secret>[^\s\"'\-][^\s\"']*)")


def _after_mysql(text: str, at: int) -> bool:
    """True when the command on the line before `at` is a MySQL/MariaDB client."""
    return bool(_MYSQL.search(text, text.rfind("\n", 0, at) + 1, at))


def _command_passwords(text: str) -> Iterator[Span]:
    for m in _ATTACHED_P.finditer(text):
        if _after_mysql(text, m.start()) and value_looks_like_secret(m.group("secret")):
            yield Span(m.start("secret"), m.end("secret"), "PASSWORD", SOURCE)
    for m in _USER_THEN_P.finditer(text):
        if _after_mysql(text, m.start()):
            continue  # `mysql -u root -p hr`: a lone -p asks for the password, `hr` is the database
        if value_looks_like_secret(m.group("secret")) and not _PORT_MAPPING.match(m.group("secret")):
            yield Span(m.start("secret"), m.end("secret"), "PASSWORD", SOURCE)


# A secret given as a name/value pair: Postman and other JSON `{"key": "api_key", "value": "…"}`,
# Kubernetes `- name: DB_PASSWORD` / `value: …`, .NET `<add key="ApiKey" value="…"/>`.
_JSON_PAIR = re.compile(
    r"[\"'](?:key|name)[\"']\s*:\s*[\"'](?P<name>[^\"'\n]{1,60})[\"']\s*,\s*"
    r"[\"']value[\"']\s*:\s*[\"'](?P<secret>[^\"'\n]{1,200})[\"']"
)
_YAML_PAIR = re.compile(
    r"\bname:[ \t]*[\"']?(?P<name>[A-Za-z_][\w.\-]{0,60})[\"']?[ \t]*\r?\n[ \t]*"
    r"value:[ \t]*(?:(?P<q>[\"'])(?P<quoted>[^\"'\n]{1,200})(?P=q)|(?P<bare>[^\s\"'#][^\n#]{0,199}?))[ \t]*$",
    re.M,
)
_XML_PAIR = re.compile(
    r"<(?:add|setting|param|parameter|property|input|entry)\b[^<>]{0,200}?"
    r"\b(?:key|name|id)\s*=\s*[\"'](?P<name>[^\"'<>]{1,60})[\"'][^<>]{0,200}?"
    r"\bvalue\s*=\s*[\"'](?P<secret>[^\"'<>]{1,200})[\"']",
    re.I,
)


_XML_KEYED_TEXT = re.compile(
    r"<(?P<tag>add|setting|param|parameter|property|entry|item|string)\b[^<>]{0,200}?"
    r"\b(?:key|name|id)\s*=\s*[\"'](?P<name>[^\"'<>]{1,60})[\"'][^<>]{0,200}>"
    r"(?P<secret>[^<>\s][^<>\n]{2,200})</(?P=tag)>",
    re.I,
)


def _name_value_pairs(text: str) -> Iterator[Span]:
    for pattern in (_JSON_PAIR, _YAML_PAIR, _XML_PAIR, _XML_KEYED_TEXT):
        for m in pattern.finditer(text):
            kind = key_name_kind(m.group("name"))
            group = "secret" if "secret" in pattern.groupindex else ("quoted" if m.group("quoted") else "bare")
            value = m.group(group)
            if kind and value and len(clean(value)) >= 4 and value_looks_like_secret(value):
                yield Span(m.start(group), m.end(group), kind, SOURCE)


# Secrets passed as arguments: `auth=('bob', 'S3cret')`, `smtp.login('bob@corp', 'S3cret')`,
# `define('DB_PASSWORD', 'S3cret')`, `put("apiKey", "…")`, Gradle's `storePassword 'S3cret'`.
_LITERAL_PAIR = re.compile(
    r"[(\[{,]\s*[\"'](?P<name>[A-Za-z_][\w.\-]{0,60})[\"']\s*,\s*[\"'](?P<secret>[^\"'\n]{3,200})[\"']"
)
_CALL_WITHOUT_PARENS = re.compile(r"(?<![\w.])(?P<name>[A-Za-z_]\w{0,60})[ \t]+[\"'](?P<secret>[^\"'\n]{3,200})[\"']")
# "the admin pw for the switch is X": words between the keyword and 'is' must not make it a sentence about
# the password ("the password policy for guests is 12chars")
_LOOSE_PASSWORD = re.compile(
    rf"\b{SECRET_WORD}\b(?P<between>(?:[ \t]+[\w.@\-]+){{1,4}}?)[ \t]+(?:is|was|=|:)[ \t]*:?[ \t]*"
    r"[\"'“]?(?P<secret>[^\s\"'”]+)",
    re.I,
)
_LINKING = frozenset(
    "for on to of the my your our their this that a an new old current temporary temp admin "
    "administrator root local guest wifi wi-fi wireless vpn account user router switch server "
    "printer laptop machine box database db share from at in with".split()
)


def _argument_value(value: str) -> bool:
    """An argument after a secret's name: one token, not a file name, not itself a name
    (`t("password", "Mot de passe")`, `header("api_key", "X-API-Key")`)."""
    return (
        value_ok_without_connector(value)
        and not any(c.isspace() for c in value)
        and not FILE_NAME.match(value)
        and key_name_kind(value) is None
    )


# a configuration directive on its own line: `auth_pass S3cret` (keepalived), `secret "S3cret"`
_DIRECTIVE = re.compile(
    r"^[ \t]*(?P<name>[A-Za-z_][\w.\-]{1,40})[ \t]+(?:(?P<q>[\"'])(?P<quoted>[^\"'\n]{3,200})(?P=q)"
    r"|(?P<bare>[^\s\"'#;][^\s\"';]{2,199}))[ \t]*;?[ \t]*$",
    re.M,
)
# SQL `INSERT INTO users (name, password) VALUES ('bob', 'S3cret')`: the value in the secret column's place
_INSERT = re.compile(
    r"\binsert\s+into\s+[\w.\"`\[\]]+\s*\((?P<cols>[^()]{1,500})\)\s*values\s*\((?P<vals>[^()]{1,2000})\)", re.I
)
_SQL_VALUE = re.compile(r"\s*(?:N?'(?P<quoted>(?:[^']|'')*)'|(?P<bare>[^,]*?))\s*(?:,|$)")


def _insert_values(text: str) -> Iterator[Span]:
    for m in _INSERT.finditer(text):
        columns = [c.strip().strip('"`[]') for c in m.group("cols").split(",")]
        kinds = [key_name_kind(c) for c in columns]
        if not any(kinds):
            continue
        at, end = m.start("vals"), m.end("vals")
        for kind in kinds:
            v = _SQL_VALUE.match(text, at, end)
            if v is None or v.end() == at:
                break
            if kind and v.group("quoted") and value_ok_without_connector(v.group("quoted")):
                yield Span(v.start("quoted"), v.end("quoted"), kind, SOURCE)
            at = v.end()


# A message about a password or a login: a token shaped like a password anywhere on the line is one
# ("I entered Lm4!quartz88 five times", "is Lm4!quartz88 strong enough?", "jdoe / Lm4!quartz88 fails").
_PASSWORD_TALK = re.compile(
    rf"\b{SECRET_WORD}\b|\b(?:log\s?in|logon|log\s+on|sign\s?in|sign\s+on|creds|credentials|"
    r"log(?:ging|ged)\s+(?:in|on)|sign(?:ing|ed)\s+(?:in|on)|"
    r"locked\s+out|passcode)\b",
    re.I,
)
_LINE_TOKEN = re.compile(r"[^\s\"'“”`()\[\]{},;]+")
_URL_TOKEN = re.compile(r"\b[a-z][a-z0-9+.\-]{0,20}://\S*", re.I)
_ISSUE_REF = re.compile(r"^[a-z][\w.\-]*#\d+$")
# "login fails with bob:Zq7!Lp4#Wg7y": a name, one colon and a password (not `std::x`, `12:45:00`, `node:18-alpine`)
_PAIR_COLON = re.compile(
    r"(?<![^\s(])(?P<name>[A-Za-z][\w.\-]{1,31}):(?P<secret>[^\s\"'“”`()\[\]{},;:/\\]{8,48})"
    r"(?=[\s.,;!?)\]]|$)"
)
_NOT_A_USER = re.compile(
    r"^(?i:https?|ftp|s?ftp|ssh|git|file|mailto|tel|urn|arn|data|sha\d*|md5|crc32|blake2\w*|"
    r"bcrypt|argon2\w*|pbkdf2\w*|scrypt|base64|hex|utf-?8|error|warning|info|debug|note|see|fix)$"
)
_PAIR_SLASH = re.compile(
    r"(?<![^\s(\[])[\w.\-@\\]{2,32}\s*/\s*(?P<secret>[^\s\"'“”`()\[\]{},;/]{8,32})"
    r"(?=[\s.,;:!?)\]]|$)"
)


# inside a token (not first, not last): what a password has and a word, a version, a handle or a tag has not
# (not `*` or `^`, which are arithmetic in every formula, nor `%` before two hex digits or a format letter)
_INNER_SYMBOL = re.compile(r"(?<=[A-Za-z0-9])(?:[!#$&?~@]|%(?![0-9A-Fa-f]{2}|[sdifrxc](?![A-Za-z0-9])))(?=[A-Za-z0-9])")
# node@18, pkg@latest, bob@host, someone@Hotmail; a debugger's module!symbol (`nt!KiPageFault+0x474`); code:
# a bundler's renamed `Response$1`, `keyword$DataError`, a member chain `com.example.Main$1.run`, an expression
_NOT_UNMISTAKABLE = re.compile(
    r"^[\w.\-]+@(?:[\d.]+|[A-Z]?[a-z][a-z\-]*)$|^[a-z]+[!?]+[a-z]*$|^[A-Za-z]+![A-Za-z_]|"
    r"^[A-Za-z_]\w*\$(?:\d{1,3}|[A-Z][a-z]\w*)$|^[\w$]+(?:\.[A-Za-z_$][\w$]*)+$|==|!=|&&|\|\||\.\."
)


_REFERENCE_LABEL = re.compile(
    r"^(?i:model|part|item|sku|no|nr|order|ticket|case|ref|invoice|serial|sn|pn|po|id|inc|req|"
    r"room|unit|apt|suite|bug|issue|pr|build|rev|ver)[#:]"
)
_ALPHA_RUN = re.compile(r"[A-Za-z]{3,}")


def _random_part(part: str) -> bool:
    """`fsgb682`, `Lr8nq`, `mTz29k`: letters and digits, and no run of letters in it is a word (`Cable3`,
    `Walmart2day`, `BestBuy2` are words with a number)."""
    return (
        any(c.isalpha() for c in part)
        and any(c.isdigit() for c in part)
        and not part.lower().startswith("0x")
        and not any(is_word(run) for run in _ALPHA_RUN.findall(part))
    )


def unmistakable_password(token: str) -> bool:
    """A token that is a password even with no word about passwords near it ("sorry wrong window,
    fsgb682$LDE"): password-shaped, with lower case, upper case and digits and a symbol between two of
    them; at least one side of the symbol random letters and digits and no side a word (`Model#UN55MU8000`,
    `Roku3?Yes`, `them@Walmart2day`, `TV&Cable3` are text); not a handle, a package version, a reference
    (`SKU#Xr5521b`) or code."""
    token = without_punctuation(token)
    if not password_shaped(token) or _NOT_UNMISTAKABLE.search(token) or _REFERENCE_LABEL.match(token):
        return False
    if (
        _INNER_SYMBOL.search(token) is None
        or sum((any(c.islower() for c in token), any(c.isupper() for c in token), any(c.isdigit() for c in token))) < 3
    ):
        return False
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", token) if p]
    return not any(p.isalpha() and len(p) >= 3 and is_word(p) for p in parts) and any(_random_part(p) for p in parts)


def _string_under_a_name(line: str, at: int) -> bool:
    """`author = "M$Bn0…"`, `"clientSecret": "…"`: a string literal under a name, for the name's rules to judge."""
    return line[at - 1 : at] in ('"', "'") and _SETTING_BEFORE.search(line, max(0, at - 64), at) is not None


# On a line about a login, a token after one of these names the thing the login is for, not the password:
# "login fails on LAPTOP-7H3K9Q2", "printer HP-4F-East asks for a PIN", "after installing Office365ProPlus",
# "sign in to the host pool HP-Prod-Win11-01", "ssh admin@Srv01-db fails", "for app id 0oa1b2c3d4E5f6G7h8i9"
_THING_BEFORE = re.compile(
    r"\b(?:on|at|for|via|printer|printers|host|hosts|server|servers|device|devices|machine|laptop|pc|computer|"
    r"workstation|vm|pool|app|application|package|file|folder|site|dc|domain|tenant|version|build|model|node|"
    r"cluster|instance|room|rooms|gateway|id|upgrad(?:e|ed|ing)\s+to|install(?:ed|ing)?|uninstall(?:ed|ing)?|"
    r"delet(?:e|ed|ing)|remov(?:e|ed|ing)|ssh|scp|sftp|rsync|telnet|ping|mstsc)"
    r"\s+(?:the\s+|my\s+|our\s+|a\s+|an\s+|this\s+|that\s+)?$",
    re.I,
)
# and tokens shaped like a thing: a host name, a file, a version, a package, a dotted identifier
# (a host name and a file name are also what an id-like value in `_keyword_context` may be)
_HOST_NAME = r"^(?:[\w\-]+\.){2,}[A-Za-z]{2,12}$"  # LAPTOP-7H3K9Q2.corp.local
_FILE_NAME_END = (
    r"\.(?i:docx?|xlsx?|xlsm|pptx?|pdf|txt|csv|log|zip|7z|msi|exe|dll|ps1|bat|cmd|sh|py|json|xml|"
    r"ya?ml|ini|cfg|conf|md|html?|png|jpe?g|gif|pst|ost|vhdx?|iso|pfx|cer|crt|bak)$"
)  # Q4Report#2.docx
_THING_SHAPE = re.compile(
    rf"{_HOST_NAME}|{_FILE_NAME_END}"
    r"|^v?\d+(?:\.\d+)+(?:[\-+][\w.\-]+)?$"  # v2.3.1-RC1
    r"|^@[\w.\-]+/"  # @azure/msal-browser@3.6.0
    r"|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){2,}$"
)  # Microsoft.AAD.BrokerPlugin_…


def _names_a_thing(line: str, start: int, token: str) -> bool:
    return bool(
        _THING_SHAPE.search(without_punctuation(token)) or _THING_BEFORE.search(line, max(0, start - 40), start)
    )


def _talk_tokens(text: str, found_so_far: list[Span]) -> Iterator[Span]:
    """Password-shaped tokens on a line about passwords — or on a line where another rule already found one
    ("changed it from X to Y": Y too), which is also what a second pass sees in `[REDACTED:PASSWORD]`, so
    redacting redacted text changes nothing — or where one token is unmistakably a password."""
    password_at = sorted(s.start for s in found_so_far if s.kind == "PASSWORD")
    for line_match in re.finditer(r"[^\n]+", text):
        line = line_match.group(0)
        if len(line) > 500 or not _DIGIT.search(line):
            continue  # a long line is a paste (code, a log); everything below needs a digit (password_shaped)
        offset = line_match.start()
        i = bisect.bisect_left(password_at, offset)
        talk = (
            _PASSWORD_TALK.search(PLACEHOLDER.sub(" ", line)) is not None
            or "[REDACTED:PASSWORD]" in line
            or (i < len(password_at) and password_at[i] < line_match.end())
        )
        if not talk and not _INNER_SYMBOL.search(line):
            tokens = []  # neither a line about a password nor one with a symbol inside a token (unmistakable_password)
        else:
            tokens = [
                t
                for t in _LINE_TOKEN.finditer(line)
                if line[t.end() : t.end() + 1] != "("  # not `f(…)` calls
                and not _names_a_thing(line, t.start(), t.group(0))
            ]
        talk = talk or any(
            unmistakable_password(t.group(0)) and not _string_under_a_name(line, t.start()) for t in tokens
        )
        for t in tokens if talk else ():
            if password_shaped(t.group(0)):
                yield Span(
                    offset + t.start(), offset + t.start() + len(without_punctuation(t.group(0))), "PASSWORD", SOURCE
                )
        links = [u.span() for u in _URL_TOKEN.finditer(line)]
        for m in _PAIR_COLON.finditer(line):
            secret = without_punctuation(m.group("secret"))
            if (
                not _NOT_A_USER.match(m.group("name"))
                and password_shaped(secret)
                and SYMBOL.search(secret)
                and not any(a <= m.start() < b for a, b in links)
            ):
                yield Span(offset + m.start("secret"), offset + m.start("secret") + len(secret), "PASSWORD", SOURCE)
        for m in _PAIR_SLASH.finditer(line):
            if any(a <= m.start() < b for a, b in links) or _ISSUE_REF.match(m.group("secret")):
                continue  # a path inside a link; `data-apis/array-api#807` (an issue in a repository)
            if password_shaped(m.group("secret")) and SYMBOL.search(m.group("secret")):
                yield Span(offset + m.start("secret"), offset + m.end("secret"), "PASSWORD", SOURCE)


# one-time and access codes: "recovery code: 8F3K-2L9M-…", "backup codes: 8472 1938", "door code 4471#"
_CODE = re.compile(
    r"\b(?:recovery|backup|verification|security|mfa|2fa|otp|one[- ]time|authenticator|auth(?:entication)?|"
    r"sms|door|alarm|gate|safe|lock|locker|access|entry|keypad|unlock)\s+(?:code|codes|pin|key)\b"
    r"\s*(?:is|are|was|:|=)?\s*:?\s*(?P<codes>(?:[\"'“]?[A-Z0-9][A-Z0-9\-#*]{3,40}[\"'”]?(?:[\s,;]+|$))+)",
    re.I,
)
_CODE_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-#*]{3,40}")


def _chat_shapes(text: str) -> Iterator[Span]:
    yield from CHAT_SHAPES.spans(text)
    for m in _CODE.finditer(text):
        for t in _CODE_TOKEN.finditer(m.group("codes")):
            if any(c.isdigit() for c in t.group(0)) and t.group(0).lower() not in NOT_A_SECRET:
                yield Span(m.start("codes") + t.start(), m.start("codes") + t.end(), "PASSWORD", SOURCE)


# Terraform / HCL: `variable "db_password" { default = "S3cret" }`
_HCL_VARIABLE = re.compile(
    r"\bvariable\s+\"(?P<name>[\w\-]{1,60})\"\s*\{[^{}]{0,300}?\bdefault\s*=\s*\"(?P<secret>[^\"\n]{4,200})\""
)
# a query string pasted URL-encoded: `password%3DS3cret%26user%3Dbob`
_ENCODED_PAIR = re.compile(
    r"(?:(?<![A-Za-z0-9_%])|(?<=%26)|(?<=%3[Ff]))(?P<name>[A-Za-z_][\w.\-]{0,60})%3[Dd](?P<secret>(?:(?!%26|%3[Bb])[^\s&;\"'<>]){3,200})"
)


def _argument_secrets(text: str) -> Iterator[Span]:
    for pattern in (_ENCODED_PAIR, _HCL_VARIABLE):
        for m in pattern.finditer(text):
            kind, value = key_name_kind(m.group("name")), m.group("secret")
            if kind and value_looks_like_secret(value) and (kind == "PASSWORD" or key_value_ok(value)):
                yield Span(m.start("secret"), m.end("secret"), kind, SOURCE)
    for m in _DIRECTIVE.finditer(text):
        kind = key_name_kind(m.group("name"))
        group = "quoted" if m.group("quoted") else "bare"
        if kind and _argument_value(m.group(group)) and (kind == "PASSWORD" or key_value_ok(m.group(group))):
            yield Span(m.start(group), m.end(group), kind, SOURCE)
    yield from _insert_values(text)
    yield from LOGIN_CALLS.spans(text)
    for pattern in (_LITERAL_PAIR, _CALL_WITHOUT_PARENS):
        for m in pattern.finditer(text):
            name, value = m.group("name"), m.group("secret")
            kind = key_name_kind(name)
            if pattern is _CALL_WITHOUT_PARENS and len(NAME_PARTS.findall(name)) < 2:
                continue  # `grep password "notes.txt"`: only a compound name (storePassword) reads as a setting
            if kind and _argument_value(value) and (kind == "PASSWORD" or key_value_ok(value)):
                yield Span(m.start("secret"), m.end("secret"), kind, SOURCE)
    for m in _LOOSE_PASSWORD.finditer(text):
        words = m.group("between").lower().split()
        if all(
            w in _LINKING or (w not in NOT_A_SECRET and w.isalnum() and i > 0) for i, w in enumerate(words)
        ) and strong(m.group("secret")):
            yield Span(m.start("secret"), m.end("secret"), "PASSWORD", SOURCE)


# random-looking strings that a keyword a few words earlier points at ("the api key is 8d7f…")
# (also inside identifiers: `key_wrap`, `apiKey`, `SESSION_TOKEN`, `nonce`, `salt`)
_CONTEXT_WORD = re.compile(
    r"(?:\b|_|(?<=[a-z])(?=[A-Z]))(?i:key|keys|token|tokens|secret|secrets|password|passwd|pw|pwd|credential|"
    r"credentials|auth|bearer|signature|sig|passphrase|apikey|otp|seed|nonce|salt|pat)(?![a-z])"
)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9_+/=.\-$])[A-Za-z0-9_+/=.~\-]{16,}(?![A-Za-z0-9_+/=.\-])")


_NOT_SECRET_CONTEXT = re.compile(
    r"(?i:(?:public|publishable|site|\bpub|primary|foreign)[ _\-]?(?:key|token))|(?i:fingerprint|thumbprint)|"
    r"\b(?i:md5|sha1|sha256|sha512|sha-?\d+|hash|digest|checksum)\b\s*[(:]?"
)
_SETTING_BEFORE = re.compile(r"([A-Za-z_][\w.\-]{0,60})[\"']?\s*[:=]\s*[\"']?$")
# a random-looking value named as an identifier right before it: "commit 3f2a9b…", "request id 7f3a…",
# "correlation 8f3e…" — ids are not secrets even on a line about a token
_ID_BEFORE = re.compile(
    r"\b(?:commit|sha|revision|rev|request|correlation|trace|activity|build|container|entry|"
    r"object|package|file|folder|sid|serial|etag|version|guid|uuid|(?:app|client|tenant|object|"
    r"device|user|request|trace|correlation|message|event)[ _\-]?id|id)(?:\s+id)?\s*(?:number)?"
    r"\s*[:=#]?\s*$",
    re.I,
)
# a Windows SID, a file, a Credential Manager target, a host
_ID_SHAPE = re.compile(
    rf"^S-1-\d+(?:-\d+){{2,}}|{_FILE_NAME_END}|"
    rf"^(?:TERMSRV|LegacyGeneric|WindowsLive|MicrosoftAccount|Domain)[/:]|{_HOST_NAME}"
)
_SSH_PUBLIC_BEFORE = re.compile(rf"{SSH_KEY_TYPE}\s+$")


def _keyword_context(text: str) -> Iterator[Span]:
    for m in _CANDIDATE.finditer(text):
        value = m.group(0)
        if "/" in value and value.count("/") >= 2 and not value.endswith("="):
            continue  # a path
        if re.fullmatch(r"[\d.\-]+", value) or "://" in value or _UUID.search(value) or "=" in value.rstrip("="):
            continue  # numbers, URLs, ids, and `MinimumLength=14` (a setting: base64 has '=' only at the end)
        if _ID_SHAPE.search(value) or text[m.start() - 1 : m.start()] in ("\\", "%"):
            continue  # a SID, a file, a host, a Credential Manager target; a folder inside a Windows path
        if text[m.end() : m.end() + 1] == "(" or DOTTED_NAME.fullmatch(value):
            continue  # `base64.b64decode(…)`, `settings.auth_backend`: code
        if not looks_random(value) or is_snake_name(value):
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = PLACEHOLDER.sub(" ", text[max(line_start, m.start() - 60) : m.start()])  # not our own `[REDACTED:KEY]`
        if (
            _SSH_PUBLIC_BEFORE.search(before)
            or _NOT_SECRET_CONTEXT.search(before)
            or _ID_BEFORE.search(before)
            or _THING_BEFORE.search(before)
        ):
            continue  # `ssh-ed25519 AAAAC3…`, `public_key: …`, `fingerprint SHA256:…`, `md5(password) = …`
        setting = _SETTING_BEFORE.search(before)
        if setting and names_a_setting(setting.group(1)):
            continue  # `secret_version: 9e1f…`, `token_id = …`: a setting about the secret
        if _CONTEXT_WORD.search(before):
            yield Span(m.start(), m.end(), "SECRET", SOURCE)


_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]{24,}={0,2}(?![A-Za-z0-9+/=_\-])")
_MAX_DECODED_RUNS = 16


def _encoded_secrets(text: str) -> Iterator[Span]:
    """A base64 run that decodes to text holding a secret (a `.env` or config file pasted encoded, a
    Kubernetes secret's data, a basic-auth blob without its header): the whole run is the secret.
    One level deep, at most 16 runs per text."""
    for n, m in enumerate(_B64_RUN.finditer(text)):
        if n >= _MAX_DECODED_RUNS:
            return
        run = m.group(0)
        try:
            raw = base64.b64decode(run.replace("-", "+").replace("_", "/") + "=" * (-len(run) % 4), validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if sum(c.isprintable() or c in "\n\r\t" for c in decoded) < 0.95 * len(decoded):
            continue
        if find_secrets(decoded, decode=False):
            yield Span(m.start(), m.end(), "SECRET", SOURCE)


# a quoted `"pw:android"` / `'passwd:name'`: a debug namespace or a function name, not a password
_QUOTED_NAMESPACE = re.compile(r"[\"'](?i:pw|pwd|pass|passwd|password):$")


def _quoted_namespace(text: str, start: int, end: int) -> bool:
    return bool(
        _QUOTED_NAMESPACE.search(text, max(0, start - 10), start)
        and text[end : end + 1] in ('"', "'")
        and re.fullmatch(r"[a-z][a-z\-_]*", text[start:end])
    )


def _code_after_operator(text: str, start: int, end: int) -> bool:
    """`password: Union[str, None]`, `password=proxy.auth[1] if …`, `token = Name.Namespace if …`: after
    `:` or `=` the rule found a type or an expression, not a value; `"pw:android"` is a namespace."""
    if _quoted_namespace(text, start, end):
        return True
    before = text[max(0, start - 3) : start].rstrip(" \t\"'")
    if not before.endswith((":", "=")):
        return False
    if before.endswith(":") and is_declaration(text, text.rfind(":", 0, start), start):
        return True
    value = text[start:end]
    return text[start - 1 : start] not in ('"', "'") and is_code_value(value.rstrip(","), text[end : end + 40])


_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_\-]{1,400}")
_DIGIT = re.compile(r"\d")
_TOKEN_GATES = AnchorIndex(rule.pattern for rule in TOKEN_RULES)


def find_secrets(text: str, *, decode: bool = True) -> list[Span]:
    """Every secret span the chat rules see in `text` (overlaps are resolved by the caller)."""
    spans: list[Span] = []
    lowered = text.lower()
    spans.extend(PRIVATE_KEYS.spans(text, lowered))
    for rule, may_match in zip(TOKEN_RULES, _TOKEN_GATES.active(text, lowered)):
        if not may_match:
            continue  # none of the literal strings its matches start with is in the text
        for m in rule.pattern.finditer(text):
            group = "secret" if "secret" in rule.pattern.groupindex else 0
            if group == 0 and not starts_word(text, m.start()):
                continue
            random_part = m.group("body") if "body" in rule.pattern.groupindex else m.group(group)
            if rule.check_fake and looks_fake(random_part) and not github_checksum_ok(m.group(group)):
                continue
            end = m.end(group)
            if group == 0:  # a token that runs on past the format's body (`xoxp-…_…`) is removed whole
                run = _TOKEN_TAIL.match(text, end)
                end = run.end() if run else end
            spans.append(Span(m.start(group), end, rule.kind, SOURCE))
    spans.extend(Span(start, end, "AZURE_KEY", SOURCE) for start, end in azure_ai_keys(text))
    spans.extend(Span(start, end, "SECRET", SOURCE) for start, end in otp_seeds(text))
    spans.extend(Span(start, end, "JWT", SOURCE) for start, end in jose_tokens(text))
    spans.extend(Span(start, end, "AUTH_HEADER", SOURCE) for start, end in basic_credentials(text))
    spans.extend(Span(start, end, "AWS_KEY", SOURCE) for start, end in aws_secret_keys(text))
    spans.extend(Span(start, end, "API_KEY", SOURCE) for start, end in atlassian_pats(text))
    spans.extend(PHRASES.spans(text, lowered, reject=_code_after_operator))
    spans.extend(COMMAND_LINES.spans(text, lowered, reject=_code_after_operator))
    spans.extend(_assignments(text))
    spans.extend(_flags(text))
    spans.extend(_xml_elements(text))
    spans.extend(_keyword_context(text))
    spans.extend(_command_passwords(text))
    spans.extend(_name_value_pairs(text))
    spans.extend(_argument_secrets(text))
    spans.extend(positional_passwords(text))
    spans.extend(byte_array_keys(text))
    spans.extend(yaml_block_values(text))
    spans.extend(kubernetes_secret_values(text))
    spans.extend(_chat_shapes(text))
    spans.extend(passphrases(text))
    spans.extend(_talk_tokens(text, spans))
    if decode:
        spans.extend(_encoded_secrets(text))
    return spans
