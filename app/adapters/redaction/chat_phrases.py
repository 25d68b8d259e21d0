"""Secrets said in a sentence or pasted from a header, a URL, a query or a config line: four tables.

PRIVATE_KEYS (whole key blocks), PHRASES ("my password is X", `Authorization:` headers, connection
strings, credentials in URLs, SQL, registry output, …), CHAT_SHAPES (what people type beyond
"password: X", each value strong enough to stand alone) and LOGIN_CALLS (a password passed to a login
call). Each row: name, kind, pattern (the value in its `secret` group), what the value must look like,
and examples — a text and the secret it must yield, and texts it must leave alone. The examples are
the tests (tests/unit/test_rule_tables.py); rule_table.RuleTable runs each table, each row only on
text holding one of the literal strings its pattern starts with. chat_rules.find_secrets runs the
tables, PHRASES with chat_rules' check that the value is not code after an operator.
"""

from __future__ import annotations

import base64
import binascii
import re

from app.adapters.redaction.code_shapes import is_participle
from app.adapters.redaction.heuristics import is_masked, is_template, looks_fake, shannon_entropy
from app.adapters.redaction.rule_table import Rule, RuleTable
from app.adapters.redaction.values import (
    FILE_NAME,
    SECRET_WORD,
    URL_PLACEHOLDERS,
    clean,
    key_name_kind,
    key_value_ok,
    value_looks_like_secret,
    value_ok_without_connector,
)

P = "PASSWORD"

# --- what a value must look like ------------------------------------------------------------------

# "the passcode is non-compliant", "PIN is 6-digits", "password is case-sensitive": what it is like, not what it is
_COMPOUND_ADJECTIVE = re.compile(
    r"(?:non|out|self|re|pre|un|case|up|well|co|multi|auto|semi|half|over|under|single|"
    r"two|one|time)-[a-z]+(?:-[a-z]+)*|\d{1,2}-(?:digits?|characters?|chars?|letters?)",
    re.I,
)
SYMBOL = re.compile(r"[!#$%^&*+=?~|<>@]")
_NOT_PASSWORD_TOKEN = re.compile(
    r"://|^[A-Za-z_][\w.\-]*[=:]|^www\.|^[\w.+\-]+@[\w\-]+\.[\w.\-]+$|^[\w\-]+\.[a-z]{2,5}$|[/\\].*[/\\]|^0x[0-9a-f]+$|"
    r"^[a-z]?[A-Z]?[a-z]+\d{1,4}$|^\d{1,2}[A-Z]?[a-z]+$|^#?[0-9a-f]{6}$",
    re.I,
)


def _sentence_password(value: str) -> bool:
    """After "the password is": a value, not a word saying what happens to it or what it is like."""
    return len(value) >= 3 and not is_participle(value) and not _COMPOUND_ADJECTIVE.fullmatch(value)


def without_punctuation(token: str) -> str:
    """The token without the sentence's closing punctuation ("…quartz88?" -> "…quartz88"); a '!' or '?'
    stays when the token has other symbols (then it may be part of the password)."""
    return token.rstrip(".,:;!?") if not SYMBOL.search(token[:-1]) else token.rstrip(".,:;")


def password_shaped(token: str) -> bool:
    """A token that only a password looks like: 8-48 characters with a lower-case letter, a digit and
    either a symbol or an upper-case letter, and not a URL, address, file name, path, hex or a
    product-and-version name (Office365, iPhone15, 1Password)."""
    token = without_punctuation(token)
    if not 8 <= len(token) <= 48 or _NOT_PASSWORD_TOKEN.search(token):
        return False
    lower, digit = any(c.islower() for c in token), any(c.isdigit() for c in token)
    upper, symbol = any(c.isupper() for c in token), bool(SYMBOL.search(token))
    return lower and digit and (symbol or upper) and not looks_fake(token) and value_looks_like_secret(token)


def strong(value: str) -> bool:
    """A value that can stand without a keyword right before it: letters with digits or symbols, 6+ long."""
    v = clean(value)
    return (
        len(v) >= 6
        and value_ok_without_connector(value)
        and any(c.isalpha() for c in v)
        and any(not c.isalpha() for c in v)
        and "://" not in v
        and not v.startswith("www.")
    )


def _b64_pem_is_private(token: str) -> bool:
    try:
        head = base64.b64decode(token[:64] + "=" * (-len(token[:64]) % 4), validate=False)
    except (binascii.Error, ValueError):
        return False
    return b"PRIVATE KEY" in head


def _sentence_value(value: str) -> bool:
    return _sentence_password(clean(value)) and value_looks_like_secret(value)


