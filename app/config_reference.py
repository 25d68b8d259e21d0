"""The configuration reference page, rendered from the code that reads the configuration.

Environment variables come from the `Settings` class (name, variables, default, description); the keys of
the YAML answer-policy file (DESKMATE_CONFIG) from the key sets `app/config_file.py` accepts, with the one-line
meanings below. `make docs` writes the page; a test fails when a setting or a key has no description, so the
page cannot drift from what deskmate actually reads.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from app import config_file
from app.settings import BUNDLED_KB_DIR, GROUPS, setting_fields

# What each key of the YAML file means, per section; the key sets themselves are config_file's.
YAML_KEYS: dict[str, tuple[set[str], dict[str, str]]] = {
    "top level": (
        config_file.TOP_KEYS,
        {
            "llms": "Named LLMs (`name: {type, base_url, api_key, model, timeout_s}`) the rules and the agent use.",
            "agent_llm": "The LLM of the decision agent, clarifications and ticket drafts (a name from `llms`).",
            "collections": "Knowledge collections, searched in order; the first is the main one (uploads without "
            "`collection` go there).",
            "intent_detection": "An LLM classifying the message into `categories`, run only when a rule tests `intent`.",
            "response_mode": "The default response mode: "
            + ", ".join(f"`{m}`" for m in config_file.RESPONSE_MODES)
            + ".",
            "responses": "Response rules, first match wins; the last one, without `match`, is the fallback.",
            "integrations": "Read-only lookups in other systems, offered to the agent as actions.",
        },
    ),
    "llms.<name>": (
        config_file.LLM_KEYS,
        {
            "type": "One of " + ", ".join(f"`{t}`" for t in config_file.LLM_TYPES) + ".",
            "base_url": "The OpenAI-compatible server's address (`openai-compatible`), e.g. `http://localhost:11434/v1`.",
            "api_key": "Its key, usually `${VAR}` from the environment.",
            "model": "The model name.",
            "timeout_s": "Per-call timeout in seconds.",
            "comment": "Free text for the reader of the file; ignored.",
        },
    ),
    "collections.<name>": (
        config_file.COLLECTION_KEYS,
        {
            "collection": "The Chroma collection holding its chunks.",
            "match_threshold": "Distance (1 − calibrated score) at or below which the best result is a `match`.",
            "candidate_threshold": "Distance at or below which it is a `partial` result (above: left out).",
            "intent_identifier": "The `intent` a match reports (`<intent_identifier>/<collection>`).",
            "description": "What the collection holds (shown to the intent LLM and in traces).",
            "prompt": "The collection's service prompt (`${profile.service_prompt}` in a rule).",
            "max_tokens": "Its answer length (`${profile.service_tokens}` in a rule).",
            "comment": "Free text for the reader of the file; ignored.",
        },
    ),
    "responses[]": (
        config_file.RULE_KEYS,
        {
            "name": "The rule's name in traces and `debug` output.",
            "match": "Conditions on the profile ("
            + ", ".join(f"`{f}`" for f in config_file.MATCH_FIELDS)
            + ", each also as `<field>_regexp`); absent on the fallback rule.",
            "prompt": "The prompt, with `${profile.*}`, `${context}`, `${expanded_rag_context}` and `${user}`.",
            "llm": "The LLM that answers (a name from `llms`; one of `type: none` answers extractively).",
            "model": "Overrides the LLM's model for this rule.",
            "max_tokens": "The answer's length limit.",
            "comment": "Free text for the reader of the file; ignored.",
        },
    ),
    "integrations.<name>": (
        config_file.INTEGRATION_KEYS,
        {
            "description": "What the lookup returns; the agent reads it when choosing an action.",
            "examples": f"Messages the lookup answers (at most {config_file.MAX_EXAMPLES}); embedded at start-up.",
            "url": "The `GET` address; `${VAR}` from the environment, `${user}` and `${query}` filled per call.",
            "headers": "Request headers, e.g. `Authorization: Bearer ${TOKEN}`.",
            "timeout_s": "Per-call timeout in seconds (0.1–60).",
            "max_bytes": "Largest reply read (default 64 KB).",
            "comment": "Free text for the reader of the file; ignored.",
        },
    ),
    "intent_detection": (
        {"llm", "model", "categories", "comment"},
        {
            "llm": "The LLM that classifies (a name from `llms`).",
            "model": "Overrides its model.",
            "categories": "`name: description` pairs the message is classified into.",
            "comment": "Free text for the reader of the file; ignored.",
        },
    ),
}


def variables(field: FieldInfo) -> list[str]:
    """The environment variables a setting is read from, in the order they win."""
    alias = field.validation_alias
    if not isinstance(alias, AliasChoices):
        raise TypeError("every setting names its environment variables with AliasChoices")
    return [name for name in alias.choices if isinstance(name, str)]


def _default(name: str, field: FieldInfo) -> str:
    value = field.default
    if value is PydanticUndefined or value is None or value == "":
        return "unset"
    if name == "kb_dir" and value == BUNDLED_KB_DIR:
        return "the bundled `kb/`"
    return f"`{value}`"


def undocumented() -> list[str]:
    """Settings and YAML keys that have no description (a test keeps this empty)."""
    missing = [f"{group}.{name}" for group, name, field in setting_fields() if not (field.description or "").strip()]
    for section, (accepted, meanings) in YAML_KEYS.items():
        missing += [f"{section}.{key}" for key in sorted(accepted - set(meanings))]
        missing += [f"{section}.{key} (described, not accepted)" for key in sorted(set(meanings) - accepted)]
    return missing


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render() -> str:
    """The Markdown page: every setting, then every key of the YAML file."""
    lines = [
        "# Configuration reference",
        "",
        "<!-- generated by `make docs` from app/settings/ and app/config_file.py: edit those, not this page -->",
        "",
        "deskmate reads its settings from environment variables (or a `.env` file in the working directory).",
        "Where a setting has two variables, either works. This page is generated from the `Settings` class, so",
        "it lists exactly what deskmate reads, one section per group of settings (in code, `settings.<group>.<name>`).",
        "",
        "## Environment variables",
        "",
    ]
    for group, model in GROUPS.items():
        lines += [f"### {group}", "", _cell(model.__doc__ or ""), "", "| variable | setting | default | meaning |"]
        lines.append("|---|---|---|---|")
        for name, field in model.model_fields.items():
            names = " / ".join(f"`{v}`" for v in variables(field))
            lines.append(f"| {names} | `{group}.{name}` | {_default(name, field)} | {_cell(field.description or '')} |")
        lines.append("")
    lines += [
        "",
        "## The answer-policy file (`DESKMATE_CONFIG`)",
        "",
        "A YAML file; every problem in it is reported at start-up, all at once. `${VAR}` and `${VAR:-default}`",
        "are read from the environment in `llms` and `integrations`. Examples are in `examples/`; what the",
        "rules do is explained in [Answer policy and integrations](../answer-policy.md).",
        "",
    ]
    for section, (accepted, meanings) in YAML_KEYS.items():
        lines += [f"### `{section}`", "", "| key | meaning |", "|---|---|"]
        lines += [f"| `{key}` | {_cell(meanings.get(key, ''))} |" for key in sorted(accepted)]
        lines.append("")
    return "\n".join(lines)


def write(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(), encoding="utf-8")
    return path
