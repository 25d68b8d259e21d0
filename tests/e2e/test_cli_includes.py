"""`deskmate ingest <folder>` of a docs-site knowledge base, as a user runs it: includes resolve within the
folder and the fragments are reported, not indexed."""

import subprocess

import pytest

from tests.conftest import FIXTURES
from tests.e2e.test_cli_and_http import DESKMATE, _env

pytestmark = pytest.mark.slow


def test_ingesting_a_folder_resolves_its_includes_and_skips_the_fragments(tmp_path):
    env = _env(tmp_path / "data")
    run = subprocess.run(
        DESKMATE + ["ingest", "--quiet", str(FIXTURES / "docs_sites")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "3 included in other files, 5 new" in run.stdout
    ask = subprocess.run(
        DESKMATE + ["ask", "--local", "--no-sync", "can I use the vpn client on my personal laptop"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ask.returncode == 0, ask.stderr
    assert "company-managed devices only" in ask.stdout and "vpn-support-disclaimer" not in ask.stdout
