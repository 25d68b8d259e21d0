"""The configuration file: the shipped examples load, and a broken file lists every problem at once."""

from __future__ import annotations

import pytest

from app.config_file import ConfigError, load_config, parse_config
from core.policy_config import default_policy
from tests.conftest import REPO

MAIN = default_policy(chroma_collection="deskmate_chunks", min_score=0.35).collections[0]


@pytest.mark.parametrize(
    "name", ["offline", "groq-single-collection", "ollama-multi-collection", "chat-only", "asset-lookup"]
)
def test_every_example_config_loads(name):
    policy = load_config(
        REPO / "examples" / f"{name}.yaml",
        default_collection=MAIN,
        env={"GROQ_API_KEY": "gsk_test", "ASSET_API_TOKEN": "t"},
    )
    assert policy.responses[-1].is_fallback and policy.collections
    assert all(rule.llm in {"default"} | {llm.name for llm in policy.llms} for rule in policy.responses)


def test_env_references_are_filled_from_the_environment_with_defaults():
    policy = load_config(
        REPO / "examples" / "groq-single-collection.yaml",
        default_collection=MAIN,
        env={"GROQ_API_KEY": "gsk_live", "GROQ_BASE_URL": "http://127.0.0.1:9"},
    )
    [groq] = policy.llms
    assert (groq.api_key, groq.base_url) == ("gsk_live", "http://127.0.0.1:9")
    default_url = (
        load_config(
            REPO / "examples" / "groq-single-collection.yaml", default_collection=MAIN, env={"GROQ_API_KEY": "k"}
        )
        .llms[0]
        .base_url
    )
    assert default_url == "https://api.groq.com"


BROKEN = """
llms:
  local: {type: openai-compatible}
  cloud: {type: groq, api_key: "${NOT_SET_ANYWHERE}"}
  odd: {type: bard}
collections:
  kb: {collection: deskmate_chunks, match_threshold: 0.6, candidate_threshold: 0.4}
  x: {collection: "a b", match_threshold: 3}
responses:
  - match: {rag_result: match, collection_regexp: "(unclosed"}
    llm: gpt
  - prompt: "fallback"
  - match: {rag_result: maybe}
    prompt: "${profile.nonsense}"
response_mode: FAST
colour: blue
"""


def test_a_broken_file_lists_every_problem_in_one_error():
    with pytest.raises(ConfigError) as caught:
        parse_config(BROKEN, source="broken.yaml", env={})
    text = str(caught.value)
    expected = [
        "top level: unknown key 'colour'",
        "llms.local: an openai-compatible LLM needs base_url",
        "llms.cloud.api_key: ${NOT_SET_ANYWHERE} is not set",
        "llms.odd.type must be one of",
        "collections.kb: candidate_threshold (0.4) must be greater than match_threshold (0.6)",
        "collections.x.collection: 'a b' is not a valid Chroma collection name",
        "collections.x.match_threshold must be a number from 0 to 2",
        "responses[0].match.collection_regexp: bad regular expression",
        "responses[0].llm: unknown LLM 'gpt'",
        "responses[1] has no match, so it always wins",
        "responses[2].match.rag_result must be one of",
        "responses[2].prompt: unknown field ${profile.nonsense}",
        "response_mode must be one of",
    ]
    assert [e for e in expected if e not in text] == []
    assert text.startswith("broken.yaml:") and len(caught.value.problems) >= len(expected)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("responses:\n  - match: {rag_result: match}\n", "no fallback rule"),
        ("responses: []\n", "responses must be a non-empty list"),
        ("responses:\n  - match: {intent: hr}\n  - {}\n", "there is no intent_detection section"),
        ("llms: [1, 2]\nresponses:\n  - {}\n", "llms must be a mapping"),
        ("- just\n- a list\n", "must be a YAML mapping"),
        ("responses: [\n", "not valid YAML"),
    ],
)
def test_each_structural_mistake_is_named(text, problem):
    with pytest.raises(ConfigError, match=problem.replace("(", r"\(")):
        parse_config(text, env={}, default_collection=MAIN)


def test_a_file_without_collections_answers_from_the_main_knowledge_base():
    policy = parse_config("responses:\n  - {}\n", env={}, default_collection=MAIN)
    assert [c.name for c in policy.collections] == ["kb"] and policy.collections[0].collection == "deskmate_chunks"


def test_a_missing_or_unreadable_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read it"):
        load_config(tmp_path / "nope.yaml")
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(binary)
