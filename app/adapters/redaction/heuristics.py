"""Small, explainable tests on a candidate value: is it random enough, or obviously not a real secret?

Used to keep documentation examples, templates and code references ("<your token>", "${DB_PASS}",
"os.getenv(...)", "AKIA…EXAMPLE", "xxxxxxxx") from being redacted as secrets, and to require
randomness from values that only a keyword points at.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from app.adapters.redaction.code_shapes import is_camel_case_name, is_wordlike

_TEMPLATE = re.compile(
    r"^(?:<[^<>]{1,60}>|\$\{[^}]{1,60}\}|\{\{[^}]{1,60}\}\}|%\(?[A-Za-z_]{1,40}\)?s?%?|\$[A-Za-z_][A-Za-z0-9_]{1,60}"
    r"|%[A-Za-z_]{2,40}%|@[A-Za-z_][\w.\-]{1,40}@|\[[A-Za-z _\-]{2,40}\]"
    r"|\{[a-z_][a-z0-9_.]{0,40}(?:![rsa])?(?::[^{}]{0,20})?\})$"
)  # … and a format field `{password}`
_MASKED = re.compile(
    r"^[*x•#.\-_?]{3,}$|\*{3,}|x{6,}|X{6,}|•{3,}|[:=]x{4,}$", re.I
)  # `****`, `xxxxxx`, `•••`, `VAL:xxxx`
_CODE_REFERENCE = re.compile(
    r"^(?:os\.|process\.env|getenv\b|System\.getenv|ENV\[|env\[|config\.|settings\.|self\.|this\.|request\.|"
    r"args\.|params\.|props\.|ctx\.|secrets\.|vault\.|Base64\.|base64\.|new\s)"
    r"|^(?:None|null|nil|undefined|true|false|True|False)$"
    r"|^[A-Za-z_][\w.]*\("
    r"|^[A-Za-z_][\w.]*\[:?[\"']?[A-Za-z_][\w\-]*[\"']?\]?$"  # creds["password"], config[:token]
    r"|^[A-Za-z_][\w.]*[\[(]$"
)  # the same, cut at the quote
_PLAIN_WORDS = frozenset(
    """
