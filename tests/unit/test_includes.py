"""Includes resolved within a batch of files: by file name, nested to a bounded depth, never outside the batch."""

from __future__ import annotations

import logging

import pytest

from app.adapters.parsers import FileParser
from app.includes import MAX_INCLUDE_DEPTH, SYNTAXES, IncludeResolver, target_file_name
from nodes.indexing.chunking import render_blocks

DISCLAIMER = b"---\nms.topic: include\n---\n\nBrightwave IT supports managed devices only.\n"


@pytest.mark.parametrize("syntax, example", [(s, e) for s in SYNTAXES for e in s.matches])
def test_an_include_syntax_finds_its_examples(syntax, example):
    assert syntax.pattern.search(example)


@pytest.mark.parametrize("syntax, example", [(s, e) for s in SYNTAXES for e in s.not_matches])
def test_an_include_syntax_leaves_its_counter_examples_alone(syntax, example):
    assert not syntax.pattern.search(example)


def test_a_link_is_resolved_by_its_file_name_within_the_batch_whatever_its_folders_say():
    batch = IncludeResolver.from_bytes(
        {
            "kb/guides/vpn.md": b"# VPN\n\n[!INCLUDE [Disclaimer](../../../includes/disclaimer.md)]\n",
            "kb/shared/includes/disclaimer.md": DISCLAIMER,
        }
    )
    expanded = batch.expand("kb/guides/vpn.md", b"# VPN\n\n[!INCLUDE [Disclaimer](../../../includes/disclaimer.md)]\n")
    assert expanded == b"# VPN\n\nBrightwave IT supports managed devices only.\n"  # its front matter stays behind
    assert batch.is_fragment("kb/shared/includes/disclaimer.md") and not batch.is_fragment("kb/guides/vpn.md")


def test_an_article_that_only_shares_the_included_file_name_is_not_taken_for_the_fragment():
    files = {
        "docs/disks/recovery.md": b"import Specify from '../../_includes/embeds/specify.md';\n\n<Specify />\n",
        "docs/factoids/specify.md": b"# Specify\n\nRun Specify and share the link.\n",
    }
    batch = IncludeResolver.from_bytes(files)
    assert batch.expand("docs/disks/recovery.md", files["docs/disks/recovery.md"]) == files["docs/disks/recovery.md"]
    assert not batch.is_fragment("docs/factoids/specify.md")


def test_an_include_never_reads_a_file_outside_the_batch(tmp_path):
    (tmp_path / "secret.md").write_text("TOP SECRET\n")
    folder = tmp_path / "kb"
    folder.mkdir()
    article = b'# Guide\n\n[!INCLUDE [x](../secret.md)]\n\n--8<-- "../secret.md"\n'
    (folder / "guide.md").write_bytes(article)
    batch = IncludeResolver.from_paths({"kb/guide.md": folder / "guide.md"})
    assert batch.expand("kb/guide.md", article) == article  # nothing resolved, nothing read
    assert b"TOP SECRET" not in batch.expand("kb/guide.md", article)


def test_nested_includes_resolve_and_every_file_an_article_reaches_is_a_fragment():
    files = {
        "a.md": b"# A\n\n[!INCLUDE [b](b.md)]\n",
        "b.md": b"From B.\n\n[!INCLUDE [c](c.md)]\n",
        "c.md": b"From C.\n\n{!d.md!}\n",
        "d.md": b"From D.\n",
    }
    batch = IncludeResolver.from_bytes(files)
    expanded = batch.expand("a.md", files["a.md"]).decode()
    assert "From B." in expanded and "From C." in expanded and "From D." in expanded and "INCLUDE" not in expanded
    assert all(batch.is_fragment(name) for name in ("b.md", "c.md", "d.md")) and not batch.is_fragment("a.md")


def test_includes_stop_at_the_depth_limit_and_what_lies_deeper_stays_an_article():
    chain = [f"f{n}.md" for n in range(MAX_INCLUDE_DEPTH + 2)]
    files = {name: f"Text {n}.\n\n{{!{chain[n + 1]}!}}\n".encode() for n, name in enumerate(chain[:-1])}
    files[chain[-1]] = b"The deepest.\n"
    batch = IncludeResolver.from_bytes(files)
    expanded = batch.expand(chain[0], files[chain[0]]).decode()
    assert f"Text {MAX_INCLUDE_DEPTH - 1}." in expanded and "The deepest." not in expanded
    assert not batch.is_fragment(chain[-1])  # its text would be lost otherwise


def test_files_that_include_each_other_both_stay_articles_and_a_file_never_includes_itself():
    files = {"a.md": b"A.\n\n[!INCLUDE [b](b.md)]\n", "b.md": b"B.\n\n[!INCLUDE [a](a.md)]\n[!INCLUDE [me](b.md)]\n"}
    batch = IncludeResolver.from_bytes(files)
    assert not batch.is_fragment("a.md") and not batch.is_fragment("b.md")
    assert batch.expand("b.md", files["b.md"]).decode().count("B.") == 1


