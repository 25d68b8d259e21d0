import pytest
from pydantic import ValidationError

from app.settings import Settings, setting_fields
from tests.conftest import REPO


def test_every_setting_and_config_key_has_a_description():
    from app.config_reference import undocumented

    assert undocumented() == []


def test_the_generated_configuration_page_lists_every_variable_with_its_description():
    from app.config_reference import render

    page = render()
    rows = {line.split(" | ")[0] for line in page.splitlines() if line.startswith("| `")}
    for _, name, field in setting_fields():
        variables = " / ".join(f"`{alias}`" for alias in field.validation_alias.choices)
        row = next((line for line in page.splitlines() if line.startswith(f"| {variables} |")), None)
        assert row is not None, f"{name} ({variables}) is missing from the configuration page"
        assert " ".join(field.description.split()).replace("|", "\\|") in row, name
    assert len(rows) >= len(list(setting_fields()))


def test_the_config_page_documents_every_key_of_the_policy_file():
    from app import config_file
    from app.config_reference import render

    page = render()
    for keys in (
        config_file.TOP_KEYS,
        config_file.LLM_KEYS,
        config_file.COLLECTION_KEYS,
        config_file.RULE_KEYS,
        config_file.INTEGRATION_KEYS,
    ):
        assert [key for key in keys if f"| `{key}` |" not in page] == []


def test_the_readme_says_how_to_change_the_port_and_stays_short():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    assert "DESKMATE_PORT" in readme and "DESKMATE_HOST" in readme


def test_llm_provider_is_picked_from_what_is_configured():
    assert Settings(_env_file=None).llm.resolved_llm_provider == "none"
    assert Settings(_env_file=None, groq_api_key="gsk_x").llm.resolved_llm_provider == "groq"
    assert Settings(_env_file=None, llm_base_url="http://127.0.0.1:11434/v1").llm.resolved_llm_provider == "openai"
    assert Settings(_env_file=None, groq_api_key="gsk_x", llm_provider="none").llm.resolved_llm_provider == "none"


def test_an_incomplete_llm_configuration_is_refused_at_start_up():
    with pytest.raises(ValidationError, match="needs DESKMATE_LLM_BASE_URL"):
        Settings(_env_file=None, llm_provider="openai")
    with pytest.raises(ValidationError, match="needs GROQ_API_KEY"):
        Settings(_env_file=None, llm_provider="groq")


def test_environment_variables_configure_it(monkeypatch):
    monkeypatch.setenv("CHROMA_MODE", "server")
    monkeypatch.setenv("DESKMATE_TOP_K", "7")
    monkeypatch.setenv("DESKMATE_KB_DIR", "")
    settings = Settings(_env_file=None)
    assert (
        settings.storage.chroma_mode == "server" and settings.retrieval.top_k == 7 and settings.storage.kb_dir is None
    )
