"""What importing the API app costs every start: no model or model library (those load in the lifespan), and no
library that only some deployments use (Postgres' driver, the sign-in token library)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOADED_LATER = ("chromadb", "onnxruntime", "presidio_analyzer", "spacy", "torch", "tokenizers")
ONLY_SOME_DEPLOYMENTS = ("psycopg", "psycopg_pool", "jwt", "cryptography")


def test_importing_the_app_loads_no_model_library_and_nothing_only_some_deployments_use():
    names = LOADED_LATER + ONLY_SOME_DEPLOYMENTS
    probe = f"import sys, app.main; print(' '.join(m for m in {names!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == []
