"""Names (PERSON) are people, not presence states, UI words or other languages' nouns: the names model's
spans are judged word by word (app/adapters/redaction/name_words.py), through the real spaCy model."""

from pathlib import Path

import pytest

from app.adapters.redaction import PolicyRedactor, RedactionPolicy, build_engine
from app.adapters.redaction.name_words import load_name_words

SENTENCES = Path(__file__).resolve().parent.parent / "fixtures" / "names" / "it_sentences.txt"


def marked_sentences():
    """(language, text, names) from the fixture: names are written [[like this]]."""
    rows = []
    for line in SENTENCES.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            language, marked = line.split("\t", 1)
            names = [part.split("]]")[0] for part in marked.split("[[")[1:]]
            rows.append(pytest.param(language, marked.replace("[[", "").replace("]]", ""), names, id=marked[:50]))
    return rows


@pytest.fixture(scope="module")
def names_redactor():
    policy = RedactionPolicy(memory=frozenset({"PERSON"}))
    return PolicyRedactor(build_engine(policy), {"PERSON"})


@pytest.fixture(scope="module")
def words():
    return load_name_words()


@pytest.mark.slow
@pytest.mark.parametrize("language, text, names", marked_sentences())
def test_only_the_marked_people_in_help_desk_sentences_become_person_placeholders(
    names_redactor, language, text, names
):
    redacted = names_redactor.redact(text).text
    for name in names:
        assert name not in redacted, redacted
    expected = text
    for n, name in enumerate(dict.fromkeys(names), start=1):
        expected = expected.replace(name, f"[REDACTED:PERSON_{n}]")
    assert redacted == expected


@pytest.mark.parametrize(
    "text, language",
    [
        ("Der Drucker im zweiten Stock druckt nicht mehr", "de"),
        ("Le serveur ne répond plus depuis ce matin", "fr"),
        ("La impresora no imprime desde ayer", "es"),
        ("Drukarka na drugim piętrze nie działa", "pl"),
        ("Skrivaren på tredje våningen fungerar inte", "sv"),
        ("My Teams status is stuck on Away", "en"),
        ("Outlook VPN MFA", "en"),  # nothing to tell by: English
    ],
)
def test_the_message_language_is_the_one_whose_frequent_words_it_uses(words, text, language):
    assert words.language(text) == language


def test_a_texts_language_is_remembered_by_hash_and_read_again_the_same(words):
    """The remembered language is the one read afresh, for every sentence of the fixture, asked once or again; the
    memo holds hashes, not texts."""
    texts = [param.values[1] for param in marked_sentences()] + ["", "1234", "Grüße Hans Müller"]
    for text in texts:
        assert words.language(text) == words._language(text) == words.language(text), text
    assert words._recent and all(isinstance(key, bytes) for key in words._recent)


@pytest.mark.parametrize(
    "word, language, name_like",
    [
        ("Away", "en", False),
        ("Busy", "en", False),
        ("Available", "en", False),
        ("Offline", "en", False),
        ("Drucker", "de", False),
        ("Verbindung", "de", False),
        ("Der", "de", False),
        ("Sie", "de", False),
        ("Hans", "de", True),
        ("Müller", "de", True),
        ("Alice", "en", True),
        ("Johnson", "en", True),
        ("Natarajan", "en", True),  # unknown to the lists, and no English word
        ("Szöllössy", "en", True),
        ("Szöllössy", "de", False),  # in another language only the name lists vouch for a word
        ("Johnson's", "en", True),
    ],
)
def test_a_word_is_name_like_when_the_name_lists_know_it_or_english_does_not(words, word, language, name_like):
    assert words.name_like(word, language) is name_like


@pytest.mark.parametrize(
    "text, names",
    [
        ("we need to add Thelma Mitchell as guardian", ["Thelma Mitchell"]),
        ("Tomasz Nowak cannot log in", ["Tomasz Nowak"]),
        ("Windows Hello for Business", []),
        ("Adobe Acrobat Reader", []),
        ("Jenkins Pipeline", []),
        ("Mark Complete on the task", []),  # a given name that is also an English word: left to the model
        ("Appear Away", []),
    ],
)
def test_a_given_name_and_surname_written_as_a_pair_is_a_full_name(words, text, names):
    assert [text[a:b] for a, b in words.full_names(text)] == names


def test_a_languages_table_of_frequent_words_is_the_top_of_its_list_and_leaves_wordfreqs_cache_alone():
    """The top-word tables are read past wordfreq's cache (which keeps every list it reads for good): the same
    table as the cached whole list gives, and no list kept for it."""
    import math

    import wordfreq

    from app.adapters.redaction.name_words import _TOP_WORDS, _zipf_table

    before = (wordfreq.get_frequency_list.cache_info().currsize, wordfreq.get_frequency_dict.cache_info().currsize)
    table = _zipf_table("sv", _TOP_WORDS)
    assert (wordfreq.get_frequency_list.cache_info().currsize, wordfreq.get_frequency_dict.cache_info().currsize) == (
        before
    )
    ranked = sorted(wordfreq.get_frequency_dict("sv", wordlist="small").items(), key=lambda item: -item[1])
    assert list(table.items()) == [(w, round(math.log10(f) + 9, 2)) for w, f in ranked[:_TOP_WORDS]]
    wordfreq.get_frequency_dict.cache_clear()  # (what this test read, not kept for the tests after it)
    wordfreq.get_frequency_list.cache_clear()
