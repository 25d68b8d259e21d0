"""Markup residue: how many chunks of a docs-as-code corpus still carry markup as text.

    python bench/markup_residue.py --data ../shared/data/it_kb_msdocs_dev/corpus
    python bench/markup_residue.py --data ../shared/data/it_kb_rtechsupport_wiki/docs --show 3

Every supported file under --data is read as one batch, the way `deskmate ingest <folder>` reads it
(includes resolved within the folder, include fragments not indexed on their own), parsed by
deskmate's parser and chunked with the embedding model's tokenizer at the default chunk size. A chunk
counts as residue when its text contains one of the markers below. Nothing is embedded or stored.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import app  # noqa: E402,F401  (offline defaults)

MARKERS = (":::", "[!", "&nbsp;", "&amp;", "ms.date", "---", "<a id", "{{<")
# more signs of markup, with false alarms on purpose: prose says "import" and "Processing...", code has "]("
MORE_MARKERS = ("{{%", "!!!", "???", ".. ", "<details", "<summary", "<table", "<br", "import ", "](")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="folder of documents (read-only)")
    parser.add_argument("--show", type=int, default=0, help="print this many residue chunks per marker")
    args = parser.parse_args()

    from transformers import AutoTokenizer

    from app.adapters.embeddings import packaged_model_path
    from app.adapters.parsers import FileParser
    from app.indexing_service import supported_files
    from app.settings import Settings
    from core.errors import DocumentRejected
    from nodes.indexing.chunking import chunk_document

    tokenizer = AutoTokenizer.from_pretrained(str(packaged_model_path()))

    def count(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"])

    try:  # the folder is one batch: includes resolved, fragments skipped
        from app.includes import IncludeResolver
    except ImportError:  # a checkout without include resolution
        IncludeResolver = None
    root = args.data
    files = supported_files(root)
    names = {p.relative_to(root).as_posix(): p for p in files}
    resolver = IncludeResolver.from_paths(names) if IncludeResolver else None
    file_parser = FileParser()
    chunk_size = Settings(_env_file=None).ingestion.chunk_max_tokens
    chunks, failed, fragments = [], 0, 0
    for name, path in names.items():
        data = path.read_bytes()
        if resolver is not None:
            if resolver.is_fragment(name):
                fragments += 1
                continue
            data = resolver.expand(name, data)
        try:
            document = file_parser.parse(name, data)
        except DocumentRejected as exc:
            failed += 1
            print(f"  failed {name}: {exc.reason}", file=sys.stderr)
            continue
        chunks += [
            (name, c)
            for c in chunk_document(document, doc_id=name, version="v", source=name, max_tokens=chunk_size, count=count)
        ]
    per_marker: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    dirty = {"main": 0, "all": 0}
    for name, chunk in chunks:
        seen = chunk["text"] + "\n" + chunk["title"] + "\n" + chunk["section"]
        found = [m for m in MARKERS + MORE_MARKERS if m in seen]
        dirty["main"] += any(m in MARKERS for m in found)
        dirty["all"] += bool(found)
        for marker in found:
            per_marker[marker] += 1
            examples.setdefault(marker, []).append(f"{name} › {chunk['section']}\n{chunk['text']}")
    share = lambda n: f"{n} ({n / max(1, len(chunks)):.1%})"  # noqa: E731
    print(f"{len(names)} files ({fragments} include fragments, {failed} failed), {len(chunks)} chunks")
    print(
        f"chunks with residue: {share(dirty['main'])} for {' '.join(MARKERS)}; "
        f"{share(dirty['all'])} counting {' '.join(MORE_MARKERS)} too"
    )
    for marker in MARKERS + MORE_MARKERS:
        print(f"  {marker!r:12} {per_marker[marker]:5d}")
        for example in examples.get(marker, [])[: args.show]:
            print("    | " + example.replace("\n", "\n    | ")[:1500])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
