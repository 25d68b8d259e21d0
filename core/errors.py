"""Domain exceptions raised by nodes and adapters; the app turns them into HTTP/CLI errors at the edge."""

from __future__ import annotations


class DeskmateError(Exception):
    """Base class for every error deskmate raises on purpose."""


class LLMError(DeskmateError):
    """The configured LLM failed, timed out or replied with something unusable."""


class EmbeddingError(DeskmateError):
    """The embedding model could not embed the text."""


class DocumentRejected(DeskmateError):
    """An uploaded document cannot be indexed; `reason` says why in words a person can act on.

    kind: 'unsupported_type' (415), 'too_large' (413), 'unparseable' (422), 'empty' (422).
    """

    def __init__(self, reason: str, *, kind: str = "unparseable") -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


class IndexUnavailable(DeskmateError):
    """The vector store cannot be reached."""


class TicketStoreError(DeskmateError):
    """The local ticket store (SQLite) could not be read or written — a real failure, unlike Jira's."""


class JiraError(DeskmateError):
    """Jira refused or failed a call; `status` is the HTTP status (None when Jira could not be reached)."""

    def __init__(self, reason: str, *, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


class StatusUnavailable(DeskmateError):
    """The status page could not be fetched or read; `reason` says why in words a person understands."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class IntegrationUnavailable(DeskmateError):
    """A configured integration could not be called or answered with something unusable; `reason` says
    why in words a person understands (never the credentials or the full address)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class InvalidFilter(DeskmateError):
    """A search filter or a document context names an unknown field or carries unusable values (422)."""


class UnknownMessage(DeskmateError):
    """Feedback names an assistant message that this session never received (404)."""


class InvalidDirective(DeskmateError):
    """A critical system-message directive (RESPONSE_MODE) or response mode is unusable (422); the message
    names the value and the accepted ones."""


class InvalidRequest(DeskmateError):
    """A request that cannot be answered as it was sent; the message says what to change (→ 422)."""
