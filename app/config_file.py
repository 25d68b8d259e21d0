"""The optional configuration file (DESKMATE_CONFIG): YAML → a validated AnswerPolicy.

Every problem in the file is collected and reported at once (ConfigError), so an operator fixes the
file in one pass: unknown keys, an LLM a rule names that is not defined, a missing `${VAR}`, a bad
regular expression, thresholds in the wrong order, no fallback rule, rules after the fallback.
`${VAR}` / `${VAR:-default}` are read from the environment in the `llms` and `integrations` sections only
(an integration's `url` may also hold `${user}` and `${query}`, filled per call); in prompts,
`${profile.*}`, `${context}`, `${expanded_rag_context}` and `${user}` are the rule's template fields.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from core.policy_config import (
    DEFAULT_LLM,
    MATCH_FIELDS,
    RAG_RESULTS,
    AnswerPolicy,
    CollectionSpec,
    IntegrationSpec,
    IntentDetection,
    LLMSpec,
    ResponseRule,
)
from nodes.support.actions import BUILTIN_NAMES
from nodes.support.catalogue import MAX_EXAMPLES

RESPONSE_MODES = ("RAG_ONLY", "LLM_ONLY", "HYBRID", "SMART_FALLBACK", "RAG_PRIORITY", "LLM_PRIORITY")
LLM_TYPES = ("groq", "openai-compatible", "none")
TOP_KEYS = {"llms", "collections", "intent_detection", "responses", "response_mode", "agent_llm", "integrations"}
LLM_KEYS = {"type", "base_url", "api_key", "model", "timeout_s", "comment"}
COLLECTION_KEYS = {
    "collection",
    "match_threshold",
    "candidate_threshold",
    "intent_identifier",
    "description",
    "prompt",
    "max_tokens",
    "comment",
}
RULE_KEYS = {"name", "match", "prompt", "llm", "model", "max_tokens", "comment"}
TEMPLATE_FIELDS = re.compile(r"\$\{(profile\.[a-z_]+|context|expanded_rag_context|user)\}")
KNOWN_PROFILE_FIELDS = {
    "rag_result",
    "intent",
    "collection",
    "service",
    "distance",
    "service_prompt",
    "service_tokens",
    "user_message",
    "selected_collections",
    "response_mode",
    "confidence",
}
INTEGRATION_KEYS = {"description", "examples", "url", "headers", "timeout_s", "max_bytes", "comment"}
INTEGRATION_FIELDS = ("user", "query")  # ${user} and ${query} in an integration's url
_INTEGRATION_NAME = re.compile(r"^[a-z][a-z0-9_]{2,40}$")
_TEMPLATE_REF = re.compile(r"\$\{([a-z][a-z0-9_.]*)\}")
MAX_INTEGRATIONS = 20
_ENV_REF = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}")
_CHROMA_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]$")
MAX_FILE_BYTES = 1_000_000
MAX_RULES = 200


class ConfigError(ValueError):
    """The configuration file cannot be used; `problems` lists every reason."""

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path, self.problems = path, problems
        super().__init__(f"{path}: {len(problems)} problem(s):\n" + "\n".join(f"  - {p}" for p in problems))


def _env(value: Any, where: str, env: Mapping[str, str], problems: list[str]) -> Any:
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        problems.append(f"{where}: ${{{name}}} is not set in the environment")
        return ""

    return _ENV_REF.sub(substitute, value)


def _unknown(mapping: Mapping, allowed: set[str], where: str, problems: list[str]) -> None:
    for key in sorted(set(mapping) - allowed, key=str):
        problems.append(f"{where}: unknown key '{key}' (allowed: {', '.join(sorted(allowed))})")


def _number(value: Any, where: str, problems: list[str], *, low: float, high: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        problems.append(f"{where} must be a number from {low:g} to {high:g}, not {value!r}")
        return None
    return float(value)


def _llms(raw: Any, env: Mapping[str, str], problems: list[str]) -> tuple[LLMSpec, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        problems.append("llms must be a mapping of names to LLM definitions")
        return ()
    specs = []
    for name, body in raw.items():
        where = f"llms.{name}"
        if name == DEFAULT_LLM:
            problems.append(f"{where}: '{DEFAULT_LLM}' is reserved for the environment-configured LLM")
            continue
        if not isinstance(body, Mapping):
            problems.append(f"{where} must be a mapping with at least 'type'")
            continue
        _unknown(body, LLM_KEYS, where, problems)
        kind = body.get("type")
        if kind not in LLM_TYPES:
            problems.append(f"{where}.type must be one of {', '.join(LLM_TYPES)}, not {kind!r}")
            continue
        base_url = _env(body.get("base_url"), f"{where}.base_url", env, problems)
        api_key = _env(body.get("api_key"), f"{where}.api_key", env, problems)
        model = _env(body.get("model"), f"{where}.model", env, problems)
        if kind == "openai-compatible" and not base_url:
            problems.append(f"{where}: an openai-compatible LLM needs base_url (e.g. http://localhost:11434/v1)")
        if base_url and not str(base_url).startswith(("http://", "https://")):
            problems.append(f"{where}.base_url must start with http:// or https://")
        if kind == "groq" and not api_key:
            problems.append(f"{where}: a groq LLM needs api_key (e.g. api_key: ${{GROQ_API_KEY}})")
        timeout = _number(body.get("timeout_s", 30), f"{where}.timeout_s", problems, low=0.1, high=600)
        specs.append(
            LLMSpec(
                name=str(name),
                type=kind,
                base_url=base_url or None,
                api_key=api_key or None,
                model=model or None,
                timeout_s=timeout or 30.0,
            )
        )
    return tuple(specs)


def _collections(raw: Any, problems: list[str]) -> tuple[CollectionSpec, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping) or not raw:
        problems.append("collections must be a non-empty mapping of names to collection definitions")
        return ()
    specs = []
    for name, body in raw.items():
        where = f"collections.{name}"
        if not isinstance(body, Mapping):
            problems.append(f"{where} must be a mapping with at least 'collection' and 'match_threshold'")
            continue
        _unknown(body, COLLECTION_KEYS, where, problems)
        chroma = str(body.get("collection", name))
        if not _CHROMA_NAME.match(chroma):
            problems.append(
                f"{where}.collection: '{chroma}' is not a valid Chroma collection name "
                "(3–512 letters, digits, . _ -, starting and ending with a letter or digit)"
            )
        match = _number(body.get("match_threshold"), f"{where}.match_threshold", problems, low=0, high=2)
        candidate = None
        if body.get("candidate_threshold") is not None:
            candidate = _number(body["candidate_threshold"], f"{where}.candidate_threshold", problems, low=0, high=2)
            if match is not None and candidate is not None and candidate <= match:
                problems.append(
                    f"{where}: candidate_threshold ({candidate:g}) must be greater than match_threshold "
                    f"({match:g}) — both are distances, a partial match is further away than a match"
                )
        tokens = body.get("max_tokens")
        if tokens is not None and (
            isinstance(tokens, bool) or not isinstance(tokens, int) or not 1 <= tokens <= 32_000
        ):
            problems.append(f"{where}.max_tokens must be a whole number from 1 to 32000")
            tokens = None
        specs.append(
            CollectionSpec(
                name=str(name),
                collection=chroma,
                match_threshold=match or 0.0,
                candidate_threshold=candidate,
                intent_identifier=body.get("intent_identifier"),
                description=str(body.get("description") or ""),
                prompt=str(body.get("prompt") or ""),
                max_tokens=tokens,
            )
        )
    if len({c.collection for c in specs}) < len(specs):
        problems.append("collections: two names point at the same Chroma collection")
    return tuple(specs)


def _integrations(raw: Any, env: Mapping[str, str], problems: list[str]) -> tuple[IntegrationSpec, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping) or not raw:
        problems.append("integrations must be a non-empty mapping of names to integration definitions")
        return ()
    if len(raw) > MAX_INTEGRATIONS:
        problems.append(f"integrations has {len(raw)} entries; at most {MAX_INTEGRATIONS} are allowed")
    specs = []
    for name, body in list(raw.items())[:MAX_INTEGRATIONS]:
        where = f"integrations.{name}"
        if not isinstance(name, str) or not _INTEGRATION_NAME.match(name):
            problems.append(f"{where}: the name must be 3–41 lower-case letters, digits or _, starting with a letter")
            continue
        if name in BUILTIN_NAMES or name == "use_integration":
            problems.append(f"{where}: '{name}' is one of deskmate's own actions; choose another name")
            continue
        if not isinstance(body, Mapping):
            problems.append(f"{where} must be a mapping with description, examples and url")
            continue
        _unknown(body, INTEGRATION_KEYS, where, problems)
        description = body.get("description")
        if not isinstance(description, str) or not description.strip() or "\n" in description.strip():
            problems.append(f"{where}.description must be one line saying what the lookup returns")
            description = ""
        examples = body.get("examples")
        if (
            not isinstance(examples, list)
            or not 1 <= len(examples) <= MAX_EXAMPLES
            or not all(isinstance(e, str) and e.strip() for e in examples)
        ):
            problems.append(f"{where}.examples must list 1 to {MAX_EXAMPLES} messages an employee would send for it")
            examples = []
        url = _env(body.get("url"), f"{where}.url", env, problems)
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            problems.append(f"{where}.url must start with http:// or https://")
            url = ""
        for field_name in _TEMPLATE_REF.findall(url):
            if field_name not in INTEGRATION_FIELDS:
                problems.append(
                    f"{where}.url: unknown field ${{{field_name}}} (fields: "
                    f"{', '.join('${' + f + '}' for f in INTEGRATION_FIELDS)})"
                )
        if url and "${" in urlsplit(url).netloc:
            problems.append(
                f"{where}.url: ${{user}} and ${{query}} may appear in the path or query string only, never in the host"
            )
        headers = body.get("headers") or {}
        if not isinstance(headers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, (str, int)) for k, v in headers.items()
        ):
            problems.append(f"{where}.headers must map header names to values (e.g. Authorization: Bearer ${{TOKEN}})")
            headers = {}
        resolved = tuple((str(k), str(_env(str(v), f"{where}.headers.{k}", env, problems))) for k, v in headers.items())
        timeout = _number(body.get("timeout_s", 5), f"{where}.timeout_s", problems, low=0.1, high=60)
        max_bytes = body.get("max_bytes", 65_536)
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or not 1_024 <= max_bytes <= 1_048_576:
            problems.append(f"{where}.max_bytes must be a whole number from 1024 to 1048576")
            max_bytes = 65_536
        specs.append(
            IntegrationSpec(
                name=name,
                description=str(description).strip(),
                examples=tuple(e.strip() for e in examples),
                url=url,
                headers=resolved,
                timeout_s=timeout or 5.0,
                max_bytes=max_bytes,
            )
        )
    return tuple(specs)


def _intent(raw: Any, llm_names: set[str], problems: list[str]) -> IntentDetection | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        problems.append("intent_detection must be a mapping with 'llm' and 'categories'")
        return None
    _unknown(raw, {"llm", "model", "categories", "comment"}, "intent_detection", problems)
    llm = str(raw.get("llm", DEFAULT_LLM))
    if llm not in llm_names:
        problems.append(f"intent_detection.llm: unknown LLM '{llm}' (defined: {', '.join(sorted(llm_names))})")
    categories = raw.get("categories")
    if (
        not isinstance(categories, Mapping)
        or not categories
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in categories.items())
    ):
        problems.append("intent_detection.categories must map category names to one-line descriptions")
        categories = {}
    return IntentDetection(llm=llm, model=raw.get("model"), categories=tuple(categories.items()))


def _match(raw: Any, where: str, problems: list[str]) -> tuple[tuple[str, Any], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        problems.append(f"{where}.match must be a mapping (empty or absent: the fallback rule)")
        return ()
    clauses: list[tuple[str, Any]] = []  # (field, wanted value or compiled pattern)
    for key, value in raw.items():
        field = key[: -len("_regexp")] if key.endswith("_regexp") else key
        if field not in MATCH_FIELDS:
            problems.append(
                f"{where}.match: unknown field '{key}' (fields: {', '.join(MATCH_FIELDS)}, each also as <field>_regexp)"
            )
            continue
        if key.endswith("_regexp"):
            text = str(value)
            flags = 0
            if len(text) > 2 and text.startswith("/") and text.rstrip("imsx").endswith("/"):  # /pattern/i
                body, _, suffix = text[1:].rpartition("/")
                flags = re.IGNORECASE if "i" in suffix else 0
                text = body
            try:
                clauses.append((key, re.compile(text, flags)))
            except re.error as exc:
                problems.append(f"{where}.match.{key}: bad regular expression {value!r}: {exc}")
            continue
        if field == "rag_result" and value not in RAG_RESULTS + (True,):
            problems.append(
                f"{where}.match.rag_result must be one of {', '.join(RAG_RESULTS)} (or true for "
                f"match-or-partial), not {value!r}"
            )
            continue
        if field == "response_mode" and str(value).upper() not in RESPONSE_MODES:
            problems.append(f"{where}.match.response_mode must be one of {', '.join(RESPONSE_MODES)}")
            continue
        clauses.append((key, str(value).upper() if field == "response_mode" else value))
    return tuple(clauses)


def _rules(raw: Any, llm_names: set[str], problems: list[str]) -> tuple[ResponseRule, ...]:
    if not isinstance(raw, list) or not raw:
        problems.append("responses must be a non-empty list of rules; the last one, with no match, is the fallback")
        return ()
    if len(raw) > MAX_RULES:
        problems.append(f"responses has {len(raw)} rules; at most {MAX_RULES} are allowed")
    rules: list[ResponseRule] = []
    for index, body in enumerate(raw[:MAX_RULES]):
        where = f"responses[{index}]"
        if not isinstance(body, Mapping):
            problems.append(f"{where} must be a mapping")
            continue
        _unknown(body, RULE_KEYS, where, problems)
        llm = str(body.get("llm", DEFAULT_LLM))
        if llm not in llm_names:
            problems.append(f"{where}.llm: unknown LLM '{llm}' (defined: {', '.join(sorted(llm_names))})")
        prompt = body.get("prompt")
        if prompt is not None:
            for name in TEMPLATE_FIELDS.findall(str(prompt)):
                if name.startswith("profile.") and name[len("profile.") :] not in KNOWN_PROFILE_FIELDS:
                    problems.append(
                        f"{where}.prompt: unknown field ${{{name}}} (profile fields: "
                        f"{', '.join(sorted(KNOWN_PROFILE_FIELDS))})"
                    )
        tokens = body.get("max_tokens")
        if (
            tokens is not None
            and tokens != "${profile.service_tokens}"
            and (isinstance(tokens, bool) or not isinstance(tokens, int) or not 1 <= tokens <= 32_000)
        ):
            problems.append(f'{where}.max_tokens must be 1–32000 or "${{profile.service_tokens}}", not {tokens!r}')
            tokens = None
        rules.append(
            ResponseRule(
                index=index,
                name=str(body.get("name") or f"rule {index}"),
                match=_match(body.get("match"), where, problems),
                prompt=str(prompt) if prompt is not None else None,
                llm=llm,
                model=body.get("model"),
                max_tokens=tokens,
            )
        )
    # by what the file says, not what survived validation: a rule whose only clause was invalid is no fallback
    fallbacks = [i for i, body in enumerate(raw[:MAX_RULES]) if isinstance(body, Mapping) and not body.get("match")]
    if not fallbacks:
        problems.append(
            "responses: no fallback rule — add a last rule without `match`, so every question gets an answer"
        )
    elif fallbacks[0] != len(raw) - 1:
        problems.append(
            f"responses[{fallbacks[0]}] has no match, so it always wins: the rules after it can never "
            "be used — move it to the end"
        )
    return tuple(rules)


def parse_config(
    text: str,
    *,
    source: str = "<config>",
    env: Mapping[str, str] | None = None,
    default_collection: CollectionSpec | None = None,
) -> AnswerPolicy:
    """YAML text → AnswerPolicy, or ConfigError listing every problem."""
    env = os.environ if env is None else env
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(source, [f"not valid YAML: {exc}"]) from None
    if not isinstance(raw, Mapping):
        raise ConfigError(source, ["the file must be a YAML mapping (llms:, collections:, responses: …)"])
    problems: list[str] = []
    _unknown(raw, TOP_KEYS, "top level", problems)
    llms = _llms(raw.get("llms"), env, problems)
    llm_names = {DEFAULT_LLM} | {spec.name for spec in llms}
    collections = _collections(raw.get("collections"), problems)
    if not collections and raw.get("collections") is None and default_collection is not None:
        collections = (default_collection,)  # no collections section: the one knowledge base
    intent = _intent(raw.get("intent_detection"), llm_names, problems)
    rules = _rules(raw.get("responses"), llm_names, problems)
    mode = str(raw.get("response_mode", "SMART_FALLBACK")).upper()
    if mode not in RESPONSE_MODES:
        problems.append(f"response_mode must be one of {', '.join(RESPONSE_MODES)}, not {raw.get('response_mode')!r}")
    agent = str(raw.get("agent_llm", DEFAULT_LLM))
    if agent not in llm_names:
        problems.append(f"agent_llm: unknown LLM '{agent}' (defined: {', '.join(sorted(llm_names))})")
    if any(r.needs_intent() for r in rules) and intent is None:
        problems.append("a rule matches on intent, but there is no intent_detection section to detect it")
    integrations = _integrations(raw.get("integrations"), env, problems)
    if problems:
        raise ConfigError(source, problems)
    return AnswerPolicy(
        llms=llms,
        collections=collections,
        responses=rules,
        intent_detection=intent,
        response_mode=mode,
        agent_llm=agent,
        integrations=integrations,
        source=source,
    )


def load_config(
    path: Path, *, env: Mapping[str, str] | None = None, default_collection: CollectionSpec | None = None
) -> AnswerPolicy:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ConfigError(str(path), [f"the file is {size:,} bytes; at most {MAX_FILE_BYTES:,} are read"])
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), [f"cannot read it: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), ["it is not UTF-8 text"]) from None
    return parse_config(text, source=str(path), env=env, default_collection=default_collection)
