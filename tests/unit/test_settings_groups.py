"""Settings in groups by concern, read from exactly the environment variables deskmate has always read.

tests/fixtures/settings_variables.json lists every variable and its setting as they were before the groups
(historical: never edit it to follow the code). Each must still set its value, now found in its group."""

from __future__ import annotations

import json
import types
import typing
import warnings
from pathlib import Path

import pytest
from annotated_types import Ge, Gt, Le
from pydantic import SecretStr, ValidationError

from app.settings import GROUPS, OWNER, Settings, setting_fields
from tests.conftest import FIXTURES

BEFORE_THE_GROUPS: dict[str, str] = json.loads((FIXTURES / "settings_variables.json").read_text())
JIRA = {"JIRA_URL": "https://jira.example.org", "JIRA_PROJECT_KEY": "HELP", "JIRA_TOKEN": "jira-token-value"}
SECRETS = {
    "DESKMATE_ADMIN_KEY": "k3y-" + "aZ9xQ2mW7pL4vN8rT1yB6cH3jK5sD0fG",
    "DESKMATE_USER_TOKEN_SECRET": "s3c-" + "Lm4Qw8Zx2Vb6Nr0Ty3Pk7Hd1Jf5Gs9Ac",
}
# a value a validator accepts (it checks a format, or settings that must come with it), and those settings
SAMPLES: dict[str, tuple[str, dict[str, str]]] = {
    "database_url": ("postgresql://desk@db.example.org:5432/desk", {}),
    "lexical_backend": ("postgres", {"DESKMATE_DATABASE_URL": "postgresql://desk@db.example.org/desk"}),
    "llm_provider": ("openai", {"DESKMATE_LLM_BASE_URL": "http://127.0.0.1:11434/v1"}),
    "mode": ("production", SECRETS),
    "admin_key": (SECRETS["DESKMATE_ADMIN_KEY"], {}),
    "user_token_secret": (SECRETS["DESKMATE_USER_TOKEN_SECRET"], {}),
    "core_actions": ("answer,clarify", {}),
    "status_page_url": ("https://status.example.org", {}),
    "log_level": ("DEBUG", {}),
    "jira_url": ("https://jira2.example.org", JIRA),
    "jira_project_key": ("DESK", JIRA),
    "jira_token": ("another-jira-token", {k: v for k, v in JIRA.items() if k != "JIRA_TOKEN"}),
    "jira_email": ("it@example.org", JIRA),
    "jira_priorities": ("P4,P3,P2,P1", {}),
    **{f"redact_{d}": ("EMAIL", {}) for d in ("memory", "llm", "ticket", "trace", "log")},
}


def _sample(name: str, field) -> str:
    """A value different from the default that the field's type and bounds accept."""
    if name in SAMPLES:
        return SAMPLES[name][0]
    annotation, default = field.annotation, field.default
    optional = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    kind = next(a for a in typing.get_args(annotation) if a is not type(None)) if optional else annotation
    bounds = {type(m): m for m in field.metadata}
    if typing.get_origin(kind) is typing.Literal:
        return next(str(choice) for choice in typing.get_args(kind) if choice != default)
    if kind is bool:
        return "false" if default else "true"
    if kind in (int, float):
        low = bounds[Ge].ge if Ge in bounds else bounds[Gt].gt + 1 if Gt in bounds else 0
        high = bounds[Le].le if Le in bounds else low + 100
        for value in (low + 1, high, low):
            if value != default and low <= value <= high:
                return str(int(value) if kind is int else float(value))
    if kind is Path:
        return "/srv/deskmate/sample"
    return "sample-value-for-test-0123456789abcdef"


def _plain(value):
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    return str(value) if isinstance(value, Path) else value


@pytest.mark.parametrize("variable", sorted(BEFORE_THE_GROUPS))
def test_every_variable_from_before_the_groups_still_sets_its_setting(monkeypatch, variable):
    name = BEFORE_THE_GROUPS[variable]
    group = OWNER[name]
    value = _sample(name, GROUPS[group].model_fields[name])
    for companion, companion_value in SAMPLES.get(name, ("", {}))[1].items():
        monkeypatch.setenv(companion, companion_value)
    try:
        without = _plain(getattr(getattr(Settings(_env_file=None), group), name))
    except ValidationError:  # the companions alone are refused (Jira's URL and key without a token): unset
        without = None
    monkeypatch.setenv(variable, value)
    got = _plain(getattr(getattr(Settings(_env_file=None), group), name))
    if isinstance(got, bool):
        expected = value == "true"
    elif isinstance(got, (int, float)):
        expected = type(got)(value)
    else:
        expected = value
    assert got == expected != without, f"{variable} → settings.{group}.{name}"


def test_every_setting_from_before_the_groups_is_in_exactly_one_group_with_the_same_variables():
    now = {alias: name for _, name, field in setting_fields() for alias in field.validation_alias.choices}
    assert {variable: now.get(variable) for variable in BEFORE_THE_GROUPS} == BEFORE_THE_GROUPS
    assert len({name for _, name, _ in setting_fields()}) == len(list(setting_fields()))


def test_a_flat_keyword_and_a_flat_copy_reach_the_group():
    settings = Settings(_env_file=None, top_k=3, host="0.0.0.0")
    assert settings.retrieval.top_k == 3 and settings.server.host == "0.0.0.0"
    copied = settings.model_copy(update={"top_k": 9, "fact_path": True})
    assert copied.retrieval.top_k == 9 and copied.retrieval.fact_path and settings.retrieval.top_k == 3
    assert Settings(_env_file=None, retrieval={"top_k": 4}).retrieval.top_k == 4
    with pytest.raises(TypeError, match="no setting top_kk"):
        Settings(_env_file=None, top_kk=3)


def test_a_flat_read_still_answers_and_warns_with_the_group():
    settings = Settings(_env_file=None, top_k=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert settings.top_k == 3 and settings.jira_enabled is False
    assert "settings.retrieval.top_k" in str(caught[0].message)
    with pytest.raises(AttributeError):
        settings.no_such_setting  # noqa: B018


def test_a_setting_of_one_group_checked_against_another_is_still_refused():
    with pytest.raises(ValueError, match="needs DESKMATE_DATABASE_URL"):
        Settings(_env_file=None, lexical_backend="postgres")
