"""Office fixtures built by the libraries themselves (python-docx, python-pptx, openpyxl), and hostile variants."""

from __future__ import annotations

import io
import zipfile


def vpn_howto_docx(*, extra_step: str = "") -> bytes:
    """A Word how-to: title, headings, a numbered list with a nested bullet, a table and a picture's alt text."""
    import docx
    from docx.shared import Inches

    document = docx.Document()
    document.core_properties.title = "VPN how-to"
    document.add_paragraph("Reset the Contoso VPN token", style="Title")
    document.add_paragraph("Use this when the VPN client says your token has expired.")
    document.add_heading("Steps", level=1)
    document.add_paragraph("Open the Contoso self-service portal.", style="List Number")
    document.add_paragraph("Choose Security, then Reset VPN token.", style="List Number")
    document.add_paragraph("Keep the old token until the new one works.", style="List Bullet 2")
    document.add_paragraph("Scan the new QR code with the Authenticator app.", style="List Number")
    if extra_step:
        document.add_paragraph(extra_step, style="List Number")
    document.add_heading("Token lifetimes", level=2)
    table = document.add_table(rows=3, cols=2)
    for row, (kind, days) in zip(
        table.rows, [("Token type", "Lifetime"), ("Staff", "90 days"), ("Contractor", "30 days")]
    ):
        row.cells[0].text, row.cells[1].text = kind, days
    picture = io.BytesIO()
    _png(picture)
    document.add_picture(picture, width=Inches(1))
    document.inline_shapes[0]._inline.docPr.set("descr", "The portal's Security tab lists the Reset VPN token button")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _png(out: io.BytesIO) -> None:
    from PIL import Image

    Image.new("RGB", (4, 4), "white").save(out, format="PNG")


def onboarding_pptx() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    title_slide = deck.slides.add_slide(deck.slide_layouts[0])
    title_slide.shapes.title.text = "New starter IT onboarding"
    title_slide.placeholders[1].text = "What IT sets up in your first week"
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Your laptop"
    body = slide.placeholders[1].text_frame
    body.text = "Collect it from the IT bar on level 2"
    sub = body.add_paragraph()
    sub.text = "Bring your badge"
    sub.level = 1
    slide.notes_slide.notes_text_frame.text = "Remind them that BitLocker recovery keys are in the portal."
    table_slide = deck.slides.add_slide(deck.slide_layouts[5])
    table_slide.shapes.title.text = "Who to call"
    table = table_slide.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(6), Inches(1)).table
    table.cell(0, 0).text, table.cell(0, 1).text = "Team", "Extension"
    table.cell(1, 0).text, table.cell(1, 1).text = "Service desk", "4357"
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def asset_list_xlsx(rows: int = 3) -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Laptops"
    sheet.append(["Asset tag", "Model", "Owner"])
    for number in range(rows):
        sheet.append([f"LT-{1000 + number}", "ThinkPad T14", f"user{number}"])
    rota = workbook.create_sheet("On-call rota")
    rota.append(["Week", "Engineer", "Phone"])
    rota.append(["2026-W48", "Dana", "+44 20 7946 0000"])
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def rewrite_package(
    data: bytes, *, replace: dict[str, bytes] | None = None, add: dict[str, bytes] | None = None
) -> bytes:
    """The same package with parts replaced or added (how a hostile file differs from a real one)."""
    replace, add = replace or {}, add or {}
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(info.filename, replace.get(info.filename, source.read(info.filename)))
        for name, body in add.items():
            target.writestr(name, body)
    return out.getvalue()


def zip_bomb_docx() -> bytes:
    """A real DOCX carrying one part that inflates from ~100 KB to 100 MB of zeros."""
    return rewrite_package(vpn_howto_docx(), add={"word/media/padding.bin": b"\0" * (100 * 1024 * 1024)})


def macro_docm_named_docx() -> bytes:
    """A DOCX turned into a macro-enabled document (.docm content type and a VBA project), kept under .docx."""
    data = vpn_howto_docx()
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        types = package.read("[Content_Types].xml").decode()
    types = types.replace(
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
        "application/vnd.ms-word.document.macroEnabled.main+xml",
    )
    return rewrite_package(
        data,
        replace={"[Content_Types].xml": types.encode()},
        add={"word/vbaProject.bin": b"\xd0\xcf\x11\xe0" + b"Attribute VB_Name" * 10},
    )


def xlsx_with_external_link() -> bytes:
    link = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        b'<externalLink xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        b'<externalBook xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" r:id="rId1">'
        b'<sheetNames><sheetName val="Secrets"/></sheetNames></externalBook></externalLink>'
    )
    rels = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
        b'externalLinkPath" Target="file:///\\\\fileserver\\finance\\salaries.xlsx" TargetMode="External"/>'
        b"</Relationships>"
    )
    return rewrite_package(
        asset_list_xlsx(),
        add={"xl/externalLinks/externalLink1.xml": link, "xl/externalLinks/_rels/externalLink1.xml.rels": rels},
    )
