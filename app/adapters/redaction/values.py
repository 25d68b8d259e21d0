"""What a secret's name and value look like: the vocabulary shared by every rule.

`key_name_kind("DB_PASSWORD")` -> PASSWORD, `names_a_setting("token_lifetime")` -> True; a value after a
secret's name is a secret unless it is an ordinary word, a template, a mask, code, a file path, a link…
(`value_looks_like_secret`); a key or token must also look like one (`key_value_ok`).
"""

from __future__ import annotations

import re

from app.adapters.redaction.code_shapes import NAME_PARTS, is_count, is_wordlike
from app.adapters.redaction.heuristics import (
    is_code_reference,
    is_documentation_value,
    is_file_path,
    is_hash_or_encrypted,
    is_identifier,
    is_masked,
    is_plain_word,
    is_template,
    looks_fake,
    looks_random,
)

# the words for a password in a sentence, in the languages of our users
SECRET_WORD = (
    r"(?:password|passwort|passwd|passcode|passphrase|pass\s?word|pwd|pw|pin(?:\s?(?:code|number))?|"
    r"mot\s+de\s+passe|mdp|contrase[ñn]a|clave|kennwort|wachtwoord|senha|salasana|lösenord|passord|"
    r"adgangskode|has[łl]o|heslo|jelszó|"
    # the typos people make in a hurry
    r"passowrd|passwrod|passwrd|pasword|paswrd|paswd|pasw|pswd|psw)"
)

# Words that follow "password" in ordinary sentences and are not the password itself.
NOT_A_SECRET = (
    frozenset(
        "is was are be been expired expires expiring expiry wrong incorrect correct invalid not no reset resets "
        "change changed changes changing locked lock unlock working works work doesnt doesn't didnt didn't won't wont "
        "keeps keep isnt isn't still too the a an my your our their this that it for to on in at of with from "
        "and or but if when policy portal page field box prompt manager managers requirement requirements rules "
        "rule length history hint hints again anymore please help issue issues problem problems needs need "
        "required case sensitive being getting has have had will would should can could any every new old "
        "current same different temporary temp one expire set stopped fails failed failing fail screen login "
        "prompt via by over through who what why how where which also just now then so did does do i me we you "
        "they he she them us reminder reminders recovery protected protection manager. strength strong weak "
        "complexity update updated updating sync synced entry entries dialog window popup pop-up request requests "
        "requested sent expiration age rotation counter attempts attempt tries retry retries generator vault "
        "store stored saved save forgot forgotten lost missing blank empty hidden masked redacted there here "
        "number code digits digit characters chars letters bearer basic digest negotiate ntlm token "
        "fine ok okay good bad weak simple easy short long great gone broken blocked compromised leaked stolen known "
        "unknown disabled enabled secure insecure safe unsafe stale outdated obsolete valid accepted rejected denied "
        "usual ask see check use call contact via same must should can cannot could would will needs need has have "
        "differ differs contain contains used matched entered provided given supplied typed shown displayed generated "
        "encrypted hashed verified checked needed incorrectly correctly easier harder longer shorter stronger weaker safer better worse simpler "
        "minimum maximum min max at least".split()
    )
    | frozenset(
        # closed-class English words and irregular verb forms: "my password is about to expire", "is less than 90
        # days old", "is written on the router", "password: whatever you chose"
        "about above across after against along among around as before behind below beneath beside between beyond "
        "during except inside into like near off onto out outside since than toward towards under until unlike upon "
        "within without whatever whichever whoever whenever wherever either neither both each few many more most much "
        "other another such own some none nothing something anything everything almost already always definitely "
        "probably possibly maybe perhaps really actually apparently currently supposedly usually sometimes never ever "
        "only even quite rather very less somehow somewhere literally basically "
        "written greyed grayed printed taken given shown known kept sent set put left made done gone seen "
        "leave leaving remains stays seems looks appears isn't aren't wasn't weren't hasn't haven't "
        "null nil true false undefined two three four five six seven eight nine ten eleven twelve".split()
    )
    | frozenset(
        # what a password is like, in the languages whose password words the redactor knows (values.SECRET_WORD):
        # "Passwort ist abgelaufen", "mot de passe est expiré", "la password è scaduta", "lösenord: utgånget"
        # German
        "abgelaufen falsch gesperrt nicht korrekt richtig ungültig gültig unbekannt vergessen geändert zurückgesetzt "
        "leer zu kurz lang neu alt gleich anders zurück noch immer schon "
        # French
        "expiré expirée expirés bloqué bloquée invalide incorrect incorrecte oublié oubliée refusé refusée faux fausse "
        "correcte changé changée trop toujours pas encore déjà perdu perdue vide "
        # Italian
        "scaduta scaduto sbagliata sbagliato bloccata bloccato stata stato errata errato cambiata cambiato corretta "
        "corretto troppo dimenticata dimenticato ancora già sempre non scadenza vuota "
        # Spanish
        "incorrecta incorrecto inválida inválido demasiado caducada caducado bloqueada bloqueado olvidada olvidado "
        "correcta correcto cambiada cambiado expirada expirado todavía ya siempre muy vacía "
        # Portuguese
        "incorreta incorreto errada errado muito esquecida esquecido inválida recusada recusado ainda "
        # Swedish, Norwegian, Danish
        "utgånget utgått utgången fel låst glömt glömd ogiltigt ogiltig rätt för inte redan utløpt udløbet feil "
        "forkert glemt ugyldig ikke "
        # Dutch, Polish, Czech
        "verlopen onjuist fout geblokkeerd vergeten ongeldig niet wygasło nieprawidłowe błędne zablokowane "
        "nieważne nie špatně neplatné zablokované".split()
    )
)