def _key_shaped(value: str) -> bool:
    return value_looks_like_secret(value) and key_value_ok(value)


def _key_or_password(value: str) -> bool:
    # a key's shape, or a password's ("my vpn secret is Summer2024Gg7!")
    return value_ok_without_connector(value) and (key_value_ok(value) or password_shaped(value))


def _not_a_file(value: str) -> bool:
    return value_looks_like_secret(value) and not FILE_NAME.match(value)


def _not_a_placeholder(value: str) -> bool:
    return value.lower() not in URL_PLACEHOLDERS and not is_template(value)


def _url_password(value: str) -> bool:
    return not (is_template(value) or is_masked(value) or value.lower() in URL_PLACEHOLDERS)


def _bare_password(value: str) -> bool:
    return value_ok_without_connector(value) and key_name_kind(value) is None


def _not_a_real_fake(value: str) -> bool:
    return not looks_fake(value[2:])


def _pair_password(value: str) -> bool:
    return value_ok_without_connector(value) and not value.lower().startswith(("pw", "pass"))


def _jwk_member(value: str) -> bool:
    return shannon_entropy(value) >= 3.5 and not looks_fake(value)


_PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Zq"

PRIVATE_KEYS = RuleTable(
    (
        # one secret from BEGIN to END, or to the end of the text when END is missing
        Rule(
            "PEM private key",
            "PRIVATE_KEY",
            re.compile(
                r"(?P<secret>-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z))",
                re.S,
            ),
            finds=(
                (
                    f"-----BEGIN PRIVATE KEY-----\n{_PEM_BODY}\n-----END PRIVATE KEY-----",
                    f"-----BEGIN PRIVATE KEY-----\n{_PEM_BODY}\n-----END PRIVATE KEY-----",
                ),
                (
                    f"key:\n-----BEGIN RSA PRIVATE KEY-----\n{_PEM_BODY}",
                    f"-----BEGIN RSA PRIVATE KEY-----\n{_PEM_BODY}",
                ),
            ),
            keeps=(f"-----BEGIN PUBLIC KEY-----\n{_PEM_BODY}\n-----END PUBLIC KEY-----",),
        ),
        Rule(
            "PuTTY key file",
            "PRIVATE_KEY",
            re.compile(r"(?P<secret>PuTTY-User-Key-File-\d.*?(?:Private-MAC:\s*\S+|\Z))", re.S),
            finds=(
                (
                    "PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 1\nAAAAgQCq7Zq\nPrivate-MAC: 8f3e9a1c",
                    "PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 1\nAAAAgQCq7Zq\nPrivate-MAC: 8f3e9a1c",
                ),
            ),
            keeps=("open the key with PuTTYgen and save it as a .ppk file",),
        ),
        Rule(
            "base64 of a PEM private key",
            "PRIVATE_KEY",
            re.compile(r"(?P<secret>LS0tLS1CRUdJTi[A-Za-z0-9+/=]{20,})"),
            _b64_pem_is_private,
            finds=(
                (
                    "tls.key: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlC",
                    "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlC",
                ),
            ),
            keeps=("tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM=",),
        ),
    ),
    source="chat_rules",
)