def test_an_unresolved_include_is_left_out_of_the_text_with_a_warning(caplog):
    article = b"# Upload\n\nIntro.\n\n[!INCLUDE [Disclaimer](../includes/missing.md)]\n"
    batch = IncludeResolver.from_bytes({"uploads/upload.md": article})
    with caplog.at_level(logging.WARNING, logger="app.includes"):
        assert batch.expand("uploads/upload.md", article) == article
    assert "missing.md" in caplog.text and "uploads/upload.md" in caplog.text
    assert [b.text for b in FileParser().parse("upload.md", article).blocks] == ["Upload", "Intro."]


def test_an_include_under_a_step_stays_with_that_step():
    files = {
        "guide.md": b"1. Open the client.\n\n   [!INCLUDE [n](note.md)]\n\n2. Connect.\n",
        "note.md": b"> [!NOTE]\n> Sign in with your work account.\n",
    }
    expanded = IncludeResolver.from_bytes(files).expand("guide.md", files["guide.md"])
    assert render_blocks(FileParser().parse("guide.md", expanded).blocks) == [
        "1. Open the client.",
        "   Note: Sign in with your work account.",
        "2. Connect.",
    ]


def test_an_include_inside_a_sentence_or_a_code_block_is_read_as_written():
    files = {
        "a.md": b"See [!INCLUDE [v](version.md)] for details.\n\n```\n[!INCLUDE [v](version.md)]\n```\n",
        "version.md": b"version 5.2\n",
    }
    expanded = IncludeResolver.from_bytes(files).expand("a.md", files["a.md"]).decode()
    assert expanded == "See version 5.2 for details.\n\n```\n[!INCLUDE [v](version.md)]\n```\n"


def test_mdx_snippet_and_restructuredtext_includes_resolve_too():
    files = {
        "docs/wifi.md": b"import LiveUsb from './_partials/live-usb.mdx';\n\nJoin BW-Staff.\n\n<LiveUsb />\n",
        "docs/_partials/live-usb.mdx": b"Boot from the USB stick.\n",
        "docs/printers.md": b'Clear the queue.\n\n--8<-- "snippets/driver.md:2:3"\n',
        "docs/snippets/driver.md": b"Never install vendor drivers.\n",
        "docs/drive.txt": b"Map the drive.\n\n.. include:: common/vpn-only.txt\n",
        "docs/common/vpn-only.txt": b"Only on the VPN.\n",
    }
    batch = IncludeResolver.from_bytes(files)
    assert batch.expand("docs/wifi.md", files["docs/wifi.md"]).decode().endswith("\nBoot from the USB stick.\n")
    printers = batch.expand("docs/printers.md", files["docs/printers.md"]).decode()
    assert printers.endswith("\nNever install vendor drivers.\n")
    assert batch.expand("docs/drive.txt", files["docs/drive.txt"]).decode().endswith("\nOnly on the VPN.\n")
    assert {name for name in files if batch.is_fragment(name)} == {
        "docs/_partials/live-usb.mdx",
        "docs/snippets/driver.md",
        "docs/common/vpn-only.txt",
    }
    assert target_file_name("../snippets/driver.md:2:3") == "driver.md"


def test_an_include_that_would_make_an_article_too_large_is_left_out(monkeypatch):
    import app.includes

    monkeypatch.setattr(app.includes, "MAX_TEXT_CHARS", 1000)
    files = {"a.md": b"[!INCLUDE [big](big.md)]\n" * 3, "big.md": b"x" * 400 + b"\n"}
    expanded = IncludeResolver.from_bytes(files).expand("a.md", files["a.md"]).decode()
    assert expanded.count("x" * 400) == 2 and expanded.count("[!INCLUDE") == 1


def test_an_unused_file_in_the_batchs_fragment_folder_is_not_an_article_but_one_in_an_unused_folder_is():
    files = {
        "help/printing.md": b"# Printing\n\n{!printer-tip.md!}\n",
        "help/include/printer-tip.md": b"Pick the printer nearest you.\n",
        "help/include/scanner-tip.md": b"Scan to your own folder.\n",  # for a page that was not uploaded
        "guides/snippets/old-note.md": b"# Old note\n\nA note nobody includes.\n",  # nothing includes from here
    }
    batch = IncludeResolver.from_bytes(files)
    assert batch.is_fragment("help/include/printer-tip.md") and batch.is_fragment("help/include/scanner-tip.md")
    assert not batch.is_fragment("help/printing.md") and not batch.is_fragment("guides/snippets/old-note.md")
