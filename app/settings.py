"""All of deskmate's configuration in one pydantic-settings class.

Every field lists the environment variable(s) it is read from; the README's configuration
table is checked against this class by a test, so a new knob cannot go undocumented.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

BUNDLED_KB_DIR = Path(__file__).resolve().parent.parent / "kb"


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class Settings(BaseSettings):
    """deskmate settings; environment variables win over defaults, `.env` is read if present."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)

    # --- service --------------------------------------------------------------------------
    data_dir: Path = Field(
        Path("data"), validation_alias=_env("DESKMATE_DATA_DIR"),
        description="Where Chroma, sessions and uploads live (created if missing).")
    host: str = Field("127.0.0.1", validation_alias=_env("DESKMATE_HOST"),
                      description="Address `deskmate serve` binds to.")
    port: int = Field(8000, validation_alias=_env("DESKMATE_PORT"),
                      description="Port `deskmate serve` listens on.")
    log_level: str = Field("INFO", validation_alias=_env("DESKMATE_LOG_LEVEL"),
                           description="Python logging level.")
    kb_dir: Path | None = Field(
        BUNDLED_KB_DIR, validation_alias=_env("DESKMATE_KB_DIR"),
        description="Folder indexed at start-up (the bundled sample KB by default); empty to skip.")

    # --- embeddings and vector store ------------------------------------------------------
    embedding_model_path: str | None = Field(
        None, validation_alias=_env("DESKMATE_EMBEDDING_MODEL_PATH"),
        description="Local sentence-transformers model folder; default: the packaged all-MiniLM-L6-v2.")
    chroma_mode: Literal["persistent", "server"] = Field(
        "persistent", validation_alias=_env("CHROMA_MODE", "DESKMATE_CHROMA_MODE"),
        description="persistent (embedded, under the data dir) or server (Chroma HTTP server).")
    chroma_host: str = Field("127.0.0.1", validation_alias=_env("CHROMA_HOST", "DESKMATE_CHROMA_HOST"),
                             description="Chroma server host (server mode).")
    chroma_port: int = Field(8001, validation_alias=_env("CHROMA_PORT", "DESKMATE_CHROMA_PORT"),
                             description="Chroma server port (server mode).")
    chroma_ssl: bool = Field(False, validation_alias=_env("CHROMA_SSL", "DESKMATE_CHROMA_SSL"),
                             description="Use HTTPS to reach the Chroma server.")
    chroma_collection: str = Field(
        "deskmate_chunks", validation_alias=_env("CHROMA_COLLECTION", "DESKMATE_CHROMA_COLLECTION"),
        min_length=3, max_length=60, description="Collection holding the chunks.")

    # --- retrieval and conversation -------------------------------------------------------
    top_k: int = Field(5, ge=1, le=50, validation_alias=_env("DESKMATE_TOP_K"),
                       description="Chunks handed to the answer step.")
    candidate_k: int = Field(20, ge=1, le=200, validation_alias=_env("DESKMATE_CANDIDATE_K"),
                             description="Candidates fetched from the index before filtering.")
    min_score: float = Field(0.40, ge=0.0, le=1.0, validation_alias=_env("DESKMATE_MIN_SCORE"),
                             description="Cosine score below which a chunk does not count as an answer.")
    max_searches: int = Field(3, ge=1, le=5, validation_alias=_env("DESKMATE_MAX_SEARCHES"),
                              description="Knowledge-base searches allowed per turn.")
    history_turns: int = Field(10, ge=1, le=100, validation_alias=_env("DESKMATE_HISTORY_TURNS"),
                               description="Conversation turns kept in session memory.")
    chunk_max_tokens: int = Field(200, ge=32, le=256, validation_alias=_env("DESKMATE_CHUNK_MAX_TOKENS"),
                                  description="Upper bound of a chunk, in embedding-model tokens.")

    # --- input limits ----------------------------------------------------------------------
    max_message_chars: int = Field(4000, ge=1, validation_alias=_env("DESKMATE_MAX_MESSAGE_CHARS"),
                                   description="Longest chat message accepted.")
    max_upload_bytes: int = Field(20 * 1024 * 1024, ge=1, validation_alias=_env("DESKMATE_MAX_UPLOAD_BYTES"),
                                  description="Largest document upload accepted.")

    # --- LLM (optional) -------------------------------------------------------------------
    llm_provider: Literal["auto", "none", "groq", "openai"] = Field(
        "auto", validation_alias=_env("DESKMATE_LLM_PROVIDER"),
        description="auto: groq if GROQ_API_KEY is set, openai if DESKMATE_LLM_BASE_URL is set, else none.")
    llm_base_url: str | None = Field(
        None, validation_alias=_env("DESKMATE_LLM_BASE_URL", "OPENAI_BASE_URL"),
        description="OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1 (Ollama).")
    llm_model: str | None = Field(None, validation_alias=_env("DESKMATE_LLM_MODEL"),
                                  description="Model name for the OpenAI-compatible server.")
    llm_api_key: SecretStr | None = Field(
        None, validation_alias=_env("DESKMATE_LLM_API_KEY", "OPENAI_API_KEY"),
        description="API key for the OpenAI-compatible server, if it needs one.")
    groq_api_key: SecretStr | None = Field(None, validation_alias=_env("GROQ_API_KEY"),
                                           description="Groq API key; enables Groq when set.")
    groq_model: str = Field("llama-3.3-70b-versatile", validation_alias=_env("GROQ_MODEL"),
                            description="Groq model name.")
    groq_base_url: str | None = Field(None, validation_alias=_env("GROQ_BASE_URL"),
                                      description="Override Groq's API address (proxies, tests).")
    llm_timeout_s: float = Field(20.0, gt=0, le=300, validation_alias=_env("DESKMATE_LLM_TIMEOUT_S"),
                                 description="Per-call LLM timeout; on expiry deskmate falls back offline.")
    llm_max_tokens: int = Field(1024, ge=16, le=8192, validation_alias=_env("DESKMATE_LLM_MAX_TOKENS"),
                                description="Longest LLM reply requested.")

    # --- tracing (optional) -----------------------------------------------------------------
    langfuse_public_key: str | None = Field(None, validation_alias=_env("LANGFUSE_PUBLIC_KEY"),
                                            description="Langfuse public key; tracing is on when both keys are set.")
    langfuse_secret_key: SecretStr | None = Field(None, validation_alias=_env("LANGFUSE_SECRET_KEY"),
                                                  description="Langfuse secret key.")
    langfuse_host: str = Field("https://cloud.langfuse.com",
                               validation_alias=_env("LANGFUSE_HOST", "LANGFUSE_BASE_URL"),
                               description="Langfuse server address.")

    @field_validator("kb_dir", "llm_base_url", "llm_model", "embedding_model_path", "langfuse_public_key",
                     "groq_base_url", mode="before")
    @classmethod
    def _empty_means_unset(cls, value):
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _refuse_unusable_llm_config(self) -> "Settings":
        if self.llm_provider == "openai" and not self.llm_base_url:
            raise ValueError("DESKMATE_LLM_PROVIDER=openai needs DESKMATE_LLM_BASE_URL (and usually DESKMATE_LLM_MODEL)")
        if self.llm_provider == "groq" and not self.groq_api_key:
            raise ValueError("DESKMATE_LLM_PROVIDER=groq needs GROQ_API_KEY")
        return self

    # --- derived --------------------------------------------------------------------------
    @property
    def resolved_llm_provider(self) -> Literal["none", "groq", "openai"]:
        if self.llm_provider != "auto":
            return self.llm_provider
        if self.groq_api_key:
            return "groq"
        if self.llm_base_url:
            return "openai"
        return "none"

    @property
    def langfuse_enabled(self) -> bool:
        return bool(self.langfuse_public_key and self.langfuse_secret_key)

    @property
    def chroma_dir(self) -> Path:
        return self.data_dir / "chroma"

    @property
    def sessions_db(self) -> Path:
        return self.data_dir / "sessions.sqlite"

    @property
    def uploads_dir(self) -> Path:
        return self.data_dir / "uploads"
