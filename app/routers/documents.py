"""POST/GET/DELETE /documents: the knowledge base an admin manages."""

from __future__ import annotations

import logging
import re
from pathlib import PurePosixPath

from fastapi import APIRouter, Depends, File, HTTPException, Response, UploadFile

from app.deps import get_resources
from app.resources import Resources
from app.schemas import DocumentList, UploadResponse, document_out
from graphs.errors import DocumentRejected

log = logging.getLogger(__name__)
router = APIRouter(tags=["documents"])
_UNSAFE = re.compile(r"[^A-Za-z0-9._\- ]+")


def safe_filename(name: str | None) -> str:
    """Basename only, no path tricks, bounded length."""
    base = PurePosixPath((name or "").replace("\\", "/")).name
    base = _UNSAFE.sub("_", base).strip(" .") or "upload"
    stem, dot, ext = base.rpartition(".")
    return (stem[:100] + dot + ext[:10]) if dot else base[:110]


@router.post("/documents", response_model=UploadResponse, status_code=201)
def upload_document(response: Response, file: UploadFile = File(..., description="PDF, HTML, Markdown or text"),
                    resources: Resources = Depends(get_resources)) -> UploadResponse:
    limit = resources.settings.max_upload_bytes
    data = file.file.read(limit + 1)
    filename = safe_filename(file.filename)
    if len(data) > limit:
        raise DocumentRejected(f"{filename} is larger than the {limit // (1024 * 1024) or limit} "
                               f"{'MB' if limit >= 1024 * 1024 else 'bytes'} upload limit. Split it or compress "
                               "its images and try again.", kind="too_large")
    result = resources.indexer.index_bytes(f"uploads/{filename}", data)
    if result.status == "unchanged":
        response.status_code = 200
    else:
        uploads = resources.settings.uploads_dir
        uploads.mkdir(parents=True, exist_ok=True)
        (uploads / f"{result.document['doc_id']}-{filename}").write_bytes(data)
    log.info("upload %s: %s (%d chunks)", filename, result.status, result.document["chunk_count"])
    return UploadResponse(status=result.status, document=document_out(result.document))


@router.get("/documents", response_model=DocumentList)
def list_documents(resources: Resources = Depends(get_resources)) -> DocumentList:
    return DocumentList(documents=[document_out(d) for d in resources.index.list_documents()])


@router.delete("/documents/{doc_id}", status_code=204)
def delete_document(doc_id: str, resources: Resources = Depends(get_resources)) -> Response:
    if not re.fullmatch(r"[0-9a-f]{16}", doc_id) or not resources.indexer.delete(doc_id):
        raise HTTPException(status_code=404, detail=f"No document with id '{doc_id}'. GET /documents lists the ids.")
    for stored in resources.settings.uploads_dir.glob(f"{doc_id}-*"):
        stored.unlink(missing_ok=True)
    return Response(status_code=204)