def clean(value: str) -> str:
    return value.strip(".,;:!?\"'()[]{}<>` \t")


_ATTRIBUTE = re.compile(r"^[A-Za-z_][\w\-]{0,40}=[\"']?$")
_LINK = re.compile(r"^[a-z][a-z0-9+.\-]{1,20}://[^@\s]*$", re.I)
_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")
_TRAILING_ESCAPES = re.compile(r"(?:\\[rnt])+$")
_HTML_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|apos|nbsp|#\d{1,5});")


def value_looks_like_secret(value: str) -> bool:
    """A value after a secret keyword: not an ordinary word, template, mask or code reference."""
    value = _HTML_ENTITY.split(value)[0] or value
    value = _TRAILING_ESCAPES.sub("", value) or value  # `{encoded_str}\r\n` inside a string literal
    v = clean(value)
    if not v or v.lower() in NOT_A_SECRET or v.startswith("[REDACTED") or v.startswith("REDACTED"):
        return False
    if _LINK.match(v) or _COLOUR.match(v):
        return False  # "credentials: https://docs.example/auth.html" (where to read about it), a colour "#C46C6C"
    if value.lstrip("\"'`“").startswith("<") or _ATTRIBUTE.match(value.strip()) or value.lstrip().startswith("`"):
        return False  # "password: <PostgreSQL PW>" (a placeholder), `<password name="x">` (an attribute), `cat …`
    return not (
        is_template(value)
        or is_masked(v)
        or is_code_reference(value)
        or is_plain_word(v)
        or is_hash_or_encrypted(value)
        or is_identifier(v)
        or is_file_path(v)
        or is_documentation_value(v)
        or _names_a_secret(v)
    )


def _names_a_secret(value: str) -> bool:
    """`accessToken`, `mySecret`, `my-secret-pw`: a variable or placeholder named after a secret (letters
    only), not a value."""
    return not any(c.isdigit() for c in value) and len(value) <= 40 and key_name_kind(value) is not None


FILE_NAME = re.compile(r"^[\w\-]+\.[a-z]{1,5}$")
# `postgres://user:pass@localhost/db` in documentation: the words stand for a password
URL_PLACEHOLDERS = frozenset(
    {
        "pass",
        "password",
        "passwd",
        "pwd",
        "pw",
        "secret",
        "user",
        "username",
        "redacted",
        "passphrase",
        "token",
        "key",
        "apikey",
    }
)