string str int char bool boolean none null nil undefined true false empty required optional
password passwd pwd secret token key value example sample test dummy placeholder changeme
your yours here there this that hidden redacted masked unknown na n/a tbd todo
""".split()
)
_SEQUENCES = ("0123456789", "abcdefghijklmnopqrstuvwxyz", "qwertyuiop", "asdfghjkl", "zxcvbnm")


def shannon_entropy(value: str) -> float:
    """Bits per character of `value` over its own alphabet."""
    if not value:
        return 0.0
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def char_classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


# `!Ref DbPassword`, `!Sub …`, `!!python/name:…`: a YAML tag (CloudFormation function, loader hook)
_YAML_TAG = re.compile(
    r"^(?:!![a-z]+(?:/[\w:.]+)?|!(?:Ref|Sub|GetAtt|Join|Select|If|ImportValue|FindInMap|Base64|"
    r"Split|GetAZs|Cidr|Equals|Not|And|Or|Condition|Transform|vault|secret|env|include|reference|"
    r"input))$"
)
# `YOUR_API_KEY`, `your-token-here`, `INSERT_KEY_HERE`, `<enter password>`: where the reader puts a value
_FILL_IN = re.compile(
    r"^(?:your|insert|enter|replace|put)[_\- ]|[_\- ]here$|^(?:YOUR|INSERT|ENTER|REPLACE)[A-Z_]*$"
    r"|^(?:change|replace|fill|set|update)[_\- ]?(?:me|it|this)$",
    re.I,
)


def is_template(value: str) -> bool:
    """`<your password>`, `${DB_PASS}`, `{{ token }}`, `{password}`, `$PASSWORD`, `%(pw)s`, `!Ref DbPassword`,
    `YOUR_API_KEY`: a placeholder, not a value."""
    value = value.strip("\"'`")
    return bool(_TEMPLATE.match(value) or _YAML_TAG.match(value) or _FILL_IN.search(value)) or value.startswith(
        ("${", "{{", "%(", "$(", "<%", "#{")
    )


def is_masked(value: str) -> bool:
    """`********`, `xxxxxx`, `•••`: already hidden."""
    return bool(_MASKED.search(value))


# `user.password`, `settings.SECRET_KEY`, `cfg.api_token`: an attribute that holds the secret
_SECRET_ATTRIBUTE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.\w*(?i:password|passwd|pwd|secret|token|key)\w*$")
# `projects/123/secrets/db-password/versions/latest`: a resource name (lower-case segments), not a value
_RESOURCE_PATH = re.compile(r"^[a-z0-9][a-z0-9._\-]*(?:/[a-z0-9][a-z0-9._\-]*){2,}$")


# `vault:secret/data/db#password`, `op://it/db/password`, `arn:aws:secretsmanager:…`: where a secret store keeps it
_SECRET_STORE = re.compile(
    r"^(?:vault|sm|ssm|secretsmanager|secretmanager|gsm|gcpsm|awssm|op|doppler|azkv|keyvault|akv|"
    r"kv|sops|bws|infisical|conjur|arn):(?://?)?[\w\-./#:]+$",
    re.I,
)
# an OpenSSH public key (`ssh-ed25519 AAAAC3…`): meant to be shared
SSH_KEY_TYPE = r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com)"
_PUBLIC_KEY = re.compile(rf"^{SSH_KEY_TYPE}\s+AAAA")


def is_code_reference(value: str) -> bool:
    """`os.getenv("X")`, `config.password`, `None`, `vault:secret/db#pw`: code or a store reference that
    fetches a secret, not the secret; an SSH public key is not one either."""
    value = value.strip("\"'`")
    return bool(
        _CODE_REFERENCE.match(value)
        or _SECRET_ATTRIBUTE.match(value)
        or _RESOURCE_PATH.match(value)
        or _SECRET_STORE.match(value)
        or _PUBLIC_KEY.match(value)
    )


# `/run/secrets/db_password`, `~/.ssh/id_ed25519`, `C:\keys\server.pfx`: where a secret is kept, not the secret
_FILE_PATH = re.compile(r"^(?:/|\./|\.\./|~/|[A-Za-z]:\\|\\\\)(?:[\w.\-]+[/\\]){1,}[\w.\-]+$")


def is_file_path(value: str) -> bool:
    return bool(_FILE_PATH.match(value.strip("\"'`")))


def is_plain_word(value: str) -> bool:
    return value.strip("\"'`").lower() in _PLAIN_WORDS


# `$6$salt$hash`, `$2b$12$…`: a password hash in crypt(3) format is what a system stores instead of
# the password; `ENC[…]`, `$ANSIBLE_VAULT;…`, `{cipher}…`, `vault:v1:…`: a value encrypted at rest.
_HASH_OR_ENCRYPTED = re.compile(r"^(?:\$[0-9a-z]{1,6}\$|ENC\[|!vault\b|\$ANSIBLE_VAULT;|\{cipher\}|vault:v\d+:)")
# `peace_for_ukraine`, `db_password_prod`: lower-case words joined by underscores name something
_IDENTIFIER = re.compile(r"^[a-z]+(?:_[a-z]+)+$")


def is_hash_or_encrypted(value: str) -> bool:
    """A password hash or an encrypted value: safe to store, not the secret itself."""
    return bool(_HASH_OR_ENCRYPTED.match(value.strip("\"'`")))


def is_identifier(value: str) -> bool:
    """A snake_case identifier made only of letters (a variable or setting name, not a value)."""
    return bool(_IDENTIFIER.match(value.strip("\"'`")))


def _has_run(value: str, length: int) -> bool:
    """A run of `length` ascending or descending characters (1234567, abcdef, 76543210)."""
    low = value.lower()
    for seq in _SEQUENCES:
        for i in range(len(seq) - length + 1):
            part = seq[i : i + length]
            if part in low or part[::-1] in low:
                return True
    return False


def _has_repeat(value: str, length: int) -> bool:
    return bool(re.search(r"(.)\1{%d,}" % (length - 1), value))


_DOC_MARKERS = ("example", "sample", "dummy", "fake", "placeholder")


def is_documentation_value(value: str) -> bool:
    """`example_password1`, `dummy-token-123`, `fake-secret`: a value written for documentation or tests."""
    low = value.lower()
    return any(marker in low for marker in _DOC_MARKERS)


def looks_fake(value: str) -> bool:
    """A documentation/test token rather than a real one: contains 'EXAMPLE', 'sample', a long
    ascending/descending run (123456, abcdef) or a long repeat (xxxxxx, 000000), or is barely random."""
    low = value.lower()
    if is_documentation_value(value) or "your_" in low or "your-" in low:
        return True
    if _has_run(value, 6) or _has_repeat(value, 6):
        return True
    # a machine-made token of 20+ characters is far from uniform; below ~2.5 bits/char it is a pattern
    return len(value) >= 20 and shannon_entropy(value) < 2.5


def looks_random(value: str, *, min_length: int = 16, min_entropy: float = 3.2) -> bool:
    """Long, mixed and high-entropy enough to be a key or token even without a known prefix, and not
    made of words or capitalised humps (`Qwen2ForTokenClassification`, `Gemma3nMultimodalEmbedder` are class
    names)."""
    return (
        len(value) >= min_length
        and shannon_entropy(value) >= min_entropy
        and char_classes(value) >= 2
        and any(c.isdigit() for c in value)
        and not looks_fake(value)
        and not is_wordlike(value)
        and not is_camel_case_name(value)
    )