PHRASES = RuleTable(
    (
        # --- a password said in a sentence
        Rule(
            "password is X",
            P,
            re.compile(
                rf"(?:\b{SECRET_WORD}(?:\s+(?:for|on|to|of|del|de|du|für|voor)(?:\s+(?:the|my|our|a|this|that|la|le|el))?\s+[\w.@\-]+)?\s*"
                rf"(?:\b(?:has been set to|was set to|would be|should be|"
                rf"used to be|is now|now is|will be|set to|changed to|reset to|is still|was still|is|was|ist|est|es|è|é|är|er)\b|c['’]est)\s*:?\s*"
                rf"[\"'“‘]?|\b{SECRET_WORD}(?:\s+for\s+[\w.@\-]{{1,60}})?\s*[=:]\s*[\"'“‘]?)"
                rf"(?P<secret>[^\s\"'“”‘’]+)",
                re.I,
            ),
            _sentence_value,
            finds=(
                ("my password is Zq7Lp4Wg", "Zq7Lp4Wg"),
                ("das Passwort ist Zq7Lp4Wg", "Zq7Lp4Wg"),
                ("pw: Tr0ub4dor&3", "Tr0ub4dor&3"),
                ("the PIN for the laptop is 4821", "4821"),
            ),
            keeps=("the password is non-compliant", "my password is expired"),
        ),
        Rule(
            "password X",
            P,
            re.compile(rf"\b{SECRET_WORD}\s+[\"'“]?(?P<secret>[^\s\"'”]+)", re.I),
            value_ok_without_connector,
            finds=(("password Tr0ub4dor&3 does not work", "Tr0ub4dor&3"),),
            keeps=("password reset please",),
        ),
        Rule(
            "X is my password",
            P,
            re.compile(
                r"(?<![^\s\"'])(?P<secret>[^\s\"']{3,100})\s+(?:is|was|as)\s+(?:my|the|our|a|an)\s+"
                r"(?:new\s+|old\s+|current\s+|temporary\s+|temp\s+|initial\s+|default\s+)?"
                rf"{SECRET_WORD}\b",
                re.I,
            ),
            value_ok_without_connector,
            finds=(("I used Summer2024Gg7! as the password", "Summer2024Gg7!"),),
            keeps=("what is my password",),
        ),
        Rule(
            "ID/PW: user/password",
            P,
            re.compile(
                r"\b(?:id|user(?:name)?|login|account)\s*[/&(]\s*(?:pw|pwd|pass(?:word)?|passwd)\)?\s*[:=]\s*"
                r"(?P<secret>\S+)",
                re.I,
            ),
            value_looks_like_secret,
            finds=(("ID/PW: master/iPp0@GRq", "master/iPp0@GRq"),),
            keeps=("user/password: <redacted>",),
        ),
        Rule(
            "ConvertTo-SecureString",
            P,
            re.compile(r"ConvertTo-SecureString(?:\s+-\w+)*\s+\\?[\"']?(?P<secret>[^\s\"'\\-][^\s\"'\\]*)", re.I),
            finds=(('$pw = ConvertTo-SecureString "Zq7!Lp4x" -AsPlainText -Force', "Zq7!Lp4x"),),
            keeps=("Read-Host -AsSecureString | ConvertTo-SecureString -AsPlainText -Force",),
        ),
        # --- a key or a secret said in a sentence
        Rule(
            "the secret key is X",
            "API_KEY",
            re.compile(
                r"\b(?:secret|private|access|api|auth|client|encryption|signing|master|recovery|bitlocker|license|licence|"
                r"product|activation)[ _\-]?key\s*(?:is|=|:|was)\s*:?\s*[\"']?(?P<secret>[^\s\"']{6,})",
                re.I,
            ),
            _key_shaped,
            finds=(("the API key is 8d7f3a9c2b1e4f6a0d5c", "8d7f3a9c2b1e4f6a0d5c"),),
            keeps=("the api key is missing",),
        ),
        Rule(
            "the secret is X",
            "SECRET",
            re.compile(
                r"\b(?:secret|token|api[ _\-]?key|access[ _\-]?key|passphrase)\s+(?:is|was|=|:)\s*:?\s*"
                r"[\"'“]?(?P<secret>[^\s\"'”]{6,})",
                re.I,
            ),
            _key_or_password,
            finds=(("my vpn secret is Summer2024Gg7!", "Summer2024Gg7!"),),
            keeps=("the token is invalid",),
        ),
        Rule(
            "product key",
            "API_KEY",
            re.compile(r"\b(?P<secret>[A-Z0-9]{5}(?:-[A-Z0-9]{5}){4})\b"),
            finds=(("product key 7QK2M-9XW4T-B3R8P-H6J2N-Y4D9C", "7QK2M-9XW4T-B3R8P-H6J2N-Y4D9C"),),
            keeps=("serial ABCDE-12345-FGHIJ",),
        ),
        # --- SQL
        Rule(
            "IDENTIFIED BY",
            P,
            re.compile(r"\bidentified\s+(?:with\s+\w+\s+)?by\s+[\"'](?P<secret>[^\"']+)[\"']", re.I),
            value_looks_like_secret,
            finds=(("CREATE USER app IDENTIFIED BY 'Zq7!Lp4x';", "Zq7!Lp4x"),),
            keeps=("CREATE USER app IDENTIFIED WITH auth_socket;",),
        ),
        Rule(
            "PASSWORD('x')",
            P,
            re.compile(r"(?<![\"'])\bpassword\s*\(?\s*[\"'](?P<secret>[^\"']+)[\"']", re.I),
            _not_a_file,
            finds=(("SET PASSWORD = PASSWORD('Zq7!Lp4x');", "Zq7!Lp4x"),),
            keeps=("password('secrets.txt')",),
        ),
        # --- connection strings and URLs
        Rule(
            "connection string Password=",
            "CONNECTION_STRING",
            re.compile(
                r"\b(?:server|data source|host|endpoint|accountname|address|addr)\s*=[^;\n]*;[^\n]*?"
                r"\b(?:password|pwd|accountkey|sharedaccesskey|sharedsecretvalue)\s*=\s*(?P<secret>[^;\s\"']+)",
                re.I,
            ),
            _not_a_placeholder,
            finds=(("Server=db01;User Id=app;Password=Zq7!Lp4x;", "Zq7!Lp4x"),),
            keeps=("Server=db01;User Id=app;Password={password};",),
        ),
        # (the user may be empty: `redis://:S3cret@cache:6379`)
        Rule(
            "user:password@ in a URL",
            "URL_CREDENTIALS",
            re.compile(r"\b[a-z][a-z0-9+.\-]{0,20}://[^\s:/]{0,200}:(?P<secret>[^\s@/]{1,200})@", re.I),
            _url_password,
            finds=(("postgres://app:Zq7Lp4Wg@db:5432/shop", "Zq7Lp4Wg"), ("redis://:Zq7Lp4Wg@cache:6379", "Zq7Lp4Wg")),
            keeps=("postgres://app:${DB_PASSWORD}@db:5432/shop", "https://user:****@host/"),
        ),
        Rule(
            "secret in a query string",
            "TOKEN",
            re.compile(
                r"(?:[?&]|%26|%3F)(?:access_token|refresh_token|id_token|token|api_key|apikey|key|sig|signature|password|"
                r"pwd|passwd|secret|client_secret|app_secret|auth|code|session|sessionid|jwt|credential)(?:=|%3D)"
                r"(?P<secret>(?:[^&\s#\"'<>%]|%(?!26|3D)[0-9A-F]{2}){6,})",
                re.I,
            ),
            value_looks_like_secret,
            finds=(("https://api.example/v1?access_token=Zq7Lp4Wg7y9R&x=1", "Zq7Lp4Wg7y9R"),),
            keeps=("https://api.example/v1?page=2&sort=name",),
        ),
        # --- HTTP headers
        Rule(
            "Authorization header",
            "AUTH_HEADER",
            re.compile(
                r"\b(?:proxy-)?authorization\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|negotiate|ntlm|apikey|sso-key|mac|hawk|hoba|mutual|"
                r"vapid)\s+)?"
                r"(?P<secret>[^\s\"',;]+)",
                re.I,
            ),
            value_looks_like_secret,
            finds=(("Authorization: Bearer Zq7Lp4Wg7yR8x2Lq9ZkW4mN7", "Zq7Lp4Wg7yR8x2Lq9ZkW4mN7"),),
            keeps=("Authorization: Bearer $TOKEN",),
        ),
        Rule(
            "Authorization: Digest / AWS4",
            "AUTH_HEADER",
            re.compile(
                r"\b(?:proxy-)?authorization\s*[:=]\s*[\"']?(?:digest|aws4-hmac-sha256)\s+(?P<secret>[^\n]+)", re.I
            ),
            finds=(
                ('Authorization: Digest username="bob", response="6629fae4"', 'username="bob", response="6629fae4"'),
            ),
            keeps=("Authorization: Basic",),
        ),
        Rule(
            "API key headers",
            "AUTH_HEADER",
            re.compile(
                r"\b(?:x-api-key|x-auth-token|x-access-token|api-key|x-goog-api-key|ocp-apim-subscription-key|private-token|"
                r"x-vault-token|x-jfrog-art-api)\s*:\s*(?P<secret>[^\s\"',;]+)",
                re.I,
            ),
            finds=(("X-API-Key: Zq7Lp4Wg7yR8x2Lq", "Zq7Lp4Wg7yR8x2Lq"),),
            keeps=("send the X-API-Key header",),
        ),
        Rule(
            "Cookie header",
            "AUTH_HEADER",
            re.compile(r"\b(?:set-)?cookie\s*:\s*(?P<secret>[^\n\"']*=[^\n\"']+)", re.I),
            finds=(("Cookie: session=Zq7Lp4Wg7yR8", "session=Zq7Lp4Wg7yR8"),),
            keeps=("Cookie: none",),
        ),
        Rule(
            "bearer X",
            "TOKEN",
            re.compile(r"\bbearer\s+(?P<secret>[A-Za-z0-9._~+/=\-]{12,})", re.I),
            key_value_ok,
            finds=(("use bearer Zq7Lp4Wg7yR8x2Lq9", "Zq7Lp4Wg7yR8x2Lq9"),),
            keeps=("bearer authorization",),
        ),
        # --- code and markup
        Rule(
            "HTML password input",
            P,
            re.compile(
                r"<input\b(?=[^<>]*\btype\s*=\s*[\"']?password)[^<>]*?\bvalue\s*=\s*[\"'](?P<secret>[^\"'<>]{1,200})[\"']",
                re.I,
            ),
            value_looks_like_secret,
            finds=(('<input type="password" name="pw" value="Zq7!Lp4x">', "Zq7!Lp4x"),),
            keeps=('<input type="text" name="user" value="alice">',),
        ),
        Rule(
            "auth call with one argument",
            P,
            re.compile(
                r"\.(?:auth|authenticate|set_?password|login)\s*\(\s*[\"'](?P<secret>[^\"'\n]{3,100})[\"']\s*\)", re.I
            ),
            _bare_password,
            finds=(('conn.auth("Zq7!Lp4x")', "Zq7!Lp4x"),),
            keeps=('client.login("password")',),
        ),
        Rule(
            "JDBC Oracle thin URL",
            P,
            re.compile(r"\bjdbc:oracle:(?:thin|oci\d?):[A-Za-z_][\w$#]{0,30}/(?P<secret>[^\s@/\"']+)@", re.I),
            finds=(("jdbc:oracle:thin:scott/T1ger#9@//db:1521/ORCL", "T1ger#9"),),
            keeps=("jdbc:oracle:thin:@//db:1521/ORCL",),
        ),
        # --- codes read off a device
        Rule(
            "SIM PUK",
            P,
            re.compile(r"\b(?:sim\s+)?puk2?(?:\s+code)?\s*(?:is|:|=)?\s*:?\s*(?P<secret>\d{8})\b", re.I),
            finds=(("SIM PUK 84417203", "84417203"),),
            keeps=("the PUK is on the SIM card holder",),
        ),
        Rule(
            "hardware token code",
            P,
            re.compile(
                r"(?:\b(?:rsa|securid|hardware|soft|mfa)\s+token\s+(?:code\s+)?(?:shows|says|displays|reads|is|:)\s*:?\s*"
                r"|\btoken\s+code\s*(?:is|:|=)?\s*:?\s*)(?P<secret>\d{6,8})\b",
                re.I,
            ),
            finds=(("RSA token shows 901244", "901244"), ("token code: 55120934", "55120934")),
            keeps=("my RSA token shows nothing",),
        ),
        # --- package managers, databases, the Windows registry
        Rule(
            "Bundler gem server credentials",
            P,
            re.compile(
                r"\bBUNDLE_(?!BUILD__|MIRROR__)[A-Z0-9_]+__[A-Z0-9]+__[A-Z]{2,}[\"']?\s*[=:]\s*[\"']?(?P<secret>[^\s\"']+)"
            ),
            value_ok_without_connector,
            finds=(("BUNDLE_GEMS__CORP__EXAMPLE=bob:Zq7Lp4Wg", "bob:Zq7Lp4Wg"),),
            keeps=("BUNDLE_MIRROR__RUBYGEMS__ORG=https://mirror.example",),
        ),
        Rule(
            ".npmrc registry credential",
            "TOKEN",
            re.compile(
                r"(?:^|[\s\"'])//[^\s/]+(?:/[^\s:]*)?/?:_(?:authToken|auth|password)\s*=\s*[\"']?(?P<secret>[^\s\"']+)",
                re.M,
            ),
            value_ok_without_connector,
            finds=(
                (
                    "//registry.npmjs.org/:_authToken=npm_Zq7Lp4Wg7yX2mN9kQ3vR8tB1abcdEFGH1234",
                    "npm_Zq7Lp4Wg7yX2mN9kQ3vR8tB1abcdEFGH1234",
                ),
                ("//npm.corp.example/repo/:_password=WnE3THA0V2c3eQ==", "WnE3THA0V2c3eQ=="),
            ),
            keeps=("//registry.npmjs.org/:_authToken=${NPM_TOKEN}", "//registry.npmjs.org/:always-auth=true"),
        ),
        Rule(
            "~/.pgpass line",
            P,
            re.compile(r"^[A-Za-z0-9_.\-*]+:(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:(?P<secret>\S+)$", re.M),
            value_looks_like_secret,
            finds=(("db.corp:5432:shop:app:Zq7!Lp4x", "Zq7!Lp4x"),),
            keeps=("db.corp:5432:shop:app",),
        ),
        Rule(
            "registry value REG_SZ",
            P,
            re.compile(
                r"\b\w*(?:password|passwd|pwd)\w*\s+REG_(?:SZ|EXPAND_SZ)\s+(?P<secret>\S[^\n]*?)[ \t]*$", re.I | re.M
            ),
            value_looks_like_secret,
            finds=(("    DefaultPassword    REG_SZ    Zq7!Lp4x", "Zq7!Lp4x"),),
            keeps=("    DefaultUserName    REG_SZ    alice",),
        ),
        Rule(
            "Go/MySQL DSN",
            P,
            re.compile(r"(?<=[\"'\s=])[\w.\-]{1,64}:(?P<secret>[^@\s\"':/]{3,})@(?:tcp|unix|udp)\("),
            value_looks_like_secret,
            finds=(('dsn := "app:Zq7!Lp4x@tcp(db:3306)/shop"', "Zq7!Lp4x"),),
            keeps=('dsn := "app@tcp(db:3306)/shop"',),
        ),
        Rule(
            "sp_addlogin / sp_password",
            P,
            re.compile(
                r"\bsp_(?:addlogin|password)\s+(?:@\w+\s*=\s*)?N?'[^'\n]*'\s*,\s*(?:@\w+\s*=\s*)?N?'(?P<secret>[^'\n]+)'",
                re.I,
            ),
            value_looks_like_secret,
            finds=(("EXEC sp_addlogin 'app', 'Zq7!Lp4x'", "Zq7!Lp4x"),),
            keeps=("EXEC sp_addlogin 'app'",),
        ),
        # --- tokens where the service is named
        Rule(
            "old Vault service token",
            "TOKEN",
            re.compile(r"\bvault\b[^\n]*?(?<![\w.])(?P<secret>[sbr]\.[A-Za-z0-9]{24})\b", re.I),
            _not_a_real_fake,
            finds=(("vault token s.Q8zR3lMn0PX7vB2kT9wY4cH6", "s.Q8zR3lMn0PX7vB2kT9wY4cH6"),),
            keeps=("vault token s.xxxxxxxxxxxxxxxxxxxxxxxx",),
        ),
        Rule(
            "Teams / Office 365 webhook",
            "TOKEN",
            re.compile(
                r"(?:outlook\.office(?:365)?\.com/webhook|\.webhook\.office\.com/webhookb2)/(?P<secret>[^\s\"'<>]{20,})",
                re.I,
            ),
            finds=(
                (
                    "https://corp.webhook.office.com/webhookb2/7f3a9c2b-1e4f@6a0d/IncomingWebhook/8d7f",
                    "7f3a9c2b-1e4f@6a0d/IncomingWebhook/8d7f",
                ),
            ),
            keeps=("https://corp.webhook.office.com/webhookb2/",),
        ),
        Rule(
            "Telegram bot URL",
            "TOKEN",
            re.compile(r"api\.telegram\.org/(?:file/)?bot(?P<secret>\d{6,12}:[A-Za-z0-9_\-]{30,})"),
            finds=(
                (
                    "https://api.telegram.org/bot123456789:AAHq7Lp4Wg7yR8x2Lq9ZkW4mN7vB3cT6yH1/getMe",
                    "123456789:AAHq7Lp4Wg7yR8x2Lq9ZkW4mN7vB3cT6yH1",
                ),
            ),
            keeps=("https://api.telegram.org/bot<token>/getMe",),
        ),
        # --- login and password as a pair in prose (not inside a link: `…/UserRun/26665212` is a path)
        Rule(
            "login X / Y",
            P,
            re.compile(
                r"(?<![/.])\b(?:login|logon|credentials?|creds|account|user(?:name)?|wi-?fi|ssid|wlan)(?:\s*(?:is|are|:|=)\s*|\s+)"
                r"[\"']?[^\s/\"']{1,64}[\"']?\s*/\s*[\"']?(?P<secret>[^\s/\"']+)(?=[\s\"',;.)]|$)",
                re.I,
            ),
            _pair_password,
            finds=(("credentials are bob / Zq7!Lp4x", "Zq7!Lp4x"),),
            keeps=("login admin / password",),
        ),
        # --- JSON Web Keys: the private members of RSA/EC/OKP keys (d, p, q, dp, dq, qi) and a symmetric key (k),
        # RFC 7518 §6.3.2 and §6.4; the public members (n, e, x, y) stay
        Rule(
            "JWK private member",
            "PRIVATE_KEY",
            re.compile(r"[\"'](?:d|p|q|dp|dq|qi|k)[\"']\s*:\s*[\"'](?P<secret>[A-Za-z0-9_\-]{22,})={0,2}[\"']"),
            _jwk_member,
            finds=(('{"kty": "oct", "k": "Zq7Lp4Wg7yR8x2Lq9ZkW4mN7vB3c"}', "Zq7Lp4Wg7yR8x2Lq9ZkW4mN7vB3c"),),
            keeps=('{"kty": "RSA", "n": "Zq7Lp4Wg7yR8x2Lq9ZkW4mN7vB3c"}',),
        ),
    ),
    source="chat_rules",
)


