"""GET /graphs and GET /graphs/{name}: the compiled LangGraph graphs, their structure and diagrams."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException

from app.deps import get_resources
from app.resources import Resources
from app.ui.diagram import GraphShape, graph_shape, svg_diagram
from graphs.status import build_status_graph

router = APIRouter(tags=["graphs"])

DESCRIPTIONS = {
    "support": "One chat turn: redact → classify → search → decide → answer, clarify, troubleshoot, check the "
    "status page or raise a ticket → respond.",
    "indexing": "One document: load (skip unchanged) → parse → chunk → embed → store.",
    "status": "The company status page: fetch → parse → summarise (or report why it is unavailable).",
}


def graph_shapes(resources: Resources) -> dict[str, GraphShape]:
    """The app's compiled graphs, read off the compiled objects (a few ms; admin pages ask rarely)."""
    compiled = {
        "support": resources.chat.graph,
        "indexing": resources.indexer.graph,
        "status": build_status_graph(),
    }  # compiled here too: the app builds it only when a page is set
    return {name: graph_shape(graph, name) for name, graph in compiled.items()}


def shape_or_404(resources: Resources, name: str) -> GraphShape:
    shapes = graph_shapes(resources)
    if name not in shapes:
        raise HTTPException(
            status_code=404,
            detail=f"There is no graph called {name!r}; the graphs are {', '.join(shapes)} (GET /graphs).",
        )
    return shapes[name]


def _structure(shape: GraphShape) -> dict:
    return {
        "name": shape.name,
        "description": DESCRIPTIONS.get(shape.name, ""),
        "nodes": [{"id": n, "name": n} for n in shape.nodes],
        "edges": [{"source": s, "target": t, "conditional": c} for s, t, c in shape.edges],
    }


@router.get("/graphs")
def list_graphs(resources: Resources = Depends(get_resources)) -> dict:
    """The compiled graphs: every chat turn, document indexing and status check runs one of them."""
    return {
        "graphs": [
            {
                "name": s.name,
                "description": DESCRIPTIONS.get(s.name, ""),
                "nodes": len([n for n in s.nodes if not n.startswith("__")]),
                "edges": len(s.edges),
            }
            for s in graph_shapes(resources).values()
        ]
    }


@router.get("/graphs/{name}")
def get_graph(name: str, resources: Resources = Depends(get_resources)) -> dict:
    """One graph: nodes, edges (conditional ones marked), its Mermaid diagram (from
    `compiled.get_graph().draw_mermaid()`) and the same drawing as SVG."""
    shape = shape_or_404(resources, name)
    return _structure(shape) | {"mermaid": shape.mermaid, "svg": svg_diagram(shape)}
