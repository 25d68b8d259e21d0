"""Request and response models of the HTTP API."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from graphs.records import OperatingSystem

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_OS_ALIASES = {
    "windows": "windows", "win": "windows", "win10": "windows", "win11": "windows", "windows 10": "windows",
    "windows 11": "windows", "macos": "macos", "mac": "macos", "osx": "macos", "os x": "macos", "darwin": "macos",
    "linux": "linux", "ubuntu": "linux", "debian": "linux", "fedora": "linux",
}


def clean_message(text: str) -> str:
    """Drop control characters (keep newlines and tabs) and surrounding whitespace."""
    return _CONTROL.sub("", text).strip()


class ChatRequest(BaseModel):
    message: str = Field(..., description="What the employee typed.")
    session_id: str | None = Field(None, pattern=r"^[A-Za-z0-9._:\-]{1,128}$",
                                   description="Continue this conversation; omit to start a new one.")
    user_os: OperatingSystem | None = Field(None, description="windows, macos or linux, if known.")

    @field_validator("user_os", mode="before")
    @classmethod
    def _normalise_os(cls, value):
        if value is None or value == "":
            return None
        if not isinstance(value, str) or value.strip().lower() not in _OS_ALIASES:
            raise ValueError("user_os must be one of windows, macos, linux")
        return _OS_ALIASES[value.strip().lower()]


class SourceOut(BaseModel):
    n: int
    title: str
    source: str
    section: str
    chunk_id: str
    score: float


class ChatResponse(BaseModel):
    answer: str
    session_id: str
    action: str
    needs_input: bool
    is_clarifying: bool
    sources: list[SourceOut]
    redaction_notice: str | None = None
    fallback_notice: str | None = None
    user_os: OperatingSystem | None = None
    trace_id: str


class DocumentOut(BaseModel):
    id: str
    title: str
    source: str
    content_type: str
    chunks: int
    size_bytes: int
    version: str
    indexed_at: str


class UploadResponse(BaseModel):
    status: Literal["new", "replaced", "unchanged"]
    document: DocumentOut


class DocumentList(BaseModel):
    documents: list[DocumentOut]


def document_out(info: dict) -> DocumentOut:
    return DocumentOut(id=info["doc_id"], title=info["title"], source=info["source"],
                       content_type=info["content_type"], chunks=info["chunk_count"],
                       size_bytes=info["size_bytes"], version=info["version"], indexed_at=info["indexed_at"])
