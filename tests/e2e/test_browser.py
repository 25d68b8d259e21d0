"""The web UI as a person uses it: headless Chromium (Debian's /usr/bin/chromium, driven by Playwright) against
`deskmate serve`. Screenshots go to test-artifacts/browser/.

No browser is downloaded: the test setup (.ci/run) installs Debian's chromium. Without it these tests skip,
unless DESKMATE_REQUIRE_BROWSER=1 (CI), where a missing browser is a failure.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import FIXTURE_KB, REPO
from tests.e2e.processes import wait_for_ready
from tests.e2e.servers import free_port

pytestmark = [pytest.mark.slow, pytest.mark.browser]
CHROMIUM = Path("/usr/bin/chromium")
# read at import: the autouse fixture in conftest.py clears DESKMATE_* variables before each test
REQUIRE_BROWSER = os.environ.get("DESKMATE_REQUIRE_BROWSER") == "1"
ARTIFACTS = REPO / "test-artifacts" / "browser"
# `DESKMATE_README_SCREENSHOTS=1 pytest tests/e2e/test_browser.py` also refreshes the README's pictures
README_IMAGES = REPO / "docs" / "images" if os.environ.get("DESKMATE_README_SCREENSHOTS") == "1" else None
# as root, in a closed network: no sandbox, no GPU, and none of Chromium's own background connections
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
# records what the page shows over time (an init script runs outside the page's Content-Security-Policy)
WATCH_ANSWERS = """
window.__frames = [];
new MutationObserver(() => {
  const live = document.querySelector('article.msg.assistant.live');
  window.__frames.push({
    t: performance.now(),
    steps: live ? live.querySelectorAll('.progress li').length : -1,
    text: live ? live.querySelector('.answer').textContent.length : -1,
    done: document.querySelectorAll('article.msg.assistant:not(.live)').length,
  });
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def _unavailable(reason: str):
    if REQUIRE_BROWSER:
        pytest.fail(f"{reason} and DESKMATE_REQUIRE_BROWSER=1: install it with `apt-get install -y chromium`")
    pytest.skip(f"{reason}: install Debian's chromium (apt-get install -y chromium) to run the browser tests")


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is missing")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True)
        yield chromium
        chromium.close()


def _serve(data_dir: Path, **env_extra: str):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKMATE_", "GROQ_", "LANGFUSE_", "CHROMA_"))}
    env |= {"DESKMATE_DATA_DIR": str(data_dir), "DESKMATE_LOG_LEVEL": "WARNING", **env_extra}
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    wait_for_ready(process, base)  # a cold start on a busy machine takes what it takes; an exit fails at once
    return process, base


# what the Sources tab's Confluence source names as its credentials (the fake Confluence checks them)
CONFLUENCE_USER, CONFLUENCE_TOKEN = "it-bot@example.com", "ATATT3xBrowserTestToken0000"


@pytest.fixture(scope="module")
def deskmate(browser, tmp_path_factory):
    """The README's `deskmate serve` with the bundled sample knowledge base, no LLM."""
    process, base = _serve(
        tmp_path_factory.mktemp("data"),
        BROWSER_CONFLUENCE_USER=CONFLUENCE_USER,
        BROWSER_CONFLUENCE_TOKEN=CONFLUENCE_TOKEN,
    )
    yield base
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(WATCH_ANSWERS)
    errors: list[str] = []
    new_page = context.new_page()
    new_page.on("pageerror", lambda error: errors.append(str(error)))
    yield new_page
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


def ask(page, text: str) -> None:
    before = page.locator("article.msg.assistant:not(.live)").count()
    page.fill("#message", text)
    page.press("#message", "Enter")
    page.locator("article.msg.assistant:not(.live)").nth(before).wait_for(timeout=60_000)


def last_answer(page):
    return page.locator("article.msg.assistant:not(.live)").last


def shoot(page, name: str, full_page: bool = False, readme: str | None = None) -> None:
    page.wait_for_timeout(400)  # let the smooth scroll settle
    page.screenshot(path=str(ARTIFACTS / name), full_page=full_page)
    if readme and README_IMAGES is not None:
        page.screenshot(path=str(README_IMAGES / readme), full_page=full_page)


def test_a_question_gets_a_cited_answer_that_streams_in_and_can_be_voted_on(page, deskmate):
    page.goto(f"{deskmate}/")
    page.select_option("#os-select", "windows")
    ask(page, "How do I connect to the VPN?")
    answer = last_answer(page)
    # it came in step by step: the graph's nodes showed up one after another before the answer was complete
    frames = page.evaluate("() => window.__frames")
    live = [f for f in frames if f["done"] == 0 and f["steps"] > 0]
    assert len({f["steps"] for f in live}) >= 3, frames[-10:]
    assert max(f["steps"] for f in live) >= 5
    # cited: [n] links to numbered sources that open the document itself
    assert "vpn.brightwave.example" in answer.locator(".answer").inner_text()
    assert answer.locator(".answer a.cite").count() >= 1
    source = answer.locator(".sources a").first
    source.wait_for()
    href = source.get_attribute("href")
    assert re.fullmatch(r"/view/[0-9a-f]+#section=.+", href)
    download = answer.locator(".sources a.source-download").first.get_attribute("href")
    assert re.fullmatch(r"/documents/[0-9a-f]+/content", download)
    assert httpx.get(f"{deskmate}{download}", timeout=10).status_code == 200
    # how the answer was made is counted in "stages"; "Step n of m" belongs to troubleshooting alone
    assert "7 stages" in answer.locator(".stages summary").inner_text()
    # vote, with a reason; the vote reaches the run's trace
    answer.locator("button[aria-label='Helpful']").click()
    answer.locator(".feedback[data-voted='up']").wait_for()
    answer.locator(".feedback-reason input").fill("clear steps, thanks")
    answer.locator(".feedback-reason button").click()
    page.get_by_text("Thanks for the detail.").wait_for()
    trace = httpx.get(f"{deskmate}/traces/{answer.get_attribute('data-trace')}", timeout=10).json()
    assert trace["feedback"] == {"rating": "up", "reason": "clear steps, thanks"}
    shoot(page, "chat-answer.png")


def test_a_source_opens_the_document_at_the_cited_section_with_the_download_beside_it(page, deskmate):
    page.goto(f"{deskmate}/")
    page.select_option("#os-select", "windows")
    ask(page, "Outlook keeps asking for my password")
    answer = last_answer(page)
    assert "Close Outlook completely" in answer.locator(".answer").inner_text()
    shoot(page, "chat-symptom-answer.png", readme="chat.png")
    source = answer.locator(".sources a.source-title").first
    cited = source.inner_text().split(" › ")[-1]
    with page.context.expect_page() as opened:
        source.click()
    view = opened.value
    highlighted = view.locator(".doc-section.cited")
    highlighted.wait_for(timeout=30_000)
    assert highlighted.count() == 1 and highlighted.locator("h2").inner_text().endswith(cited)
    assert view.locator("#doc-title").inner_text() == "Outlook keeps asking for your password"
    # scrolled to it: the cited section is on screen, and the sections before it are there too (the whole document)
    box = highlighted.bounding_box()
    assert box is not None and 0 <= box["y"] < 900
    assert view.locator(".doc-section").count() > 1
    download = view.locator("#doc-download")
    assert download.is_visible() and download.inner_text() == "Download the original"
    original = httpx.get(f"{deskmate}{download.get_attribute('href')}", timeout=10)
    assert original.status_code == 200 and "attachment" in original.headers["content-disposition"]
    shoot(view, "document-view.png")


def test_a_source_in_a_repeated_section_opens_at_the_one_it_cites(page, deskmate):
    doc = (
        b"# Printing from the office\n\n## Known problems\n\n"
        b"### The printer is offline\n\nThe print queue shows the printer as offline after a power cut.\n\n"
        b"### Solution\n\n1. Switch the printer off and on.\n2. Remove and add the printer again.\n\n"
        b"### Pages come out blank\n\nEvery page prints blank after a toner change.\n\n"
        b"### Solution\n\n1. Pull the sealing tape out of the new toner cartridge.\n2. Print a cleaning page.\n"
    )
    uploaded = httpx.post(
        f"{deskmate}/documents?wait=true", files={"file": ("office-printing.md", doc, "text/markdown")}, timeout=120
    )
    assert uploaded.status_code == 201, uploaded.text
    doc_id = uploaded.json()["document"]["id"]
    sections = httpx.get(f"{deskmate}/documents/{doc_id}/sections", timeout=10).json()["sections"]
    second = [s for s in sections if s["section"] == "Known problems > Solution"][1]
    page.goto(f"{deskmate}/view/{doc_id}#section=Known%20problems%20%3E%20Solution&chunk={second['chunk_ids'][0]}")
    highlighted = page.locator(".doc-section.cited")
    highlighted.first.wait_for(timeout=30_000)
    assert highlighted.count() == 1 and "sealing tape" in highlighted.inner_text()
    httpx.delete(f"{deskmate}/documents/{doc_id}", timeout=30)


def test_suggestions_offer_no_outage_check_without_a_status_page(page, deskmate):
    page.goto(f"{deskmate}/")
    chips = page.locator("#suggestions .chip")
    chips.first.wait_for()
    offered = chips.all_inner_texts()
    assert "How do I connect to the VPN?" in offered and "Is there an outage?" not in offered
    chips.first.click()  # a suggestion is a question that gets answered
    last_answer(page).wait_for(timeout=60_000)
    assert last_answer(page).locator(".sources a.source-title").count() >= 1


def test_the_counter_and_the_message_box_use_the_servers_one_limit(page, deskmate):
    limit = httpx.get(f"{deskmate}/ui-settings", timeout=10).json()["max_message_chars"]
    assert limit == 4000  # DESKMATE_MAX_MESSAGE_CHARS's default: the page asks, it does not know
    page.goto(f"{deskmate}/")
    page.wait_for_function("() => document.getElementById('message').maxLength > 0")
    assert page.eval_on_selector("#message", "el => el.maxLength") == limit
    assert page.locator("#char-count").inner_text() == "0 / 4,000"
    page.locator("#message").press_sequentially("vpn help")
    assert page.locator("#char-count").inner_text() == "8 / 4,000"
    page.fill("#message", "x" * limit)
    page.locator("#message").dispatch_event("input")
    assert page.locator("#char-count").inner_text() == "4,000 / 4,000"
    page.keyboard.type("y")  # the box takes no more than the server would accept
    assert len(page.input_value("#message")) == limit
    over = httpx.post(f"{deskmate}/chat", json={"message": "x" * (limit + 1)}, timeout=30)
    assert over.status_code == 422 and "the limit is 4,000" in over.json()["detail"]
    assert "attach" not in over.json()["detail"]


def test_troubleshooting_walks_step_by_step_to_a_confirmed_ticket(page, deskmate):
    page.goto(f"{deskmate}/")
    page.select_option("#os-select", "windows")
    ask(page, "My VPN keeps disconnecting")
    assert last_answer(page).locator(".step-count").inner_text() == "Step 1 of 5"
    for step in (2, 3):
        last_answer(page).locator("button[data-reply='Still not working']").click()
        page.locator("article.msg.assistant:not(.live)").nth(step - 1).wait_for()
        assert last_answer(page).locator(".step-count").inner_text() == f"Step {step} of 5"
        assert page.locator("button[data-reply='Still not working']:enabled").count() == 1  # old buttons retired
    last_answer(page).locator("button[data-reply='Still not working']").click()
    offer = page.locator("article.msg.assistant:not(.live)").nth(3)
    offer.wait_for()
    assert "My VPN keeps disconnecting" in offer.locator(".ticket-card.offer").inner_text()
    shoot(page, "chat-ticket-offer.png")
    offer.get_by_role("button", name="Create the ticket").click()
    ticket = page.locator(".ticket-card.created .ticket-id")
    ticket.wait_for(timeout=60_000)
    ticket_id = ticket.inner_text()
    assert re.fullmatch(r"DM-[0-9A-Z]{6}", ticket_id)
    stored = httpx.get(f"{deskmate}/tickets/{ticket_id}", timeout=10).json()
    assert stored["status"] == "open" and len(stored["steps_tried"]) == 3
    shoot(page, "chat-ticket.png")


def test_the_trace_inspector_shows_the_path_a_run_took_with_node_timings(page, deskmate):
    page.goto(f"{deskmate}/")
    page.select_option("#os-select", "windows")
    ask(page, "My VPN keeps disconnecting")
    answer = last_answer(page)
    trace_id = answer.get_attribute("data-trace")
    with page.context.expect_page() as opened:
        answer.locator("a.trace-link").click()
    admin = opened.value
    admin.locator(".trace-diagram svg g.node.visited").first.wait_for(timeout=30_000)
    path = ["redact", "classify", "embed_query", "retrieve", "decide", "troubleshoot", "respond"]
    visited = admin.locator(".trace-diagram svg g.node.visited")
    assert set(visited.evaluate_all("nodes => nodes.map(n => n.dataset.node)")) == set(path)
    assert admin.locator(".trace-diagram svg g.node[data-node='answer']:not(.visited)").count() == 1
    assert admin.locator(".trace-diagram svg path.edge.taken").count() >= len(path) - 1
    rows = admin.locator(".node-table tbody tr")
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.node)") == path
    assert all(re.fullmatch(r"[\d.]+ (ms|s)", d) for d in admin.locator(".node-duration").all_inner_texts())
    assert admin.locator(".trace-diagram svg text.timing").count() == len(path)
    # readable at normal zoom: the drawing is not shrunk to fit, and every node name is one unbroken line
    label_heights = admin.locator(".trace-diagram svg g.node text:not(.timing)").evaluate_all(
        "texts => texts.map(t => t.getBoundingClientRect().height)"
    )
    assert label_heights and min(label_heights) >= 12, label_heights
    assert admin.locator(".trace-diagram svg g.node text tspan").count() == 0
    assert trace_id in admin.locator(".facts").inner_text()
    assert "troubleshoot" in admin.locator("table.data").filter(has_text="policy").inner_text()
    assert admin.locator(f"#trace-table tr[data-trace='{trace_id}']").count() == 1
    shoot(admin, "trace-inspector.png", full_page=True)
    admin.set_viewport_size({"width": 1280, "height": 900})
    admin.locator(".trace-diagram").scroll_into_view_if_needed()
    shoot(admin, "trace-inspector-top.png", readme="trace-inspector.png")


def test_admins_upload_with_progress_see_the_document_and_delete_it(page, deskmate, tmp_path):
    doc = tmp_path / "printer-jam.md"
    doc.write_text("# Clearing a paper jam\n\n1. Open tray 2.\n2. Pull the jammed sheet out slowly.\n")
    page.goto(f"{deskmate}/admin")
    page.get_by_role("tab", name="Documents").click()
    page.locator("#document-table tbody tr[data-document]").first.wait_for()
    before = page.locator("#document-table tbody tr[data-document]").count()
    page.set_input_files("#upload-form input[type=file]", str(doc))
    page.locator("#upload-form button[type=submit]").click()
    page.get_by_text("new: Clearing a paper jam").wait_for(timeout=60_000)
    assert page.locator("#upload-progress").get_attribute("value") in ("100", "100.0")
    row = page.locator("#document-table tbody tr", has_text="uploads/printer-jam.md")
    row.wait_for()
    assert page.locator("#document-table tbody tr[data-document]").count() == before + 1
    shoot(page, "admin-documents.png")
    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Delete").click()
    row.wait_for(state="detached")
    assert page.locator("#document-table tbody tr[data-document]").count() == before
    # the upload was a job: the Jobs tab lists it, done, with its chunks, after the start-up KB sync
    page.get_by_role("tab", name="Jobs").click()
    job = page.locator("#job-table tbody tr[data-state='done']", has_text="printer-jam.md")
    job.wait_for()
    assert "index upload" in job.inner_text() and "new: Clearing a paper jam" in job.inner_text()
    assert page.locator("#job-table tbody tr[data-state='done']", has_text="sync kb").count() >= 1


def test_nothing_in_an_answer_can_become_markup_on_the_page(page, deskmate):
    page.goto(f"{deskmate}/")
    html = page.evaluate("""() => window.DeskmateMarkdown.renderMarkdown(
        '<img src=x onerror="window.__pwned=1"> **bold** [click](javascript:alert(1)) [site](https://example.org) ' +
        '<script>window.__pwned=2</script> [1]', {cite: (n) => `<a class="cite" href="#s${n}">[${n}]</a>`})""")
    assert "<img" not in html and "<script" not in html and "&lt;img" in html
    assert all(href.startswith(("https://", "#")) for href in re.findall(r'href="([^"]*)"', html))
    assert "javascript:" not in html and "click" in html  # the label stays, the link does not
    assert '<a href="https://example.org" target="_blank" rel="noopener noreferrer">site</a>' in html
    assert "<strong>bold</strong>" in html and '<a class="cite" href="#s1">[1]</a>' in html
    assert page.evaluate("() => window.__pwned") is None


ATTRIBUTES_WRITTEN = """(html) => {
    const box = document.createElement('div');
    box.innerHTML = html;
    return [...box.querySelectorAll('*')].flatMap((el) => [...el.attributes].map((a) => a.name));
}"""


@pytest.mark.parametrize(
    "markdown",
    [
        "[t](http://a/(http://evil.example/x/onmouseover=alert``;x=) done",  # a link inside a link's URL
        "[c](http://host/[1]/q) see [1]",  # a citation inside a link's URL
        "[`code`](https://example.org/p) and `[x](https://example.org)`",  # code inside a label, a link inside code
        "**[b](https://example.org/a_b_c)** _https://example.org/x_y_",  # emphasis around links
    ],
)
def test_a_link_can_never_be_reopened_into_new_attributes(page, deskmate, markdown):
    page.goto(f"{deskmate}/")
    html = page.evaluate(
        '(md) => window.DeskmateMarkdown.renderMarkdown(md, {cite: (n) => `<a class="cite" href="#s${n}">[${n}]</a>`})',
        markdown,
    )
    names = page.evaluate(ATTRIBUTES_WRITTEN, html)
    assert set(names) <= {"href", "target", "rel", "class"}, html
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert all("<" not in h and ">" not in h and "\u0001" not in h for h in hrefs), html
    assert "\u0001" not in html


def test_a_same_site_link_cannot_point_at_another_host_through_a_backslash(page, deskmate):
    page.goto(f"{deskmate}/")
    html = page.evaluate("() => window.DeskmateMarkdown.renderMarkdown('[help](/\\\\evil.example/x) [ok](/ui/help)')")
    assert re.findall(r'href="([^"]*)"', html) == ["/ui/help"], html


def test_a_long_unbroken_paste_wraps_and_the_composer_stays_in_view(page, deskmate):
    page.goto(f"{deskmate}/")
    ask(page, "my vpn log says " + "Xq7" * 500 + " and https://vpn.example.test/" + "a" * 600)
    width = page.evaluate("() => document.documentElement.clientWidth")
    for selector in ("#messages", "#message", "article.msg.user .bubble", "article.msg.assistant .bubble"):
        box = page.locator(selector).last.bounding_box()
        assert box is not None and box["x"] + box["width"] <= width + 1, (selector, box, width)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width + 1
    shoot(page, "long-paste.png")


def test_the_api_documentation_page_works_without_the_internet(page, deskmate):
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    violations: list[str] = []
    page.on("console", lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None)
    page.goto(f"{deskmate}/docs")
    page.locator(".opblock-summary-path", has_text="/chat").first.wait_for(timeout=30_000)
    assert page.locator(".opblock").count() > 10  # every endpoint is listed
    assert [u for u in requested if not u.startswith(deskmate)] == []  # nothing from a CDN
    assert violations == []
    shoot(page, "api-docs.png")


@pytest.fixture(scope="module")
def deskmate_with_llm(browser, tmp_path_factory):
    """`deskmate serve` with a configured LLM that streams its answer token by token (the fixture KB)."""
    from tests.e2e.test_streaming import StreamingLLM

    with StreamingLLM() as llm:
        llm.token_gap_s = 0.08
        process, base = _serve(
            tmp_path_factory.mktemp("data-llm"),
            DESKMATE_KB_DIR=str(FIXTURE_KB),
            DESKMATE_LLM_BASE_URL=f"{llm.url}/v1",
            DESKMATE_LLM_MODEL="stub",
        )
        yield base
        process.terminate()
        process.wait(timeout=30)


def test_an_llm_answer_appears_word_by_word_as_it_is_written(page, deskmate_with_llm):
    from tests.e2e.test_streaming import ANSWER

    page.goto(f"{deskmate_with_llm}/")
    ask(page, "How do I connect to the VPN on Linux?")
    frames = page.evaluate("() => window.__frames")
    growing = sorted({f["text"] for f in frames if f["done"] == 0 and f["text"] > 0})
    assert len(growing) >= 5, growing  # the live bubble grew many times before the reply was complete
    final = last_answer(page).locator(".answer").inner_text()
    assert final.startswith(ANSWER.split(" [1]")[0])
    shoot(page, "chat-llm-streamed.png")


def test_admins_add_a_confluence_source_sync_it_and_see_its_counts(page, deskmate):
    from tests.e2e.confluence_server import FakeConfluence

    with FakeConfluence(email=CONFLUENCE_USER, token=CONFLUENCE_TOKEN) as confluence:
        for n, topic in enumerate(("Halden printer", "Fjord-Guest Wi-Fi", "Tundra laptop"), start=101):
            confluence.add_page(
                str(n), topic, f"<p>How to set up the {topic}.</p><h2>Steps</h2><ol><li>Open it.</li></ol>"
            )
        page.goto(f"{deskmate}/admin")
        page.get_by_role("tab", name="Sources").click()
        page.get_by_text("No synced sources.").wait_for()
        form = page.locator("#source-form")
        form.locator("select[name=type]").select_option("confluence")
        form.locator("input[name=name]").fill("IT space")
        form.locator("input[name=base_url]").fill(f"{confluence.url}/wiki")
        form.locator("input[name=scope]").fill('{"space_keys": ["IT"]}')
        form.locator("input[name=credential_env]").fill(
            '{"user": "BROWSER_CONFLUENCE_USER", "token": "BROWSER_CONFLUENCE_TOKEN"}'
        )
        form.locator("input[name=credential_env]").press("Enter")
        page.get_by_text("Added IT space").wait_for(timeout=30_000)
        row = page.locator("#source-table tbody tr[data-source]", has_text="IT space")
        assert "never" in row.inner_text()
        row.get_by_role("button", name="Sync now").click()
        row.locator("td", has_text="+3 ~0 −0").wait_for(timeout=120_000)  # polled while the sync runs
        cells = row.locator("td").all_inner_texts()
        assert cells[2].strip() == "ok" and cells[3].strip() == "3", cells
        shoot(page, "admin-sources.png")

        form.locator("input[name=base_url]").fill(f"{confluence.url}/wiki")
        form.locator("input[name=credential_env]").fill('{"token": "ATATT3x-Secret+PastedByMistake=="}')
        form.locator("input[name=credential_env]").press("Enter")
        page.get_by_text("NAME of an environment variable").wait_for()  # the 422 says what to do instead
        assert page.locator("#source-table tbody tr[data-source]").count() == 1


def test_the_insights_tab_charts_the_turns_and_lists_the_meeting_room_gap_with_a_draft_to_download(page, deskmate):
    rooms = (
        "How do I book a meeting room?",
        "can I book the boardroom for a client meeting",
        "Where can I reserve a conference room for 12 people on Tuesday?",
    )
    for question in rooms:  # three people (three conversations), in their own words; one takes the ticket offered
        reply = httpx.post(f"{deskmate}/chat", json={"message": question, "channel": "web"}, timeout=60).json()
        if reply["ticket_event"] == "offered" and question == rooms[0]:
            answer = {"message": "yes", "session_id": reply["session_id"], "channel": "web"}
            assert httpx.post(f"{deskmate}/chat", json=answer, timeout=60).json()["ticket_event"] == "created"
    for question in ("How do I connect to the VPN?", "How do I set up the VPN on my Mac?"):
        reply = httpx.post(f"{deskmate}/chat", json={"message": question, "channel": "cli"}, timeout=60).json()
        vote = {"session_id": reply["session_id"], "message_id": reply["message_id"], "rating": "up"}
        assert httpx.post(f"{deskmate}/feedback", json=vote, timeout=10).status_code == 201
    page.goto(f"{deskmate}/admin#tab=insights")
    page.locator(".insight-tile").first.wait_for(timeout=60_000)
    # every chart was drawn by Chart.js (served by deskmate itself) on its canvas, with data in it
    drawn = page.evaluate(
        "() => [...document.querySelectorAll('#insight-body canvas')].map((c) => {"
        " const chart = window.Chart.getChart(c);"
        " return chart ? [c.id, chart.data.datasets.reduce((n, d) => n + d.data.reduce((a, b) => a + b, 0), 0)] : [c.id, -1]; })"
    )
    totals = dict(drawn)
    assert set(totals) == {"chart-days", "chart-hours", "chart-outcomes", "chart-tickets", "chart-cited"}
    assert totals["chart-days"] >= 5 and totals["chart-days"] == totals["chart-hours"] == totals["chart-outcomes"]
    assert totals["chart-cited"] >= 2 and totals["chart-tickets"] >= 1
    gap = page.locator(".gap").filter(has_text="meeting")
    assert gap.count() == 1 and "room" in gap.locator("strong").inner_text()
    assert all(question in gap.locator(".examples").inner_text() for question in rooms)
    assert "Connecting to the VPN" in page.locator("#insight-body").inner_text()
    with page.expect_download() as downloading:
        gap.locator("button.draft-article").click()
    draft = Path(downloading.value.path()).read_text()
    assert downloading.value.suggested_filename.endswith(".md") and draft.startswith("# ")
    assert all(f"- {question}" in draft for question in rooms)
    page.locator("#tab-insights").screenshot(path=str(ARTIFACTS / "admin-insights.png"))
    if README_IMAGES is not None:
        page.locator("#tab-insights").screenshot(path=str(README_IMAGES / "insights.png"))
    # `deskmate report` asks the same server and writes one page that draws the same charts with no server at all
    report = ARTIFACTS.parent / "insights-report.html"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKMATE_", "GROQ_", "LANGFUSE_", "CHROMA_"))}
    made = subprocess.run(
        [sys.executable, "-m", "app.cli", "report", "--since", "7d", "--out", str(report), "--url", deskmate],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    offline = page.context.new_page()
    offline.route(
        "**/*", lambda route: route.abort() if not route.request.url.startswith("file:") else route.continue_()
    )
    offline.goto(report.as_uri())
    offline.locator(".insight-tile").first.wait_for(timeout=30_000)
    charts = offline.evaluate(
        "() => [...document.querySelectorAll('canvas')].filter((c) => window.Chart.getChart(c)).length"
    )
    assert charts == 5 and offline.locator(".gap").filter(has_text="meeting").count() == 1
    offline.screenshot(path=str(ARTIFACTS / "insights-report.png"), full_page=True)
