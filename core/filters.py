"""Document-context metadata and the hierarchical search filter built on it.

Every document may carry a context: `context_type`,
`content_domain` and `document_category` (non-empty lists, lower-cased) plus optional
`relevance_tags` and `description`. A search filter names some of those fields:

- primary fields (`context_type`, `content_domain`) must match: a document qualifies when, for
  every primary field given, it carries at least one of the requested values;
- secondary fields (`document_category`, `relevance_tags`) only rank: documents matching more
  of them come first;
- fallback: when no document matches the primary fields, documents matching any secondary
  value are searched instead (OR logic), as the seed prescribes.

A filter naming any other field is refused (InvalidFilter → 422), never silently ignored.

Document-level access is separate from these (callers cannot name it): a document uploaded with an
`audience` (groups) has `restricted: True` and its `audience` list on every chunk, and `access_where`
gives the clause that lets a caller's search see only unrestricted documents and those naming one of the
caller's groups. It is ANDed into every vector and BM25 query, so a restricted chunk never becomes a
candidate for anyone outside its audience.
Pure data and functions: the API validates with them, the index adapters apply them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Mapping

from core.errors import InvalidFilter

PRIMARY_FIELDS: tuple[str, ...] = ("context_type", "content_domain")
SECONDARY_FIELDS: tuple[str, ...] = ("document_category", "relevance_tags")
FILTER_FIELDS: tuple[str, ...] = PRIMARY_FIELDS + SECONDARY_FIELDS
REQUIRED_CONTEXT_FIELDS: tuple[str, ...] = ("context_type", "content_domain", "document_category")
LIST_CONTEXT_FIELDS: tuple[str, ...] = REQUIRED_CONTEXT_FIELDS + ("relevance_tags",)
MAX_VALUES = 20  # per field, in a filter or a document context
MAX_VALUE_CHARS = 64
MAX_DESCRIPTION_CHARS = 500


def normalise_values(field: str, raw: Any) -> list[str]:
    """A value or list of values → lower-cased, stripped, de-duplicated, non-empty strings.

    A single string may hold several comma-separated values ("technical, how-to").
    """
    if raw is None:
        return []
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
        raise InvalidFilter(f"'{field}' must be a string or a list of strings.")
    values: list[str] = []
    for item in items:
        for part in item.split(","):
            value = " ".join(part.split()).lower()
            if not value:
                continue
            if len(value) > MAX_VALUE_CHARS:
                raise InvalidFilter(f"'{field}' value '{value[:20]}…' is longer than {MAX_VALUE_CHARS} characters.")
            if value not in values:
                values.append(value)
    if len(values) > MAX_VALUES:
        raise InvalidFilter(f"'{field}' has {len(values)} values; at most {MAX_VALUES} are allowed.")
    return values


def validate_context(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A document context from upload fields. Empty input → {} (no context); otherwise the three
    mandatory fields must each hold at least one value (fail fast on the fields searches depend on)."""
    context: dict[str, Any] = {}
    for field in LIST_CONTEXT_FIELDS:
        values = normalise_values(field, raw.get(field))
        if values:
            context[field] = values
    description = raw.get("description")
    if not context and not (isinstance(description, str) and description.strip()):
        return {}  # blank form fields mean "no context"
    missing = [f for f in REQUIRED_CONTEXT_FIELDS if f not in context]
    if missing:
        raise InvalidFilter(
            f"Document context is incomplete: {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} required (non-empty, comma-separated) whenever any of "
            f"{', '.join(LIST_CONTEXT_FIELDS)} or description is given."
        )
    if description is not None:
        if not isinstance(description, str):
            raise InvalidFilter("'description' must be a string.")
        description = " ".join(description.split())
        if len(description) > MAX_DESCRIPTION_CHARS:
            raise InvalidFilter(f"'description' is longer than {MAX_DESCRIPTION_CHARS} characters.")
        if description:
            context["description"] = description
    return context


@dataclass(frozen=True)
class SearchFilter:
    """A validated filter: field → allowed values (OR within a field)."""

    primary: tuple[tuple[str, tuple[str, ...]], ...] = ()
    secondary: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.primary or self.secondary)

    def as_dict(self) -> dict[str, list[str]]:
        return {field: list(values) for field, values in self.primary + self.secondary}


def parse_filter(raw: Mapping[str, Any] | None) -> SearchFilter:
    """Validate a filter from the API; unknown fields and empty value lists raise InvalidFilter."""
    if not raw:
        return SearchFilter()
    if not isinstance(raw, Mapping):
        raise InvalidFilter('\'filters\' must be an object such as {"context_type": ["technical"]}.')
    unknown = sorted(set(raw) - set(FILTER_FIELDS))
    if unknown:
        raise InvalidFilter(
            f"Unknown filter field(s): {', '.join(unknown)}. Filterable fields: {', '.join(FILTER_FIELDS)}."
        )
    primary: list[tuple[str, tuple[str, ...]]] = []
    secondary: list[tuple[str, tuple[str, ...]]] = []
    for field in FILTER_FIELDS:
        if field not in raw:
            continue
        values = normalise_values(field, raw[field])
        if not values:
            raise InvalidFilter(f"Filter '{field}' has no values; give at least one or leave the field out.")
        (primary if field in PRIMARY_FIELDS else secondary).append((field, tuple(values)))
    return SearchFilter(primary=tuple(primary), secondary=tuple(secondary))