def value_ok_without_connector(value: str) -> bool:
    """ "password abc123": without 'is' or ':', only a token that is not a plain word counts."""
    v = clean(value)
    if value[:1] in "{([<" or FILE_NAME.match(v):
        return False  # "password {0x48, …}", "password (required)", `grep password notes.txt`: not a value
    return value_looks_like_secret(value) and len(v) >= 3 and bool(re.search(r"[\d\W_]", v))


# --- key names in assignments: DB_PASSWORD=…, "apiKey": "…", client-secret: … ----------------------
_PASSWORD_PART = re.compile(
    r"pa?s+w(?:o?r)?s?d|pw|pwd|pass|passw|passwort|passphrase|passcode|pin|contrasena|mdp|"
    r"motdepasse|kennwort|wachtwoord|senha|psk|requirepass|masterauth|authtok"
)
_PASSWORD_INSIDE = re.compile(r"pa?s+wo?r?d|passwd|pwd$|pass$")
_NOT_PASSWORD_WORDS = frozenset(
    {
        "bypass",
        "compass",
        "surpass",
        "overpass",
        "underpass",
        "trespass",
        "passport",
        "passenger",
        "passive",
        "spin",
        "pinned",
        "mapping",
        "shipping",
        "pinterest",
        "bandpass",
        "lowpass",
        "highpass",
        "allpass",
        "multipass",
        "onepass",
    }
)
_KEY_PREFIXES = frozenset(
    {
        "api",
        "access",
        "private",
        "secret",
        "client",
        "account",
        "master",
        "encryption",
        "signing",
        "auth",
        "service",
        "db",
        "database",
        "app",
        "consumer",
        "shared",
        "storage",
        "subscription",
        "x",
        "license",
        "licence",
        "product",
        "session",
        "ssh",
        "aes",
        "hmac",
        "crypt",
        "cipher",
        "jwt",
        "webhook",
        "recovery",
        "bitlocker",
    }
)
WEAK_SUFFIXES = frozenset(
    {
        "id",
        "ids",
        "length",
        "len",
        "policy",
        "policies",
        "file",
        "path",
        "url",
        "uri",
        "field",
        "name",
        "mask",
        "hint",
        "expires",
        "expiry",
        "expiration",
        "timeout",
        "type",
        "reset",
        "label",
        "required",
        "min",
        "max",
        "regex",
        "pattern",
        "prompt",
        "enabled",
        "count",
        "endpoint",
        "header",
        "param",
        "mode",
        "format",
        "size",
        "age",
        "ttl",
        "rotation",
        "changed",
        "updated",
        "created",
        "at",
        "validity",
        "lifetime",
        "encoding",
        "placeholder",
        "input",
        "form",
        "attempts",
        "retries",
        "strength",
        "complexity",
        "confirmation",
        "manager",
        "storage",
        "provider",
        "location",
        "dir",
        "env",
        "var",
        "hash",
        "hashed",
        "algorithm",
        "algo",
        "version",
        "ver",
        "encryption",
        "authentication",
        "method",
        "methods",
        "scheme",
        "backend",
        "helper",
        "program",
        "handler",
        "set",
        "last",
        "date",
        "time",
        "timestamp",
        "ref",
        "reference",
        # a digest of the secret, not the secret: password_sha1, token_md5
        "md5",
        "sha",
        "sha1",
        "sha256",
        "sha512",
        "digest",
        "checksum",
        "fingerprint",
        "thumbprint",
        # a file name, not a key: "skipped kb/password-reset.md: …" in a log line
        "md",
        "pdf",
        "txt",
        "html",
        "htm",
        "doc",
        "docx",
        "odt",
        "rtf",
        "csv",
        "xls",
        "xlsx",
        "ppt",
        "pptx",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "svg",
        "log",
    }
)
_PUBLIC_BY_DESIGN = frozenset(
    {
        "csrf",
        "xsrf",
        "authenticity",
        "antiforgery",
        "csrfmiddlewaretoken",
        "primary",
        "foreign",
        "public",
        "publishable",
    }
)
_COUNT_PREFIXES = frozenset({"max", "min", "num", "n", "total", "count"})


