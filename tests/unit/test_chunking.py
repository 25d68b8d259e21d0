from core.records import Block, ParsedDocument
from nodes.indexing.chunking import chunk_document, render_blocks

count = lambda text: len(text.split())  # noqa: E731  (a word is a token here)


def _chunks(doc, max_tokens=60):
    return chunk_document(doc, doc_id="d", version="v1", source="kb/x.md", max_tokens=max_tokens, count=count)


def test_each_chunk_carries_its_heading_path_and_os():
    doc = ParsedDocument(
        "VPN",
        "markdown",
        [
            Block("heading", "VPN", 1),
            Block("paragraph", "Use the client to connect from home to internal sites."),
            Block("heading", "macOS", 2),
            Block("list_item", "Open the client.", ordered=True),
            Block("list_item", "Click Connect.", ordered=True),
        ],
    )
    chunks = _chunks(doc, max_tokens=30)
    mac = [c for c in chunks if c["section"] == "macOS"]
    assert mac and mac[0]["os"] == "macos"
    assert mac[0]["text"].splitlines()[-2:] == ["1. Open the client.", "2. Click Connect."]
    assert mac[0]["embed_text"].startswith("VPN > macOS\n")


def test_chunks_respect_the_token_budget_including_the_heading_prefix():
    long_para = " ".join(f"word{i}." for i in range(500))
    doc = ParsedDocument("Title", "text", [Block("heading", "Section", 2), Block("paragraph", long_para)])
    chunks = _chunks(doc, max_tokens=50)
    assert len(chunks) > 5
    assert all(count(c["embed_text"]) <= 50 for c in chunks)
    assert " ".join(c["text"] for c in chunks).split() == long_para.split()  # nothing lost


def test_a_tiny_parent_section_is_glued_to_its_first_child():
    doc = ParsedDocument(
        "Printers",
        "markdown",
        [
            Block("heading", "Windows", 2),
            Block("paragraph", "Short intro."),
            Block("heading", "Add the printer", 3),
            Block("list_item", "Open Settings.", ordered=True),
        ],
    )
    chunks = _chunks(doc)
    assert len(chunks) == 1
    assert chunks[0]["section"] == "Windows > Add the printer"
    assert chunks[0]["text"].startswith("Short intro.")


def test_ids_are_content_hashes_stable_across_runs_and_new_for_new_versions():
    doc = ParsedDocument("T", "text", [Block("paragraph", "alpha beta gamma")])
    first, again = _chunks(doc), _chunks(doc)
    assert [c["chunk_id"] for c in first] == [c["chunk_id"] for c in again]
    other_version = chunk_document(doc, doc_id="d", version="v2", source="kb/x.md", max_tokens=60, count=count)
    assert first[0]["chunk_id"] != other_version[0]["chunk_id"]
    assert first[0]["content_hash"] == other_version[0]["content_hash"]


def test_numbering_restarts_for_each_list():
    doc = ParsedDocument(
        "T",
        "markdown",
        [
            Block("list_item", "a", ordered=True),
            Block("list_item", "b", ordered=True),
            Block("paragraph", "between"),
            Block("list_item", "c", ordered=True),
        ],
    )
    assert _chunks(doc)[0]["text"].splitlines() == ["1. a", "2. b", "between", "1. c"]