def _any_of(field: str, values: tuple[str, ...]) -> dict[str, Any]:
    clauses = [{field: {"$contains": v}} for v in values]
    return clauses[0] if len(clauses) == 1 else {"$or": clauses}


def _all_of(clauses: list[dict[str, Any]]) -> dict[str, Any] | None:
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def primary_where(search_filter: SearchFilter) -> dict[str, Any] | None:
    """The Chroma `where` clause of the primary fields (None when there are none)."""
    return _all_of([_any_of(f, v) for f, v in search_filter.primary])


AUDIENCE_FIELD: Final = "audience"
RESTRICTED_FIELD: Final = "restricted"
# list fields every chunk of a document carries: its context, and who may read it
CHUNK_LIST_FIELDS: tuple[str, ...] = LIST_CONTEXT_FIELDS + (AUDIENCE_FIELD,)


def normalise_audience(raw: Any) -> list[str]:
    """Upload form → group names (lower-cased, comma-separated or repeated); [] means everyone."""
    return normalise_values(AUDIENCE_FIELD, raw)


def access_where(groups: frozenset[str] | None) -> dict[str, Any] | None:
    """Which chunks a caller in `groups` may retrieve; None means every chunk (admin tools only).

    `$ne: True` also matches chunks indexed before audiences existed (they carry no flag): public.
    """
    if groups is None:
        return None
    public = {RESTRICTED_FIELD: {"$ne": True}}
    if not groups:
        return public
    return {"$or": [public] + [{AUDIENCE_FIELD: {"$contains": g}} for g in sorted(groups)]}


def split_access_clause(where: dict[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(`where` less the clause `access_where` added, that clause): alone, or one of an AND's clauses. (where, None)
    when it holds none."""
    if not where:
        return None, None
    if _is_access_clause(where):
        return None, where
    if "$and" in where:
        access = [c for c in where["$and"] if _is_access_clause(c)]
        if len(access) == 1:
            return _all_of([c for c in where["$and"] if not _is_access_clause(c)]), access[0]
    return where, None


def _is_access_clause(clause: Mapping[str, Any]) -> bool:
    public = {RESTRICTED_FIELD: {"$ne": True}}
    if clause == public:
        return True
    alternatives = clause.get("$or") if len(clause) == 1 else None
    return (
        isinstance(alternatives, list)
        and bool(alternatives)
        and alternatives[0] == public
        and all(
            isinstance(c, dict) and len(c) == 1 and set(c.get(AUDIENCE_FIELD, {})) == {"$contains"}
            for c in alternatives[1:]
        )
    )


def combine_where(*clauses: dict[str, Any] | None) -> dict[str, Any] | None:
    """AND of the given clauses, skipping None."""
    return _all_of([c for c in clauses if c])


def may_read(metadata: Mapping[str, Any], groups: frozenset[str] | None) -> bool:
    """The same rule as `access_where`, for one chunk or one document's manifest entry (downloads)."""
    flagged = {**metadata, RESTRICTED_FIELD: bool(metadata.get(RESTRICTED_FIELD) or metadata.get(AUDIENCE_FIELD))}
    return matches_where(flagged, access_where(groups))


def fallback_where(search_filter: SearchFilter) -> dict[str, Any] | None:
    """OR over every secondary value: the fallback when no document matches the primary fields."""
    clauses = [_any_of(f, v) for f, v in search_filter.secondary]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$or": clauses}


def matches_where(metadata: Mapping[str, Any], where: Mapping[str, Any] | None) -> bool:
    """Evaluate the subset of Chroma's `where` language these filters produce ($and, $or, $contains, $ne)."""
    if not where:
        return True
    if "$and" in where:
        return all(matches_where(metadata, c) for c in where["$and"])
    if "$or" in where:
        return any(matches_where(metadata, c) for c in where["$or"])
    ((field, condition),) = where.items()
    value = metadata.get(field)
    # a dict is checked first: every chunk a search returns is read against the access clause, and the ABC check
    # of Mapping costs more than the rule itself
    if isinstance(condition, dict) or isinstance(condition, Mapping):
        if "$contains" in condition:
            return isinstance(value, (list, tuple)) and condition["$contains"] in value
        if "$ne" in condition:
            return value != condition["$ne"]  # a missing field is "not equal", as in Chroma
    return value == condition


def secondary_matches(metadata: Mapping[str, Any], search_filter: SearchFilter) -> float:
    """Share (0..1) of the filter's secondary fields the chunk's document matches."""
    if not search_filter.secondary:
        return 0.0
    hits = sum(1 for field, values in search_filter.secondary if any(v in (metadata.get(field) or ()) for v in values))
    return hits / len(search_filter.secondary)
