"""The ONNX embedding backend serves through the real app without ever importing torch (a process of its own,
so nothing this test process loaded counts)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from tests.conftest import FIXTURE_KB, REPO

SERVE_AND_REPORT = """
import json, sys
from fastapi.testclient import TestClient
from app.main import create_app
from app.settings import Settings

with TestClient(create_app(Settings(_env_file=None)), base_url="http://localhost") as client:
    reply = client.post("/chat", json={"message": "How do I connect to the VPN from home?"})
    ready = client.get("/ready").status_code
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "sentence_transformers", "transformers"))
print(json.dumps({"status": reply.status_code, "ready": ready, "reply": reply.json(), "heavy": heavy}))
"""


def run_app(data_dir, backend: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKMATE_", "GROQ_", "LANGFUSE_", "CHROMA_"))}
    env |= {
        "DESKMATE_DATA_DIR": str(data_dir),
        "DESKMATE_KB_DIR": str(FIXTURE_KB),
        "DESKMATE_EMBEDDING_BACKEND": backend,
        "DESKMATE_LOG_LEVEL": "WARNING",
        "DESKMATE_PARSE_TIMEOUT_S": "120",  # a busy shared machine must not refuse the fixture files
        "PYTHONPATH": str(REPO),
    }
    done = subprocess.run(
        [sys.executable, "-c", SERVE_AND_REPORT], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_onnx_backend_answers_from_the_kb_and_the_serving_process_never_imports_torch(tmp_path, onnx_model_cache):
    data_dir = tmp_path / "data"
    # the export a first start would run (in a child process) is already in this data dir's model cache
    shutil.copytree(onnx_model_cache, data_dir / "models" / "onnx")
    report = run_app(data_dir, "onnx")
    assert report["status"] == 200 and report["ready"] == 200
    assert report["heavy"] == []
    sources = {s.get("source", "") for s in report["reply"].get("sources", [])}
    assert any("vpn" in source for source in sources), report["reply"]
