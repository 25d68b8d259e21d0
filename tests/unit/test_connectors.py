"""Connector pieces without the app: storage format to sections, back-off, crawl rules."""

from app.adapters.parsers import FileParser, render_plain_text
from app.connectors.confluence import storage_to_html
from app.connectors.http import retry_after_seconds
from app.connectors.website import page_links

STORAGE = """<p>Printers on floor 3.</p>
<ac:structured-macro ac:name="info"><ac:rich-text-body><p>Toner is in the cupboard.</p></ac:rich-text-body></ac:structured-macro>
<ac:structured-macro ac:name="note"><ac:parameter ac:name="title">Before you start</ac:parameter>
<ac:rich-text-body><p>Switch it off.</p></ac:rich-text-body></ac:structured-macro>
<ac:structured-macro ac:name="expand"><ac:parameter ac:name="title">Driver install</ac:parameter><ac:rich-text-body>
<ol><li>Download the driver.</li><li>Run setup.exe.</li></ol></ac:rich-text-body></ac:structured-macro>
<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">powershell</ac:parameter>
<ac:plain-text-body><![CDATA[Add-Printer -Name "Floor3" -DriverName "Halden"]]></ac:plain-text-body></ac:structured-macro>
<table><tbody><tr><th>Printer</th><th>Room</th></tr><tr><td>Halden</td><td>3.14</td></tr></tbody></table>
<ac:structured-macro ac:name="toc"/><ac:structured-macro ac:name="children"/>
<p>See <ac:link><ri:page ri:content-title="Toner orders"/></ac:link> and
<ac:image ac:alt="The Halden control panel shows the error code on the left"><ri:attachment ri:filename="p.png"/></ac:image></p>
<ac:task-list><ac:task><ac:task-status>incomplete</ac:task-status><ac:task-body>Label the tray</ac:task-body></ac:task></ac:task-list>
<ac:structured-macro ac:name="html"><ac:plain-text-body><![CDATA[<script>alert(1)</script>]]></ac:plain-text-body></ac:structured-macro>"""


def test_confluence_storage_format_becomes_plain_sections_with_panels_code_tables_and_links():
    html = storage_to_html("Floor 3 printers", STORAGE)
    document = FileParser().parse("page.html", html.encode())
    text = render_plain_text(document)
    assert document.title == "Floor 3 printers"
    assert "Info: Toner is in the cupboard." in text
    assert "Note: Before you start:" in text and "Switch it off." in text
    assert "Driver install" in text and "2. Run setup.exe." in text
    assert 'Add-Printer -Name "Floor3"' in text
    assert "Halden | 3.14" in text
    assert "See Toner orders and" in text and "error code on the left" in text
    assert "Label the tray" in text
    assert "alert(1)" not in text and "ac:" not in text and "ri:" not in text


def test_retry_after_is_read_as_seconds_or_a_date_and_capped():
    assert retry_after_seconds("3", 1.0) == 3.0
    assert retry_after_seconds("100000", 1.0) == 60.0
    assert retry_after_seconds(None, 2.0) == 2.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", 5.0) == 0.0  # in the past: go now
    assert retry_after_seconds("soon", 4.0) == 4.0


def test_page_links_are_absolute_without_fragments_and_skip_nofollow():
    html = (
        '<a href="/help/a#top">a</a><a href="b">b</a><a rel="nofollow" href="/c">c</a>'
        '<a href="mailto:x@example.com">m</a><a href="javascript:void(0)">j</a><a href="/help/a">again</a>'
    )
    assert page_links("https://help.example.com/help/", html) == [
        "https://help.example.com/help/a",
        "https://help.example.com/help/b",
    ]
