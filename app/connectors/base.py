"""The connector interface: what every synced source (Confluence, a website, a knowledge base) implements.

A connector only talks to its source. It never indexes, stores or logs document text: `app/source_sync.py`
drives it (changes since a cursor → fetch each → index; deletions → remove; permissions → audiences),
so the same sync runs in a background task today and as a job on an ingestion queue tomorrow.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field


class ConnectorError(Exception):
    """The source refused or failed; `reason` is shown to the admin (never a credential or a document's text)."""

    def __init__(self, reason: str, *, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


class ResponseTooLarge(ConnectorError):
    """One response was larger than its cap: the download stopped there. A document that is too large is skipped
    with this reason recorded; the sync goes on with the others."""


class ConnectorAuthError(ConnectorError):
    """The source rejected the credentials (401/403): syncing again will not help until they are fixed."""


class Unreadable(Exception):
    """The source's permissions leave no deskmate audience that may read this document: it is not indexed,
    and a copy indexed before is removed. `reason` is shown to the admin."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class DocumentRef:
    """A document as a listing shows it: enough to decide whether to fetch it."""

    external_id: str  # the source's own id (page id, article number, URL)
    version: str  # changes whenever the content does (version number, ETag, updated-at)
    title: str = ""


@dataclass(frozen=True)
class RemoteDocument:
    """One fetched document, ready for the parser."""

    external_id: str
    version: str
    title: str
    url: str  # where a reader opens it: what citations link to
    filename: str  # tells the parser the type ("page.html", "guide.docx")
    data: bytes
    permissions: dict = field(default_factory=dict)  # source-native permission payload, mapped by `audience`


@dataclass(frozen=True)
class ChangeSet:
    changed: list[DocumentRef]
    cursor: str  # where the next sync starts; opaque to everything but the connector


class Connector(ABC):
    """list changed since a cursor, fetch one, list deletions, map permissions to audiences."""

    kind: str = ""

    @abstractmethod
    def list_changed(self, cursor: str | None) -> ChangeSet:
        """Documents created or changed since `cursor` (None: everything in scope), and the next cursor."""

    @abstractmethod
    def fetch(self, ref: DocumentRef) -> RemoteDocument:
        """The document's current content and permissions."""

    @abstractmethod
    def list_deleted(self, known: set[str]) -> set[str]:
        """Which of the `known` external ids no longer exist in scope (deleted, trashed, moved out)."""

    @abstractmethod
    def audience(self, document: RemoteDocument) -> list[str]:
        """deskmate audience groups allowed to read it; [] means everyone who may use deskmate. Raises
        Unreadable when no audience may read it."""

    def current_audience(self, external_id: str) -> list[str] | None:
        """The audience as the source says now, without fetching the body (None: not cheaper than a fetch).

        Permission changes do not touch a page's modification time, so each sync asks this of every known
        document; connectors whose API has a cheap permissions call implement it."""
        return None

    def close(self) -> None:  # noqa: B027 (a hook: most connectors hold nothing to release)
        """Release network resources."""
