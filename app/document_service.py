"""Documents as the HTTP edge needs them: an upload's context checked, a document found for a caller who may
read it, and its original file as deskmate keeps it (GET /documents/{id}/content)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from app.includes import IncludeResolver
from app.indexing_service import IndexingService, supported_files
from core.filters import AUDIENCE_FIELD, may_read, normalise_audience, validate_context
from nodes.indexing.steps import content_version

if TYPE_CHECKING:
    from app.resources import Resources


def stored_original(resources: Resources, info: dict) -> bytes | None:
    """The file this document was indexed from, if deskmate keeps it: uploads, and the bundled KB folder."""
    prefix, _, rest = info["source"].partition("/")
    stored = resources.originals.get(info["doc_id"], info["version"]) if resources.originals else None
    if stored is not None:  # uploads (and `deskmate ingest`) keep the file in the database
        return stored[1]
    if prefix == "uploads":  # where deskmate kept uploads before the database did
        path = resources.settings.storage.uploads_dir / f"{info['doc_id']}-{rest}"
    elif prefix == "kb" and resources.settings.storage.kb_dir:
        root = resources.settings.storage.kb_dir.resolve()
        path = (root / rest).resolve()
        if not path.is_relative_to(root):
            return None
    else:
        return None
    if not path.is_file():
        return None
    data = path.read_bytes()
    if content_version(data) == info["version"]:
        return data
    # indexed with its includes resolved (within the KB folder; an upload alone has none to resolve)
    if prefix == "kb":
        batch = IndexingService.sources(supported_files(root), root=root, prefix="kb")
        resolver = IncludeResolver.from_paths(batch)
    else:
        resolver = IncludeResolver.from_bytes({info["source"]: data})
    expanded = resolver.expand(info["source"], data)
    return data if content_version(expanded) == info["version"] else None  # changed on disk since it was indexed


def upload_context(fields: dict, audience: list[str] | None) -> dict:
    """An upload's document context: lower-cased lists, all three mandatory fields or none, and the groups that
    may retrieve it (InvalidFilter → 422 on a bad field or group name)."""
    document_context = validate_context(fields)
    groups = normalise_audience(audience)
    if groups:
        document_context[AUDIENCE_FIELD] = groups
    return document_context


def readable_document(resources: Resources, doc_id: str, groups: frozenset[str] | None):
    """(info, index) of a document in any collection that a caller with these groups may read (None: an admin or
    sign-in off, every document); None when there is none — a document outside the caller's audience is as if it
    did not exist."""
    if not re.fullmatch(r"[0-9a-f]{16}", doc_id):  # ids are content hashes of the source
        return None
    for indexer in [resources.indexer, *resources.indexers.values()]:
        info = indexer.index.get_document(doc_id)
        if info is not None:
            if groups is not None and not may_read(info, groups):
                return None
            return info, indexer.index
    return None