def names_a_setting(name: str) -> bool:
    """`PasswordPolicy`, `token_lifetime`, `password_encryption`: a setting about a secret, not one."""
    parts = [p for p in NAME_PARTS.findall(name) if not p.isdigit()]
    return bool(parts) and parts[-1].lower() in WEAK_SUFFIXES


def names_a_public_value(name: str) -> bool:
    """`csrf_token`, `authenticity_token`, `publicKey`, `primary_key`: a value sent to every visitor, or a row's id."""
    return bool(_PUBLIC_BY_DESIGN.intersection(p.lower() for p in NAME_PARTS.findall(name)))


def key_name_kind(name: str) -> str | None:
    """The secret kind a key name announces (DB_PASSWORD -> PASSWORD, apiKey -> API_KEY), or None."""
    name = name.replace("ñ", "n").replace("Ñ", "N")
    parts = [p.lower() for p in NAME_PARTS.findall(name)]
    words = [p for p in parts if not p.isdigit()]
    if not words or words[-1] in WEAK_SUFFIXES or (len(words) > 1 and words[0] in _COUNT_PREFIXES):
        return None  # `token_id`, `max_input_tokens`: about a secret, not one
    if _PUBLIC_BY_DESIGN.intersection(words):
        return None  # `csrf_token`, `authenticity_token`, `primaryKey`: sent to every visitor, or a row's id
    for i, part in enumerate(parts):
        if part in _NOT_PASSWORD_WORDS:
            continue
        if (
            _PASSWORD_PART.fullmatch(part)
            or (len(part) > 6 and _PASSWORD_INSIDE.search(part))
            or (len(part) >= 4 and part.endswith(("pw", "pwd")))
        ):
            return "PASSWORD"  # DB_PASSWORD, PSSWRD, MYSQLPASS, bindpw, rootpw
        if part in {"token", "tokens", "authorization", "bearer"} or (len(part) > 6 and part.endswith("token")):
            return "TOKEN"
        if (
            part == "apikey"
            or (part == "key" and i > 0 and parts[i - 1] in _KEY_PREFIXES)
            or any(part == prefix + "key" for prefix in _KEY_PREFIXES)
        ):
            return "API_KEY"
        if part in {"secret", "secrets", "credential", "credentials", "creds"} or (
            len(part) > 7 and part.endswith("secret")
        ):
            return "SECRET"
    return None


_SNAKE_NAME = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+){2,}$")  # `qwen2_5_omni`: a name, however many digits
_NAME_PART = re.compile(r"^[a-z]{2,}\d*$|^\d+$")


def is_snake_name(value: str) -> bool:
    """`qwen2_5_omni_thinker` is a name (most parts letters, letters then digits, or a number; none random);
    `sgp_7e78…_04d1…` (parts of 16+ random characters) and `a8f3_k2m9_x7q1` (letters and digits mixed) are tokens."""
    parts = value.split("_")
    return (
        bool(_SNAKE_NAME.match(value))
        and not any(looks_random(part) for part in parts)
        and 2 * sum(bool(_NAME_PART.match(part)) for part in parts) >= len(parts)
    )


def key_value_ok(value: str) -> bool:
    """A key, token or secret (not a password) is neither lower-case words without digits (`bearer`,
    `db-secret`: names), nor words at all (`TokenClassification`), nor spaced, nor a count, nor a pattern
    (`0000…`, `abcdef…`, `…EXAMPLE`); a typed password may be any of these."""
    v = clean(value)
    letters = v.replace("-", "").replace("_", "").replace(".", "")
    if any(c.isspace() for c in v) or is_count(v) or is_wordlike(v) or is_snake_name(v):
        return False  # `"bold #A83401"`, `max_input_tokens = 272000`, `prompt_cache_key = "tenant:acme:v1"`
    return not (letters.isalpha() and letters.islower()) and not looks_fake(v)
