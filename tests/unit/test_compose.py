"""The compose files and `.env.example` say what deskmate actually reads: no Docker engine runs here, so the
files are read as YAML and checked against the Settings class and the nginx limits docs/operations.md asks for."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from app.config_reference import variables
from app.settings import IngestionSettings, setting_fields

REPO = Path(__file__).resolve().parents[2]
SETTING_VARIABLES = {name for _, _, field in setting_fields() for name in variables(field)}
_DESKMATE_PREFIXES = ("DESKMATE_", "CHROMA_", "LANGFUSE_", "GROQ_", "OPENAI_", "JIRA_")
_INTERPOLATED = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)")
_RUNTIME = {"OMP_NUM_THREADS"}  # read by torch, not by deskmate's settings


def _compose(name: str) -> dict:
    return yaml.safe_load((REPO / name).read_text())


def _environment(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    return dict(item.split("=", 1) for item in env) if isinstance(env, list) else env


def _env_example() -> dict[str, bool]:
    """Variable → set (uncommented) in .env.example, for every `VAR=` line, commented or not."""
    found = {}
    for line in (REPO / ".env.example").read_text().splitlines():
        match = re.fullmatch(r"(# )?([A-Z][A-Z0-9_]*)=.*", line.strip())
        if match:
            found[match.group(2)] = match.group(1) is None
    return found


def test_server_mode_runs_two_deskmate_replicas_a_worker_a_proxy_postgres_and_chroma_with_health_checks():
    services = _compose("docker-compose.yml")["services"]
    assert services["deskmate"]["deploy"]["replicas"] == 2
    assert services["worker"]["command"] == ["deskmate", "worker"]
    for name in ("deskmate", "worker", "proxy", "db", "chroma"):
        assert "profiles" not in services[name], f"{name} must start with a plain `docker compose up`"
        assert services[name]["healthcheck"]["test"], f"{name} has no health check"
        assert services[name]["restart"] == "unless-stopped"
    # the replicas are reached through the proxy only, which starts once they answer /ready
    assert "ports" not in services["deskmate"] and services["proxy"]["ports"]
    assert "/ready" in " ".join(services["deskmate"]["healthcheck"]["test"])
    assert services["proxy"]["depends_on"]["deskmate"]["condition"] == "service_healthy"
    for name in ("deskmate", "worker"):
        env = _environment(services[name])
        assert (
            env["DESKMATE_DATABASE_URL"].startswith("postgresql://deskmate:")
            and "@db:5432/" in env["DESKMATE_DATABASE_URL"]
        )
        assert (env["CHROMA_MODE"], env["CHROMA_HOST"], env["CHROMA_PORT"]) == ("server", "chroma", "8000")
        assert env["DESKMATE_MODE"] == "${DESKMATE_MODE:-production}"
        assert {dep: c["condition"] for dep, c in services[name]["depends_on"].items()} == {
            "db": "service_healthy",
            "chroma": "service_healthy",
        }
        # a data dir belongs to one process: replicas must not share a named volume on it
        assert not any(str(v).split(":")[1:2] == ["/data"] for v in services[name].get("volumes", []))
    volumes = _compose("docker-compose.yml")["volumes"]
    assert "deskmate-db:/var/lib/postgresql/data" in services["db"]["volumes"] and "deskmate-db" in volumes
    assert "chroma-data:/data" in services["chroma"]["volumes"] and "chroma-data" in volumes


def test_langfuse_is_an_optional_profile():
    services = _compose("docker-compose.yml")["services"]
    langfuse = [name for name in services if name.startswith("langfuse") or name in ("clickhouse", "redis", "minio")]
    assert set(langfuse) == {"langfuse-web", "langfuse-worker", "langfuse-db", "clickhouse", "redis", "minio"}
    assert all(services[name]["profiles"] == ["langfuse"] for name in langfuse)


def test_the_embedded_single_container_file_keeps_everything_in_one_data_volume():
    compose = _compose("docker-compose.embedded.yml")
    assert list(compose["services"]) == ["deskmate"]
    deskmate = compose["services"]["deskmate"]
    env = _environment(deskmate)
    assert env["DESKMATE_DATABASE_URL"] == "" and env["CHROMA_MODE"] == "persistent"
    assert deskmate["volumes"] == ["deskmate-data:/data"] and "deploy" not in deskmate
    assert "/ready" in " ".join(deskmate["healthcheck"]["test"])


@pytest.mark.parametrize("name", ["docker-compose.yml", "docker-compose.embedded.yml"])
def test_every_deskmate_variable_a_compose_file_sets_is_one_deskmate_reads(name):
    compose = _compose(name)
    for service_name, service in compose["services"].items():
        if service.get("image", "").startswith("deskmate") or "build" in service:
            unknown = {k for k in _environment(service) if k not in SETTING_VARIABLES | _RUNTIME}
            assert not unknown, f"{name}: {service_name} sets variables deskmate does not read: {sorted(unknown)}"


def test_env_example_documents_every_setting_and_every_variable_the_compose_files_need():
    example = _env_example()
    missing = sorted(v for _, _, field in setting_fields() for v in variables(field)[:1] if v not in example)
    assert not missing, f".env.example lacks these settings: {missing}"
    interpolated = set()
    for name in ("docker-compose.yml", "docker-compose.embedded.yml"):
        interpolated |= set(_INTERPOLATED.findall((REPO / name).read_text()))
    assert interpolated - set(example) == set(), "compose reads variables .env.example does not mention"
    # nothing in it is a misspelt setting: each line is a setting or a variable a compose file interpolates
    strays = {v for v in example if v not in SETTING_VARIABLES and v not in interpolated}
    assert not strays, f".env.example names variables nothing reads: {sorted(strays)}"
    assert not [
        v
        for v in example
        if v.startswith(_DESKMATE_PREFIXES) and v not in SETTING_VARIABLES and not v.startswith("LANGFUSE_")
    ]
    # the secrets production refuses to start without are the ones left to fill in, empty
    assert {v for v, set_ in example.items() if set_} == {
        "POSTGRES_PASSWORD",
        "DESKMATE_ADMIN_KEY",
        "DESKMATE_USER_TOKEN_SECRET",
    }
    text = (REPO / ".env.example").read_text()
    assert re.search(r"^(POSTGRES_PASSWORD|DESKMATE_ADMIN_KEY|DESKMATE_USER_TOKEN_SECRET)=\S", text, re.M) is None


def test_the_proxy_applies_the_limits_and_timeouts_the_operations_page_recommends():
    services = _compose("docker-compose.yml")["services"]
    mount = next(v for v in services["proxy"]["volumes"] if v.endswith("/etc/nginx/nginx.conf:ro"))
    conf = (REPO / mount.split(":")[0]).read_text()
    recommended = re.findall(r"^(\w+)\s+(\S+?);", _operations_nginx_block(), re.M)
    assert len(recommended) >= 6
    for directive, value in recommended:
        assert re.search(rf"^\s*{directive}\s+{re.escape(value)};", conf, re.M), f"nginx.conf lacks {directive} {value}"
    assert "proxy_pass http://deskmate;" in conf and "proxy_buffering off;" in conf
    max_upload_mb = IngestionSettings.model_fields["max_upload_bytes"].default / 2**20
    assert int(re.search(r"client_max_body_size\s+(\d+)m;", conf).group(1)) > max_upload_mb


def _operations_nginx_block() -> str:
    text = (REPO / "docs" / "operations.md").read_text()
    return text.split("```nginx", 1)[1].split("```", 1)[0]
