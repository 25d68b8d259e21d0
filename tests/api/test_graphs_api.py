"""GET /graphs and GET /graphs/{name} through the real app, and langgraph.json for LangGraph Studio."""

import importlib
import json
import types

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from graphs.support import turn_input, turn_result
from tests.conftest import FIXTURE_KB, REPO

SUPPORT_NODES = [
    "redact",
    "classify",
    "translate",
    "embed_query",
    "retrieve",
    "decide",
    "check_status",
    "answer",
    "clarify",
    "converse",
    "troubleshoot",
    "ticket",
    "search_tickets",
    "use_integration",
    "localize",
    "respond",
]


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    settings = Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("data"), kb_dir=FIXTURE_KB)
    with TestClient(create_app(settings), base_url="http://localhost") as test_client:
        yield test_client


@pytest.mark.slow
def test_the_compiled_graphs_are_listed(client):
    graphs = {g["name"]: g for g in client.get("/graphs").json()["graphs"]}
    assert set(graphs) == {"support", "indexing", "status"}
    assert graphs["support"]["nodes"] == len(SUPPORT_NODES) and graphs["indexing"]["nodes"] == 5
    assert all(g["description"] for g in graphs.values())


@pytest.mark.slow
def test_a_graph_comes_with_its_structure_and_a_mermaid_diagram_from_the_compiled_graph(client):
    support = client.get("/graphs/support").json()
    assert [n["id"] for n in support["nodes"]] == ["__start__", *SUPPORT_NODES, "__end__"]
    edges = {(e["source"], e["target"]): e["conditional"] for e in support["edges"]}
    assert edges[("redact", "classify")] is False and edges[("decide", "troubleshoot")] is True
    assert edges[("check_status", "decide")] is False and edges[("troubleshoot", "ticket")] is True
    mermaid = support["mermaid"]
    assert "graph TD;" in mermaid and "\tdecide -.-> troubleshoot;" in mermaid
    assert all(f"\t{node}({node})" in mermaid for node in SUPPORT_NODES)
    assert support["svg"].startswith("<svg") and support["svg"].count('class="node') == len(SUPPORT_NODES) + 2
    assert "visited" not in support["svg"]  # no run, no highlighted path


@pytest.mark.slow
def test_an_unknown_graph_is_a_404_that_names_the_graphs(client):
    missing = client.get("/graphs/nope")
    assert missing.status_code == 404 and "support, indexing, status" in missing.json()["detail"]


def test_langgraph_json_points_at_factories_that_build_runnable_graphs(monkeypatch, fake_kb_context):
    config = json.loads((REPO / "langgraph.json").read_text())
    assert config["dependencies"] == ["."]
    studio = importlib.import_module("app.studio")
    # the factories build deskmate's adapters on first call; here they get the fake KB's instead
    context = fake_kb_context()
    monkeypatch.setattr(
        studio,
        "default_resources",
        lambda: types.SimpleNamespace(
            retrieval_context=context,
            embedder=context.embedder,
            index=context.index,
            parser=object(),
            settings=Settings(_env_file=None),
        ),
    )
    built = {}
    for name, target in config["graphs"].items():
        path, attribute = target.split(":")
        assert (REPO / path).is_file() and path == "./app/studio.py"
        built[name] = getattr(studio, attribute)({})
        assert set(built[name].get_graph().nodes) >= {"__start__", "__end__"}
    assert set(built) == {"support", "indexing", "status"}
    # a run from Studio brings no context: the graph's default context answers it
    reply = turn_result(built["support"].invoke(turn_input("how do I connect to the vpn on linux")))
    assert reply["action"] == "answer" and "sudo openconnect vpn.example.test" in reply["answer"]
    # what Studio sends: JSON, the new message's record under LangGraph's `__overwrite__`
    typed = turn_result(built["support"].invoke({"turn": {"__overwrite__": {"query": "how do I connect to the vpn"}}}))
    assert typed["action"] == "answer" and typed["sources"][0]["source"] == "kb/vpn-connect.md"
    report = built["status"].invoke({"page_url": ""})["report"]
    assert report["ok"] is False and "DESKMATE_STATUS_PAGE_URL" in report["error"]


def test_importing_the_studio_module_loads_no_model():
    studio = importlib.reload(importlib.import_module("app.studio"))
    assert studio.default_resources.cache_info().currsize == 0