def test_a_long_unbroken_token_is_cut_into_chunks_that_fit():
    def by_chars(text):  # a tokenizer that reads about four characters per token, as word pieces do
        return sum(-(-len(word) // 4) for word in text.split())

    blob = "".join(chr(ord("a") + i % 26) for i in range(20_000))  # a pasted key or minified line, no spaces
    doc = ParsedDocument("Dump", "text", [Block("paragraph", f"The log ends with {blob} and nothing else.")])
    chunks = chunk_document(doc, doc_id="d", version="v1", source="kb/x.txt", max_tokens=50, count=by_chars)
    assert len(chunks) > 100
    assert all(by_chars(c["embed_text"]) <= 50 for c in chunks)
    assert blob in "".join("".join(c["text"].split()) for c in chunks)  # nothing lost


def test_a_step_keeps_its_code_sub_steps_and_table_and_the_numbering_goes_on_after_them():
    doc = ParsedDocument(
        "T",
        "markdown",
        [
            Block("list_item", "Open Registry Editor and go to:", ordered=True),
            Block("code", "HKLM\\Software\\Corp\nHKCU\\Software\\Corp", in_list=True),
            Block("list_item", "Check the value:", ordered=True),
            Block("list_item", "Name is Mode.", level=1, ordered=True),
            Block("list_item", "Data is 1.", level=1, ordered=True),
            Block("table", "Mode | 1", in_list=True),
            Block("paragraph", "Restart if it was 0.", in_list=True),
            Block("list_item", "Close the editor.", ordered=True),
            Block("list_item", "Confirm it worked.", level=1, ordered=True),
        ],
    )
    assert render_blocks(doc.blocks) == [
        "1. Open Registry Editor and go to:",
        "   HKLM\\Software\\Corp",
        "   HKCU\\Software\\Corp",
        "2. Check the value:",
        "  1. Name is Mode.",
        "  2. Data is 1.",
        "   Mode | 1",
        "   Restart if it was 0.",
        "3. Close the editor.",
        "  1. Confirm it worked.",
    ]  # a sub-list after the step's own text starts again


def test_a_bulleted_list_between_two_numbered_ones_ends_the_first():
    blocks = [
        Block("list_item", "a", ordered=True),
        Block("list_item", "b", ordered=True),
        Block("list_item", "x"),
        Block("list_item", "c", ordered=True),
    ]
    assert render_blocks(blocks) == ["1. a", "2. b", "- x", "1. c"]


def test_code_keeps_its_line_breaks_even_when_its_section_is_split_into_chunks():
    script = "\n".join(f"Set-ItemProperty -Path HKLM:\\Software\\Corp -Name Value{i} -Value {i}" for i in range(40))
    doc = ParsedDocument(
        "Script",
        "markdown",
        [
            Block("heading", "Run it", 2),
            Block("list_item", "Run this script:", ordered=True),
            Block("code", script, in_list=True),
            Block("list_item", "Restart.", ordered=True),
        ],
    )
    chunks = _chunks(doc, max_tokens=60)
    assert len(chunks) > 3
    lines = [line for c in chunks for line in c["text"].splitlines()]
    assert lines[0] == "1. Run this script:" and lines[-1] == "2. Restart."
    assert lines[1:-1] == ["   " + line for line in script.splitlines()]  # one command per line, none joined


def test_a_code_block_a_step_introduces_with_a_colon_stays_in_that_step_even_outside_the_list_markup():
    blocks = [
        Block("list_item", "Save the following content to a .reg file:", level=0, ordered=True),
        Block("code", "Windows Registry Editor Version 5.00\n[HKEY_CLASSES_ROOT\\app\\shell]"),
        Block("list_item", "Double-click the .reg file to import it.", level=0, ordered=True),
        Block("paragraph", "Restart the app."),
        Block("code", "app --reset"),  # after a plain paragraph: not part of any step
    ]
    assert render_blocks(blocks) == [
        "1. Save the following content to a .reg file:",
        "   Windows Registry Editor Version 5.00",
        "   [HKEY_CLASSES_ROOT\\app\\shell]",
        "2. Double-click the .reg file to import it.",
        "Restart the app.",
        "app --reset",
    ]


def test_a_pages_introduction_is_not_glued_to_a_first_section_for_one_os():
    doc = ParsedDocument(
        "Install the app",
        "markdown",
        [
            Block("paragraph", "The app keeps your notebooks offline."),
            Block("heading", "Install", 2),
            Block("heading", "macOS", 3),
            Block("list_item", "Open the disk image.", ordered=True),
            Block("heading", "Windows", 3),
            Block("list_item", "Run the installer.", ordered=True),
        ],
    )
    chunks = _chunks(doc)
    assert [(c["section"], c["os"]) for c in chunks] == [
        ("", ""),
        ("Install > macOS", "macos"),
        ("Install > Windows", "windows"),
    ]
    assert chunks[0]["text"] == "The app keeps your notebooks offline."  # read by a Windows user too
