import pytest
from pydantic import ValidationError

from app.settings import Settings
from tests.conftest import REPO


def test_the_readme_documents_every_setting_with_its_variable():
    readme = (REPO / "README.md").read_text()
    missing = [alias for field in Settings.model_fields.values() for alias in field.validation_alias.choices
               if f"`{alias}`" not in readme]
    assert missing == []


def test_llm_provider_is_picked_from_what_is_configured():
    assert Settings(_env_file=None).resolved_llm_provider == "none"
    assert Settings(_env_file=None, groq_api_key="gsk_x").resolved_llm_provider == "groq"
    assert Settings(_env_file=None, llm_base_url="http://127.0.0.1:11434/v1").resolved_llm_provider == "openai"
    assert Settings(_env_file=None, groq_api_key="gsk_x", llm_provider="none").resolved_llm_provider == "none"


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
    assert settings.chroma_mode == "server" and settings.top_k == 7 and settings.kb_dir is None
