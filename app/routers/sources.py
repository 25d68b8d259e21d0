"""POST/GET/DELETE /sources and POST /sources/{id}/sync: knowledge synced from where IT teams keep it (admin).

A source names its credentials by environment variable (`credential_env: {"token": "CONFLUENCE_TOKEN"}`);
values are read when a sync runs and never stored, listed or logged. A sync runs as a `sync_source` job
(app/job_worker.py calls `app.source_sync.sync_source`), on the in-process worker or a `deskmate worker`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Literal
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from pydantic import BaseModel, Field, field_validator

from app.connectors.registry import SOURCE_TYPES
from app.deps import get_resources, require_admin
from app.resources import Resources
from app.schemas import JobOut, job_out
from app.source_sync import remove_source

router = APIRouter(tags=["sources"], dependencies=[Depends(require_admin)])
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_SCHEDULE = re.compile(r"^(manual|every [1-9][0-9]{0,3}[mhd])$")
_SCOPE_KEYS = {
    "confluence": ("space_keys", "edition"),
    "website": ("start_urls", "sitemaps"),
    "sharepoint": ("site", "library", "tenant", "authority"),
    "servicenow": ("knowledge_bases",),
    "zendesk": ("section_ids",),
}
_REQUIRED = {
    "confluence": ("space_keys",),
    "website": (),
    "sharepoint": ("site", "tenant"),
    "servicenow": ("knowledge_bases",),
    "zendesk": (),
}
_SCOPE_LIMITS = {"website": {"max_pages": (1, 5_000), "max_depth": (0, 10)}}
_LIST_KEYS = {"space_keys", "start_urls", "sitemaps", "knowledge_bases", "section_ids"}
_CREDENTIAL_ROLES = {
    "confluence": ("user", "token"),
    "website": (),
    "sharepoint": ("client_id", "client_secret"),
    "servicenow": ("user", "password"),
    "zendesk": ("email", "token"),
}


class SourceCreate(BaseModel):
    type: Literal["confluence", "servicenow", "sharepoint", "website", "zendesk"] = Field(
        description="What kind of source: " + ", ".join(SOURCE_TYPES)
    )
    name: str = Field("", max_length=200, description="A name for the admin page; default: the base URL")
    base_url: str = Field(max_length=500, description="e.g. https://example.atlassian.net/wiki")
    scope: dict[str, list[str] | int | str] = Field(
        description="What to sync, per type: confluence → space_keys, edition ('cloud' or 'data_center'); sharepoint → site ('host:/sites/name'), "
        "library ('Documents'), tenant; servicenow → knowledge_bases (sys_ids); website → start_urls "
        "and/or sitemaps, max_pages (200), max_depth (2); zendesk → section_ids (optional: all)"
    )
    credential_env: dict[str, str] = Field(
        default_factory=dict,
        description="Credential role → NAME of the environment variable holding it (confluence: user, token)",
    )
    group_map: dict[str, str] = Field(default_factory=dict, description="Source group → deskmate audience group")
    schedule: str = Field("manual", description="'manual' or 'every 30m' / 'every 6h' / 'every 1d'")

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
            raise ValueError(
                "base_url must be an http(s) URL without query or fragment, e.g. https://example.atlassian.net/wiki"
            )
        return value.strip().rstrip("/")

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, value: str) -> str:
        if not _SCHEDULE.match(value.strip()):
            raise ValueError("schedule must be 'manual' or 'every <n>m', 'every <n>h', 'every <n>d'")
        return value.strip()


class SourceOut(BaseModel):
    id: str
    type: str
    name: str
    base_url: str
    scope: dict
    credential_env: dict[str, str] = Field(description="Names of environment variables only, never values")
    group_map: dict[str, str]
    schedule: str
    status: str = Field(description="never | queued | syncing | ok | error")
    last_sync_at: str | None
    last_error: str | None
    last_counts: dict
    documents: int
    job: JobOut | None = Field(None, description="POST /sources/{id}/sync: the sync's job (GET /jobs/{id})")


class SourceList(BaseModel):
    sources: list[SourceOut]


def _out(resources: Resources, record: dict) -> SourceOut:
    fields = {k: record[k] for k in SourceOut.model_fields if k in record}
    return SourceOut(**fields, documents=resources.sources.document_count(record["id"]))


def _validate(body: SourceCreate) -> None:
    allowed = _SCOPE_KEYS[body.type]
    limits = _SCOPE_LIMITS.get(body.type, {})
    for name, (low, high) in limits.items():
        value = body.scope.get(name)
        if value is not None and (not isinstance(value, int) or not low <= value <= high):
            raise HTTPException(status_code=422, detail=f"scope.{name} must be a number from {low} to {high}.")
    for name, value in body.scope.items():
        if (
            name in _LIST_KEYS
            and not isinstance(value, list)
            or name not in _LIST_KEYS
            and name not in limits
            and not isinstance(value, str)
        ):
            kind = "a list of strings" if name in _LIST_KEYS else "a string"
            raise HTTPException(status_code=422, detail=f"scope.{name} must be {kind}.")
    unknown = [k for k in body.scope if k not in allowed and k not in limits]
    missing = [k for k in _REQUIRED[body.type] if not body.scope.get(k)]
    one_of = {"website": ("start_urls", "sitemaps")}.get(body.type, ())
    if unknown or missing or (one_of and not any(body.scope.get(k) for k in one_of)):
        raise HTTPException(
            status_code=422,
            detail=f"A {body.type} source's scope takes {', '.join(allowed)} "
            f"({', '.join(_REQUIRED[body.type]) or 'one of them'} required)"
            f"{'; not ' + ', '.join(unknown) if unknown else ''}.",
        )
    if body.type == "website":
        site = urlsplit(body.base_url).netloc
        listed = (body.scope.get("start_urls", []), body.scope.get("sitemaps", []))  # lists: checked above
        for url in [url for urls in listed if isinstance(urls, list) for url in urls]:
            parts = urlsplit(str(url))
            if parts.scheme not in ("http", "https") or parts.netloc != site:
                raise HTTPException(
                    status_code=422,
                    detail=f"'{url}' is not on {site}: a website source crawls "
                    "its own site only (add another source for another site).",
                )
    for role, name in body.credential_env.items():
        if role not in _CREDENTIAL_ROLES[body.type]:
            raise HTTPException(
                status_code=422,
                detail=f"A {body.type} source takes credentials "
                f"{', '.join(_CREDENTIAL_ROLES[body.type]) or 'none'}, "
                f"not '{role}'.",
            )
        if not _ENV_NAME.match(name):
            raise HTTPException(
                status_code=422,
                detail=f"credential_env.{role} must be the NAME of an environment "
                "variable holding the secret (e.g. CONFLUENCE_TOKEN), "
                "never the secret itself.",
            )
        if not os.environ.get(name):
            raise HTTPException(
                status_code=422,
                detail=f"The environment variable {name} is not set in deskmate's "
                "environment. Set it where deskmate runs, restart, and add "
                "the source again.",
            )


def source_id_for(body: SourceCreate) -> str:
    key = json.dumps(
        [
            body.type,
            body.base_url.lower(),
            {
                k: sorted(v) if isinstance(v, list) else v
                for k, v in body.scope.items()
                if k not in ("max_pages", "max_depth")
            },
        ],
        sort_keys=True,
    )
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def _found(resources: Resources, source_id: str) -> dict:
    record = resources.sources.get(source_id) if re.fullmatch(r"[0-9a-f]{12}", source_id) else None
    if record is None:
        raise HTTPException(status_code=404, detail=f"No source with id '{source_id}'. GET /sources lists them.")
    return record


@router.post("/sources", response_model=SourceOut, status_code=201)
def create_source(body: SourceCreate, resources: Resources = Depends(get_resources)) -> SourceOut:
    _validate(body)
    source_id = source_id_for(body)
    record = {
        "id": source_id,
        "type": body.type,
        "name": body.name.strip() or body.base_url,
        "base_url": body.base_url,
        "scope": body.scope,
        "credential_env": body.credential_env,
        "group_map": body.group_map,
        "schedule": body.schedule,
    }
    if not resources.sources.add(record):
        raise HTTPException(
            status_code=409,
            detail=f"This source already exists as '{source_id}'; POST /sources/{source_id}/sync to sync it.",
        )
    return _out(resources, _found(resources, source_id))


@router.get("/sources", response_model=SourceList)
def list_sources(resources: Resources = Depends(get_resources)) -> SourceList:
    return SourceList(sources=[_out(resources, r) for r in resources.sources.list()])


@router.get("/sources/{source_id}", response_model=SourceOut)
def get_source(source_id: str, resources: Resources = Depends(get_resources)) -> SourceOut:
    return _out(resources, _found(resources, source_id))


@router.post("/sources/{source_id}/sync", response_model=SourceOut, status_code=202)
def start_sync(
    source_id: str, request: Request, response: Response, resources: Resources = Depends(get_resources)
) -> SourceOut:
    """Queue a sync of the source as a `sync_source` job (Location: /jobs/{id})."""
    _found(resources, source_id)
    if not resources.sources.claim(source_id):
        raise HTTPException(
            status_code=409,
            detail="A sync of this source is already queued or running; GET /sources shows its progress.",
        )
    job = resources.jobs.enqueue("sync_source", {"source_id": source_id})
    worker = getattr(request.app.state, "worker", None)
    if worker is not None:
        worker.wake()
    response.headers["Location"] = f"/jobs/{job['id']}"
    return _out(resources, _found(resources, source_id)).model_copy(update={"job": job_out(job)})


@router.delete("/sources/{source_id}", status_code=204)
def delete_source(source_id: str, resources: Resources = Depends(get_resources)) -> Response:
    record = _found(resources, source_id)
    if record["status"] in ("queued", "syncing"):
        raise HTTPException(status_code=409, detail="This source is syncing; delete it when the sync has finished.")
    remove_source(source_id, store=resources.sources, indexer=resources.indexer)
    return Response(status_code=204)