CHAT_SHAPES = RuleTable(
    (
        # each needs a value that can stand alone (strong)
        Rule(
            "changed my password to X",
            P,
            re.compile(
                rf"\b(?:changed?|set|reset|updated?)\s+(?:(?:my|the|our|his|her|their|its)\s+)?(?:[\w\-]+\s+)?{SECRET_WORD}\s+"
                r"(?:back\s+)?to\s+[\"'“(]?(?P<secret>[^\s\"'”()]+)",
                re.I,
            ),
            strong,
            finds=(("I changed my password to Zq7Lp4Wg", "Zq7Lp4Wg"),),
            keeps=("reset the password to default",),
        ),
        Rule(
            "password?? X / password -> X",
            P,
            re.compile(rf"\b{SECRET_WORD}\s*(?:[?!]+|\s-{{1,2}}|–|—|->|=>)\s*[\"'“(]?(?P<secret>[^\s\"'”()]+)", re.I),
            strong,
            finds=(("password?? Zq7Lp4Wg", "Zq7Lp4Wg"), ("Password - Zq7Lp4Wg", "Zq7Lp4Wg")),
            keeps=("password? what password",),
        ),
        Rule(
            "password (X)",
            P,
            re.compile(rf"\b{SECRET_WORD}\s*\((?P<secret>[^\s()]+)\)", re.I),
            strong,
            finds=(("the password (Zq7Lp4Wg) is rejected", "Zq7Lp4Wg"),),
            keeps=("the password (again) is rejected",),
        ),
        Rule(
            "creds: user X",
            P,
            re.compile(
                r"\b(?:creds|credentials|login|log\s?in|logon|sign\s?in)\b\s*(?:are|is|:|with|as)?\s*:?\s*"
                r"(?!(?:error|errors|failed|fails|failure|issue|issues|problem|loop|screen|page|prompt|code|attempt|window|popup|"
                r"timeout|stuck|broken|again|not|keeps|hangs)\b)[\w.\-\\@]+(?::|\s+)"
                r"(?P<secret>[^\s\"',;]+)\s*$",
                re.I,
            ),
            strong,
            finds=(("creds: jdoe Hx8!kq22", "Hx8!kq22"),),
            keeps=("login screen hangs forever",),
        ),
        Rule(
            "login with user:X",
            P,
            re.compile(
                r"\b(?:login|log\s?in|logon|sign\s?in)\s+(?:with|as|using)\s+[\w.\-\\@]+:(?P<secret>[^\s\"',;]+)", re.I
            ),
            strong,
            finds=(("login with admin:Hx8!kq22 fails", "Hx8!kq22"),),
            keeps=("login with admin:password fails",),
        ),
        # "pass" alone is a verb elsewhere
        Rule(
            "my pass is X",
            P,
            re.compile(
                r"\b(?:my|the|your|our|new|old|wifi|wi-fi)\s+pass\s+(?:is|was|=|:)\s*[\"'“]?(?P<secret>[^\s\"'”]+)",
                re.I,
            ),
            strong,
            finds=(("my pass is Zq7Lp4Wg", "Zq7Lp4Wg"),),
            keeps=("my pass is expired",),
        ),
        # --- Wi-Fi keys and shared secrets
        Rule(
            "wifi key X",
            P,
            re.compile(
                r"\b(?:wi-?fi|wireless|wpa[23]?|wlan|network|wep|psk)\s+(?:security\s+)?(?:key|passphrase|code)"
                r"(?:\s+for\s+(?:the\s+)?[\w\-]+(?:\s+[\w\-]+)?\s+(?:is|was))?\s*(?:is|was|=|:)?\s*:?\s*"
                r"[\"'“]?(?P<secret>[^\s\"'”]+)",
                re.I,
            ),
            strong,
            finds=(("WPA2 key Zq7Lp4Wg", "Zq7Lp4Wg"), ("wifi key: Zq7Lp4Wg", "Zq7Lp4Wg")),
            keeps=("the wifi key is missing",),
        ),
        Rule(
            "key for the wifi is X",
            P,
            re.compile(
                r"\b(?:key|passphrase|code|secret)\s+(?:for|to|of)\s+(?:the\s+)?(?:[\w\-]+\s+)?(?:wi-?fi|wireless|network|wlan|router|"
                r"radius|tacacs|vpn|server|share)\b(?:\s+[\w\-]+)?\s*(?:is|was|=|:)\s*:?\s*[\"'“]?(?P<secret>[^\s\"'”]+)",
                re.I,
            ),
            strong,
            finds=(("the key for the wifi is Zq7Lp4Wg", "Zq7Lp4Wg"),),
            keeps=("the key for the wifi is on the router",),
        ),
        Rule(
            "shared secret X",
            P,
            re.compile(r"\bshared\s+secret\b[^\n:=]{0,40}?(?:is|was|=|:)\s*:?\s*[\"'“]?(?P<secret>[^\s\"'”]+)", re.I),
            strong,
            finds=(("shared secret for the radius server: Zq7Lp4Wg", "Zq7Lp4Wg"),),
            keeps=("the shared secret is wrong",),
        ),
        # --- "it" and "the new one" once the message is about a password
        Rule(
            "password … the current one is X",
            P,
            re.compile(
                rf"\b{SECRET_WORD}\b[^\n]{{0,120}}?\b(?:(?:current|new|old|temporary|temp|right|correct)\s+one|it)\s*"
                r"(?:is|was|'s|’s|would be|should be|=|:)\s*:?\s*[\"'“]?(?P<secret>[^\s\"'”]+)",
                re.I,
            ),
            strong,
            finds=(("I reset my password and the new one is Zq7Lp4Wg", "Zq7Lp4Wg"),),
            keeps=("I reset my password and it is fine now",),
        ),
        Rule(
            "the new one is X",
            P,
            re.compile(
                r"\b(?:current|new|old|temporary)\s+one\s+(?:is|was|would be)\s*:?\s*[\"'“]?(?P<secret>[^\s\"'”]+)",
                re.I,
            ),
            strong,
            finds=(("the new one is Zq7Lp4Wg", "Zq7Lp4Wg"),),
            keeps=("the new one is better",),
        ),
        Rule(
            "u: X p: Y",
            P,
            re.compile(
                r"\b(?:u|usr|user(?:name)?|login|id)\s*[:=]?\s*[\w.\-\\@]{2,64}[,;]?\s+(?:passwd|pass|pwd|pw|p)\b"
                r"\s*[:=]?\s*[\"'“]?(?P<secret>[^\s\"'”]+)",
                re.I,
            ),
            value_ok_without_connector,
            finds=(("u: jdoe p: Zq7!Lp4x", "Zq7!Lp4x"), ("vpn: user jdoe, pass Zq7!Lp4x", "Zq7!Lp4x")),
            keeps=("user jdoe pass the test",),
        ),
        # --- PINs and card codes
        Rule(
            "PIN … mine is N",
            P,
            re.compile(
                r"\bpin\b[^\n]{0,60}?\b(?:mine|it|that|the one)\s*(?:is|was|'s|’s)\s*:?\s*(?P<secret>\d{4,8})\b", re.I
            ),
            finds=(("bitlocker asks for a PIN, mine is 482916", "482916"),),
            keeps=("bitlocker asks for a PIN, mine is lost",),
        ),
        Rule(
            "card security code",
            "SECRET",
            re.compile(r"\b(?:cvv2?|cvc2?|csc|card\s+security\s+code)\s*(?:is|:|=|-)?\s*(?P<secret>\d{3,4})\b", re.I),
            finds=(("CVC: 0421", "0421"), ("cvv 123", "123")),
            keeps=("where is the CVV on the card",),
        ),
    ),
    source="chat_rules",
)


LOGIN_CALLS = RuleTable(
    (
        # a password as the second argument of a login call: `smtp.login('bob@corp', 'S3cret')`, `auth=('bob', 'S3cret')`,
        # `WiFi.begin(ssid, "S3cret")`
        Rule(
            "login(user, password)",
            P,
            re.compile(
                r"(?i:(?<![\w.])[\w.]*(?:login|logon|auth|credentials?|signin|sign_in)|wifi\.begin)\s*(?:=\s*)?[(\[]\s*"
                r"(?:[\"'][^\"'\n]{1,80}[\"']|[A-Za-z_][\w.]{0,60})\s*,\s*[\"'](?P<secret>[^\"'\n]{3,100})[\"']"
            ),
            value_ok_without_connector,
            finds=(
                ("smtp.login('bob@corp.example', 'Zq7!Lp4x')", "Zq7!Lp4x"),
                ("auth=('bob', 'Zq7!Lp4x')", "Zq7!Lp4x"),
                ('WiFi.begin(ssid, "Zq7!Lp4x");', "Zq7!Lp4x"),
            ),
            keeps=("smtp.login(user, password)", "smtp.login('bob', '')"),
        ),
    ),
    source="chat_rules",
)
