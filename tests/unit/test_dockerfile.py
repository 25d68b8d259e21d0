"""The image builds from what the Dockerfile copies: every package the project installs must be copied in."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_image_copies_every_package_the_project_installs():
    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {pattern.rstrip("*") for pattern in include}
    copied = set(re.findall(r"^COPY (\w+) \./\1\s*$", (ROOT / "Dockerfile").read_text(), re.M))
    assert packages <= copied, f"the Dockerfile does not copy {sorted(packages - copied)}"
