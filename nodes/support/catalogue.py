"""The action catalogue: which of the decision agent's actions the LLM is offered for one message.

A tool-selection pipeline, applied to deskmate's actions:
1. context filter — an action is offered only when this deployment can carry it out (`requires`);
2. embedding search — the message's embedding against each action's example queries (cosine, the best
   example per action); the `top_k` best of the non-core actions are kept;
3. core merge — the core actions (default answer, clarify, create_ticket) are always offered.

Configured integrations (read-only lookups in other systems, DESKMATE_CONFIG `integrations:`) join the
catalogue as actions with their own example queries; without an LLM, decide routes a message to one when
it is closest to that integration's examples (nodes/support/decide.py, integration_choice).

The example queries are embedded once, at start-up (app/resources.py), with the app's embedder; a turn
costs one small matrix-vector product, reusing the query embedding retrieval already made.

Degradation, each step logged with its reason and recorded in the state (`action_selection`):
embedding unavailable (not embedded at start-up, or the message cannot be embedded) → every action the
context filter allows; the context filter itself fails (e.g. the index is unreachable) → every action.

Offering is advice to the LLM, not authority: decide treats a proposal outside the offered set like any
other invalid proposal, and the policy in code decides.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Literal, Sequence

import numpy as np

from core.errors import EmbeddingError

if TYPE_CHECKING:  # graphs/support.py imports this module; the names are for the type checker only
    from core.ports import Embedder
    from graphs.support import SupportContext

log = logging.getLogger(__name__)

SelectionMode = Literal["embedding", "context_filter", "all"]
DEFAULT_CORE_ACTIONS: tuple[str, ...] = ("answer", "clarify", "create_ticket")
DEFAULT_TOP_K = 2  # of the 4 non-core built-ins: the LLM sees 5 of the 7 actions
MAX_ACTIONS = 50  # bounds the catalogue (and so the per-turn matrix product)
MAX_EXAMPLES = 8  # example queries per action

# What an action may require of the deployment. Each is checked at most once per selection.
REQUIREMENTS: dict[str, Callable[[SupportContext], bool]] = {
    "knowledge_base": lambda ctx: ctx.index.count() > 0,  # something indexed to search or take steps from
    "status_page": lambda ctx: ctx.status is not None,  # DESKMATE_STATUS_PAGE_URL is set
    "ticket_desk": lambda ctx: ctx.tickets is not None,  # tickets can be created (not only contact info)
}


@dataclass(frozen=True)
class ActionSpec:
    """One action the decision LLM may choose, as the LLM and the embedding search see it."""

    name: str
    description: str  # one line, shown to the LLM
    examples: tuple[str, ...]  # user messages this action fits; embedded at start-up
    requires: tuple[str, ...] = ()  # names in REQUIREMENTS that must all hold for the action to be offered
    rule: str = ""  # a decision rule shown to the LLM while this action is offered

    def __post_init__(self) -> None:
        if not self.name or not self.description.strip():
            raise ValueError("an action needs a name and a description")
        if not 1 <= len(self.examples) <= MAX_EXAMPLES or not all(e.strip() for e in self.examples):
            raise ValueError(f"action {self.name!r} needs 1 to {MAX_EXAMPLES} non-empty example queries")
        unknown = [r for r in self.requires if r not in REQUIREMENTS]
        if unknown:
            raise ValueError(
                f"action {self.name!r} requires unknown condition(s) {', '.join(unknown)}; "
                f"known: {', '.join(REQUIREMENTS)}"
            )


def integration_action(name: str, description: str, examples: Sequence[str]) -> ActionSpec:
    """A configured integration (DESKMATE_CONFIG `integrations:`) as an action the decision agent may choose."""
    return ActionSpec(
        name,
        f"look it up in {name}: {description}",
        tuple(examples)[:MAX_EXAMPLES],
        rule=f"Choose {name} only when the message asks for what it returns ({description}).",
    )


@dataclass(frozen=True)
class ActionSelection:
    """The actions offered for one message, how they were chosen, and why a fallback happened."""

    offered: tuple[str, ...]
    mode: SelectionMode
    reason: str = ""  # "" when the embedding search ran
    scores: dict[str, float] = field(default_factory=dict)  # best example similarity per allowed action


class ActionCatalogue:
    """The decision agent's actions with their example queries, embedded once; `select` runs per turn."""

    def __init__(
        self,
        specs: Sequence[ActionSpec],
        *,
        core: Sequence[str] = DEFAULT_CORE_ACTIONS,
        top_k: int = DEFAULT_TOP_K,
    ) -> None:
        names = [s.name for s in specs]
        if not 1 <= len(specs) <= MAX_ACTIONS or len(set(names)) != len(names):
            raise ValueError(f"an action catalogue needs 1 to {MAX_ACTIONS} actions with distinct names")
        unknown = [n for n in core if n not in names]
        if unknown:  # a core action the catalogue lacks
            raise ValueError(f"unknown action(s) {', '.join(unknown)}; known: {', '.join(names)}")
        if top_k < 0:
            raise ValueError("top_k must be 0 or more")
        self.specs: dict[str, ActionSpec] = {s.name: s for s in specs}
        self.names: tuple[str, ...] = tuple(names)
        self.core: tuple[str, ...] = tuple(n for n in names if n in set(core))
        self.top_k = top_k
        self._matrix: np.ndarray | None = None  # one L2-normalised row per example, grouped by action
        self._starts = np.cumsum([0] + [len(s.examples) for s in specs[:-1]])  # first row of each action
        self._unavailable = "the action examples were not embedded"

    @classmethod
    def build(
        cls,
        embedder: Embedder | None,
        specs: Sequence[ActionSpec],
        *,
        core: Sequence[str] = DEFAULT_CORE_ACTIONS,
        top_k: int = DEFAULT_TOP_K,
    ) -> ActionCatalogue:
        """A catalogue with its examples embedded (start-up). If embedding fails, the catalogue still works:
        every turn falls back to the context filter, and says why."""
        catalogue = cls(specs, core=core, top_k=top_k)
        if embedder is None:
            catalogue._unavailable = "no embedder is configured for action selection"
            log.warning(
                "action catalogue: %s; the decision LLM is offered every allowed action", catalogue._unavailable
            )
            return catalogue
        try:
            catalogue.embed(embedder)
        except Exception as exc:  # degrade on purpose: selection falls back to the context filter
            catalogue._unavailable = f"the action examples could not be embedded at start-up ({exc})"
            log.error("action catalogue: %s; the decision LLM is offered every allowed action", catalogue._unavailable)
        return catalogue

    def embed(self, embedder: Embedder) -> None:
        """Embed every example query in one batch; raises EmbeddingError on a malformed result."""
        examples = [e for s in self.specs.values() for e in s.examples]
        matrix = np.asarray(embedder.embed_documents(examples), dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(examples) or not np.isfinite(matrix).all():
            raise EmbeddingError(f"expected {len(examples)} finite vectors, got an array of shape {matrix.shape}")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        if (norms == 0).any():
            raise EmbeddingError("an example query embedded to a zero vector")
        self._matrix = matrix / norms

    @property
    def embedded(self) -> bool:
        return self._matrix is not None

    def context_filter(self, ctx: SupportContext) -> tuple[str, ...]:
        """The actions this deployment can carry out; each requirement is checked once."""
        needed = {r for s in self.specs.values() for r in s.requires}
        holds = {r: bool(REQUIREMENTS[r](ctx)) for r in sorted(needed)}
        allowed = tuple(n for n in self.names if all(holds[r] for r in self.specs[n].requires))
        if not allowed:
            raise ValueError("no action meets its requirements")
        return allowed

    def scores(self, query: str, query_embedding: Sequence[float] | None, embedder: Embedder) -> dict[str, float]:
        """Cosine similarity of the message to each action's closest example query."""
        if self._matrix is None:
            raise EmbeddingError(self._unavailable)
        dimension = self._matrix.shape[1]
        vector = np.asarray(query_embedding if query_embedding is not None else [], dtype=np.float32)
        if vector.shape != (dimension,):  # retrieval did not run this turn (or used another model)
            vector = np.asarray(embedder.embed_query(query), dtype=np.float32)
        if vector.shape != (dimension,):
            raise EmbeddingError(
                f"the message embedding has {vector.size} dimensions, the action examples "
                f"{dimension}: they were embedded with another model"
            )
        norm = float(np.linalg.norm(vector))
        if not np.isfinite(norm) or norm == 0:
            raise EmbeddingError("the message embedded to a zero or non-finite vector")
        best = np.maximum.reduceat(self._matrix @ (vector / norm), self._starts)
        return {name: round(float(score), 4) for name, score in zip(self.names, best)}

    def select(
        self, ctx: SupportContext, *, query: str, query_embedding: Sequence[float] | None = None
    ) -> ActionSelection:
        """Context filter → top-k by similarity → core merge, degrading as the module docstring says."""
        try:
            allowed = self.context_filter(ctx)
        except Exception as exc:  # e.g. IndexUnavailable from count(): offering too much beats offering nothing
            reason = f"the context filter failed ({exc})"
            log.warning("action selection: %s; offering every action", reason)
            return ActionSelection(self.names, "all", reason)
        try:
            scores = self.scores(query, query_embedding, ctx.embedder)
        except Exception as exc:  # any embedder failure: the filtered set is still a correct, larger offer
            reason = f"embedding unavailable ({exc})"
            log.warning("action selection: %s; offering every allowed action", reason)
            return ActionSelection(allowed, "context_filter", reason)
        candidates = sorted((n for n in allowed if n not in self.core), key=lambda n: -scores[n])
        chosen = set(candidates[: self.top_k]) | set(self.core)
        offered = tuple(n for n in allowed if n in chosen)  # catalogue order: a stable prompt
        log.debug("action selection: offered %s (scores %s)", ", ".join(offered), scores)
        return ActionSelection(offered, "embedding", "", {n: scores[n] for n in allowed})

    def describe(self, names: Sequence[str]) -> str:
        """The offered actions as prompt lines: `- name: description`."""
        return "\n".join(f"- {n}: {self.specs[n].description}" for n in names if n in self.specs)

    def rules(self, names: Sequence[str]) -> str:
        """The decision rules of the offered actions, as prompt lines."""
        return "\n".join(f"- {self.specs[n].rule}" for n in names if n in self.specs and self.specs[n].rule)
