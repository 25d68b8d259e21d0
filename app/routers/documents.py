"""POST/GET/DELETE /documents: the knowledge base an admin manages.

Upload, list and delete are admin endpoints. Downloading a cited document (…/content) is open to any
caller who may retrieve it: restricted documents only to callers in their audience (and admins).
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import re
import unicodedata
from pathlib import PurePosixPath
from urllib.parse import quote

from fastapi import APIRouter, Depends, File, Form, HTTPException, Query, Request, Response, UploadFile

from app.adapters.parsers import FileParser, render_plain_text, sniff_type
from app.deps import get_resources, reader, require_admin
from app.document_service import readable_document, stored_original, upload_context
from app.identity import Caller
from app.includes import IncludeResolver
from app.job_worker import delete_with_uploads, enqueue_index
from app.resources import Resources
from app.schemas import (
    BatchUploadResponse,
    DocumentList,
    DocumentSections,
    SectionOut,
    UploadResponse,
    document_out,
    job_out,
)
from core.errors import DocumentRejected, IndexUnavailable

log = logging.getLogger(__name__)
router = APIRouter(tags=["documents"])
MAX_BATCH_FILES = 500  # files in one batch upload
_UNSAFE = re.compile(r"[^\w.\- ]+")  # \w: letters and digits of any script (and _)


def collection_indexer(resources: Resources, collection: str | None):
    """The indexer of a configured collection (422 naming the known ones otherwise)."""
    indexer = resources.indexer_for((collection or "").strip() or None)
    if indexer is None:
        known = ", ".join(resources.indexers) or "the main one"
        raise HTTPException(status_code=422, detail=f"Unknown collection '{collection}'. Configured: {known}.")
    return indexer


def safe_filename(name: str | None) -> str:
    """Basename only, no path tricks, bounded length; letters of every script kept ("Пароль.md").

    When anything had to be replaced or cut, a short hash of the name as sent is added to the stem, so two
    different names never become the same document ("report (1).md" and "report [1].md" stay apart, and a
    re-upload under the same name still replaces its document). Idempotent: a safe name comes back as it is."""
    base = unicodedata.normalize("NFC", PurePosixPath((name or "").replace("\\", "/")).name)
    cleaned = _UNSAFE.sub("_", base).strip(" .") or "upload"
    stem, dot, ext = cleaned.rpartition(".") if "." in cleaned else (cleaned, "", "")
    if cleaned == base and len(stem) <= 100 and len(ext) <= 10:
        return cleaned
    tag = hashlib.sha256(base.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{stem[:91]}-{tag}{dot}{ext[:10]}"


def content_disposition(filename: str) -> str:
    """An attachment header any browser reads: an ASCII fallback name, and the real one per RFC 6266/5987."""
    fallback = re.sub(r"[^A-Za-z0-9._\- ]", "_", filename)
    if fallback == filename:
        return f'attachment; filename="{filename}"'
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


@router.post(
    "/documents",
    response_model=UploadResponse,
    status_code=202,
    dependencies=[Depends(require_admin)],
    responses={
        201: {"description": "wait=true: indexed (a new document or a new version)", "model": UploadResponse},
        200: {"description": "wait=true: the same content was already indexed", "model": UploadResponse},
    },
)
def upload_document(
    request: Request,
    response: Response,
    file: UploadFile = File(..., description="PDF, Word, PowerPoint, Excel, HTML, Markdown, reStructuredText or text"),
    context_type: list[str] | None = Form(
        None, description="e.g. technical, how-to (required with any other context field; comma-separated or repeated)"
    ),
    content_domain: list[str] | None = Form(None, description="e.g. networking, accounts"),
    document_category: list[str] | None = Form(None, description="e.g. user_guide, policy"),
    relevance_tags: list[str] | None = Form(None, description="optional topics, e.g. vpn, mfa"),
    description: str | None = Form(None, description="optional one-line description"),
    audience: list[str] | None = Form(
        None, description="groups that may retrieve it, e.g. finance, hr (comma-separated or repeated); empty: everyone"
    ),
    collection: str | None = Form(
        None, description="knowledge collection (configuration file names); empty: the main one"
    ),
    wait: bool = Query(
        False,
        description="wait for the indexing job (at most "
        "DESKMATE_UPLOAD_WAIT_S) and answer as before jobs: 201/200 "
        "with the document, or the job's 4xx; 202 if it runs longer",
    ),
    resources: Resources = Depends(get_resources),
) -> UploadResponse:
    """Validate and store the upload, queue its indexing job and answer 202 with it (Location: /jobs/{id})."""
    collection_indexer(resources, collection)
    document_context = upload_context(  # 422 on a bad context or group name, before the file is read
        {
            "context_type": context_type,
            "content_domain": content_domain,
            "document_category": document_category,
            "relevance_tags": relevance_tags,
            "description": description,
        },
        audience,
    )
    limit = resources.settings.ingestion.max_upload_bytes
    data = file.file.read(limit + 1)
    filename = safe_filename(file.filename)
    if len(data) > limit:
        raise DocumentRejected(
            f"{filename} is larger than the {limit // (1024 * 1024) or limit} "
            f"{'MB' if limit >= 1024 * 1024 else 'bytes'} upload limit. Split it or compress "
            "its images and try again.",
            kind="too_large",
        )
    sniff_type(filename, data)  # 415 now for a type deskmate does not read; the parse itself runs in the job
    job = enqueue_index(
        resources,
        f"uploads/{filename}",
        filename,
        data,
        document_context,
        collection=(collection or "").strip() or None,
    )
    worker = getattr(request.app.state, "worker", None)
    if worker is not None:
        worker.wake()
    if wait:
        job = resources.jobs.wait(job["id"], resources.settings.jobs.upload_wait_s)
        if job["state"] in ("done", "failed", "cancelled"):
            return _finished_upload(job, filename, response)
    response.status_code = 202
    response.headers["Location"] = f"/jobs/{job['id']}"
    log.info("upload %s: queued as job %s", filename, job["id"])
    return UploadResponse(status=job["state"], job=job_out(job))


def batch_path(name: str | None) -> str:
    """A batch file's folder path as sent ("include/tip.md"), each part made safe, with no way out of the batch:
    includes that name a folder ("../include/tip.md") are resolved by it."""
    parts = [p for p in PurePosixPath((name or "").replace("\\", "/")).parts if p not in ("", ".", "..", "/")]
    return "/".join([*(_UNSAFE.sub("_", p).strip(" .") or "_" for p in parts[:-1][-4:]), safe_filename(name)])


@router.post(
    "/documents/batch",
    response_model=BatchUploadResponse,
    status_code=202,
    dependencies=[Depends(require_admin)],
)
def upload_batch(
    request: Request,
    files: list[UploadFile] = File(
        ..., description="Several files uploaded together (a site's pages and the fragments they include)"
    ),
    context_type: list[str] | None = Form(None, description="as for POST /documents, applied to every article"),
    content_domain: list[str] | None = Form(None),
    document_category: list[str] | None = Form(None),
    relevance_tags: list[str] | None = Form(None),
    description: str | None = Form(None),
    audience: list[str] | None = Form(None),
    collection: str | None = Form(None),
    wait: bool = Query(False, description="wait for every indexing job (each at most DESKMATE_UPLOAD_WAIT_S)"),
    resources: Resources = Depends(get_resources),
) -> BatchUploadResponse:
    """Upload several files as one batch: includes resolve among them (`{!x.md!}`, `[!INCLUDE …]`, `--8<--`,
    MDX imports, `.. include::`), a file only included by the batch's articles is not a document of its own,
    and each article is stored and indexed with its includes resolved, as one upload (one job each)."""
    collection_indexer(resources, collection)
    if len(files) > MAX_BATCH_FILES:
        raise HTTPException(status_code=413, detail=f"At most {MAX_BATCH_FILES} files in one batch; split it.")
    document_context = upload_context(
        {
            "context_type": context_type,
            "content_domain": content_domain,
            "document_category": document_category,
            "relevance_tags": relevance_tags,
            "description": description,
        },
        audience,
    )
    limit = resources.settings.ingestion.max_upload_bytes
    batch: dict[str, bytes] = {}
    for file in files:
        data = file.file.read(limit + 1)
        path = batch_path(file.filename)
        if len(data) > limit:
            raise DocumentRejected(
                f"{path} is larger than the upload limit; nothing of the batch was stored.", kind="too_large"
            )
        if path in batch:
            raise HTTPException(status_code=422, detail=f"{path} is in the batch twice; send each file once.")
        sniff_type(path, data)  # 415 for a type deskmate does not read, before anything is stored
        batch[path] = data
    resolver = IncludeResolver.from_bytes(batch)
    fragments = sorted(path for path in batch if resolver.is_fragment(path))
    jobs: dict[str, dict] = {}
    for path, data in batch.items():
        if path in fragments:
            continue
        filename = safe_filename(path)
        # stored with its includes resolved: the job indexes it alone, where nothing else is there to include
        jobs[path] = enqueue_index(
            resources,
            f"uploads/{filename}",
            filename,
            resolver.expand(path, data),
            document_context,
            collection=(collection or "").strip() or None,
        )
    worker = getattr(request.app.state, "worker", None)
    if worker is not None:
        worker.wake()
    uploads: dict[str, UploadResponse] = {}
    for path, job in jobs.items():
        if wait:
            job = resources.jobs.wait(job["id"], resources.settings.jobs.upload_wait_s)
        if job["state"] == "done":
            uploads[path] = UploadResponse(
                status=job["result"]["status"], document=document_out(job["result"]["document"]), job=job_out(job)
            )
        else:
            uploads[path] = UploadResponse(status=job["state"], job=job_out(job))
    log.info("batch upload: %d articles queued, %d fragments read inside them", len(jobs), len(fragments))
    return BatchUploadResponse(uploads=uploads, fragments=fragments)


def _finished_upload(job: dict, filename: str, response: Response) -> UploadResponse:
    """wait=true: the answer an upload gave before jobs — the document, or the same error status and text."""
    if job["state"] == "failed":
        if job.get("error_kind") == "unavailable":
            raise IndexUnavailable(job["error"])
        if job.get("error_kind") in ("interrupted", "error"):
            raise HTTPException(status_code=500, detail=job["error"])
        raise DocumentRejected(job["error"], kind=job.get("error_kind") or "unparseable")
    if job["state"] == "cancelled":
        raise HTTPException(
            status_code=409,
            detail=f"The upload of {filename} was cancelled (DELETE /jobs/"
            f"{job['id']}) before it was indexed; nothing changed.",
        )
    result = job["result"]
    response.status_code = 200 if result["status"] == "unchanged" else 201
    log.info("upload %s: %s (%d chunks)", filename, result["status"], result["document"]["chunk_count"])
    return UploadResponse(status=result["status"], document=document_out(result["document"]), job=job_out(job))


@router.get("/documents", response_model=DocumentList, dependencies=[Depends(require_admin)])
def list_documents(
    collection: str | None = Query(None, max_length=100, description="Collection; default: main"),
    resources: Resources = Depends(get_resources),
) -> DocumentList:
    return DocumentList(
        documents=[document_out(d) for d in collection_indexer(resources, collection).index.list_documents()]
    )


@router.delete("/documents/{doc_id}", status_code=204, dependencies=[Depends(require_admin)])
def delete_document(
    doc_id: str, collection: str | None = Query(None, max_length=100), resources: Resources = Depends(get_resources)
) -> Response:
    """Delete a document; a queued or running upload of it is cancelled (its job says why), so the document
    stays deleted. 404 when there is neither the document nor an upload of it."""
    indexer = collection_indexer(resources, collection)
    if not re.fullmatch(r"[0-9a-f]{16}", doc_id) or not delete_with_uploads(resources, indexer, doc_id):
        raise HTTPException(status_code=404, detail=f"No document with id '{doc_id}'. GET /documents lists the ids.")
    resources.originals.drop(doc_id)
    for stored in resources.settings.storage.uploads_dir.glob(f"{doc_id}-*"):  # written by older deskmates
        stored.unlink(missing_ok=True)
    return Response(status_code=204)


def _readable_document(doc_id: str, caller: Caller | None, resources: Resources):
    """(info, index) of a document in any collection that this caller may read; 404 otherwise."""
    found = readable_document(resources, doc_id, None if caller is None else caller.groups)
    if found is not None:
        return found
    raise HTTPException(status_code=404, detail=f"No document with id '{doc_id}'. GET /documents lists the ids.")


MAX_VIEW_CHUNKS = 5000  # a 1.6 MB manual is about 1,800 chunks


@router.get("/documents/{doc_id}/sections", response_model=DocumentSections)
def document_sections(
    doc_id: str, caller: Caller | None = Depends(reader), resources: Resources = Depends(get_resources)
) -> DocumentSections:
    """The document as deskmate indexed it, section by section, in reading order: what the web UI's document
    view shows at a cited section. Text only (never markup); the same audience rule as the download."""
    info, index = _readable_document(doc_id, caller, resources)
    vector = getattr(index, "vector", index)
    chunks = sorted(
        itertools.islice(vector.iter_chunks(doc_id, info["version"]), MAX_VIEW_CHUNKS),
        key=lambda chunk: chunk["chunk_index"],
    )
    sections: list[SectionOut] = []
    for chunk in chunks:
        if sections and sections[-1].section == chunk["section"]:
            sections[-1].text += "\n\n" + chunk["text"]
            sections[-1].chunk_ids.append(chunk["chunk_id"])
        else:
            sections.append(SectionOut(section=chunk["section"], text=chunk["text"], chunk_ids=[chunk["chunk_id"]]))
    return DocumentSections(
        doc_id=doc_id,
        title=info["title"],
        source=info["source"],
        content_type=info["content_type"],
        download=f"/documents/{doc_id}/content",
        sections=sections,
    )


# --- the stored original, served so that it cannot run in the browser -----------------------------
_ORIGINAL_MEDIA = {
    "pdf": "application/pdf",
    "text": "text/plain",
    "markdown": "text/markdown",
    "rst": "text/plain",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}
_BINARY = {"pdf", "docx", "pptx", "xlsx"}
_DOWNLOAD_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cache-Control": "private, no-store",
}


@router.get(
    "/documents/{doc_id}/content",
    response_class=Response,
    responses={
        200: {
            "description": "The original file (PDF, text, Markdown) or, for HTML, its sanitised text; "
            "always sent as a download.",
            "content": {"application/pdf": {}, "text/plain": {}, "text/markdown": {}},
        }
    },
)
def document_content(
    doc_id: str, caller: Caller | None = Depends(reader), resources: Resources = Depends(get_resources)
) -> Response:
    info, _ = _readable_document(doc_id, caller, resources)
    data = stored_original(resources, info)
    if data is None:
        raise HTTPException(
            status_code=404,
            detail=f"The original of '{info['title']}' is not kept by deskmate "
            "(it was indexed from the command line, or changed since). "
            "Upload it through POST /documents to make it downloadable.",
        )
    filename = safe_filename(PurePosixPath(info["source"]).name)
    if info["content_type"] == "html":
        # never hand out uploaded HTML: its scripts would run on deskmate's origin. Its text is enough.
        document = (resources.parser or FileParser()).parse(filename, data)
        body = render_plain_text(document).encode("utf-8")
        media, filename = "text/plain; charset=utf-8", f"{filename.rsplit('.', 1)[0]}.txt"
    elif info["content_type"] in _ORIGINAL_MEDIA:
        body, media = data, _ORIGINAL_MEDIA[info["content_type"]]
        if info["content_type"] not in _BINARY:
            media += "; charset=" + ("utf-8" if _is_utf8(data) else "windows-1252")
    else:
        raise HTTPException(status_code=404, detail=f"Documents of type '{info['content_type']}' cannot be downloaded.")
    headers = {**_DOWNLOAD_HEADERS, "Content-Disposition": content_disposition(filename)}
    return Response(content=body, media_type=media, headers=headers)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
