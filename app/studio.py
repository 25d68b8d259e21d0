"""deskmate's graphs for LangGraph Studio and `langgraph dev` (see langgraph.json at the repository root).

    pip install -U "langgraph-cli[inmem]"      # once, in deskmate's virtual environment
    langgraph dev                              # in the repository root; opens LangGraph Studio

`langgraph dev` imports this module and calls a factory per graph. Each factory returns the same
compiled graph the service runs (`build_support_graph()`, …) with deskmate's adapters — the local
embedding model, Chroma, the redactor, the LLM if one is configured — as its default run context, so
a run started from Studio needs no context of its own. The adapters are built from the environment
(.env and DESKMATE_* variables, as for `deskmate serve`) the first time a factory is called, never at
import. The LangGraph server brings its own checkpointer, so the support graph is compiled without one.

This is the one module under graphs/ that reaches into app/, lazily and only inside the factories: it
is an entry point, like app/cli.py, and nothing in the service imports it.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from langgraph.runtime import Runtime

from core.errors import StatusUnavailable
from graphs.indexing import build_indexing_graph
from graphs.status import StatusContext, build_status_graph
from graphs.support import build_support_graph

log = logging.getLogger(__name__)
# where a parent runtime travels in a run's config; LangGraph adopts its `context` when the run has none
_RUNTIME_KEY = "__pregel_runtime"


def _with_default_context(graph, context: Any):
    """The compiled graph, bound to `context` for runs that bring none (a Pregel copy, still drawable)."""
    return graph.with_config(configurable={_RUNTIME_KEY: Runtime(context=context)})


@functools.lru_cache(maxsize=1)
def default_resources():
    """deskmate's adapters, built once per process from the environment, the bundled KB indexed."""
    from app.indexing_service import sync_bundled_kb
    from app.resources import build_resources
    from app.settings import Settings

    resources = build_resources(Settings())
    sync_bundled_kb(resources)
    log.info("LangGraph Studio: deskmate adapters ready")
    return resources


class _NoStatusPage:
    """StatusSource when DESKMATE_STATUS_PAGE_URL is unset: every check says so."""

    page_url = ""

    def fetch_summary(self) -> dict:
        raise StatusUnavailable("no status page is configured (DESKMATE_STATUS_PAGE_URL)")


def support(config: dict | None = None):
    """The support graph (one chat turn). Input: {"turn": {"__overwrite__": {"query": "..."}}, "user_os": "windows"}
    (`__overwrite__`: a new message replaces the last turn record; graphs/support.py turn_input)."""
    return _with_default_context(build_support_graph(), default_resources().retrieval_context)


def indexing(config: dict | None = None):
    """The indexing graph (one document). Input: {"source": "kb/x.md", "data": <bytes>}."""
    from graphs.indexing import IndexingContext

    resources = default_resources()
    context = IndexingContext(
        embedder=resources.embedder,
        index=resources.index,
        parser=resources.parser,
        chunk_max_tokens=resources.settings.ingestion.chunk_max_tokens,
    )
    return _with_default_context(build_indexing_graph(), context)


def status(config: dict | None = None):
    """The status graph (one status-page check). Input: {"page_url": ""}."""
    from app.adapters.status_page import StatuspageSource

    settings = default_resources().settings
    source = (
        StatuspageSource(settings.integrations.status_page_url, timeout_s=settings.integrations.status_timeout_s)
        if settings.integrations.status_page_url
        else _NoStatusPage()
    )
    return _with_default_context(build_status_graph(), StatusContext(source=source))
