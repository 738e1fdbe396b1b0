#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Makes the office benchmark's corpus: Office files of a few pages each, seeded, written by
their real producers (python-docx, python-pptx, openpyxl, odfpy) and, for the old binary
formats, by LibreOffice itself (`soffice --convert-to doc|xls|ppt`).

Usage: make-office-corpus.py OUT_DIR
Writes OUT_DIR/docx-NN.docx (12), pptx-NN.pptx (8), xlsx-NN.xlsx (8), odt-NN.odt (8),
doc-NN.doc (6), xls-NN.xls (3), ppt-NN.ppt (3): 48 files, every name distinct without its
extension (imprint convert -o names each PDF by it). The same seed gives the same documents:
the zip packages' entry dates are fixed, and every text, number and picture comes from
random.Random(SEED + n).
"""

import datetime
import io
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
import struct
import zlib

import docx
import odf.opendocument
import odf.style
import odf.table
import odf.text
import openpyxl
import pptx
import pptx.util
from docx.shared import Pt, Cm

SEED = 31
WORDS = (
    "order print paper sheet colour proof page cover binding staple margin bleed trim card "
    "badge photo name shop customer price quote invoice delivery week month sample layout "
    "design font text image press toner ink glossy matte stock weight size folded booklet "
    "flyer poster banner label sticker envelope letterhead report thesis chapter section "
    "table figure appendix summary result method data value total count number year the of "
    "and to in for on with by at from as is are was be this that which each every all more "
    "less first last next before after between under over about against during without "
    "students office team project meeting plan budget schedule review change update draft "
    "final version client request service support quality check approve return refund "
    "store campus library city street morning evening weekend holiday season spring autumn"
).split()


def sentence(rng, low=8, high=22):
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def paragraph(rng, sentences=None):
    return " ".join(sentence(rng) for _ in range(sentences or rng.randint(3, 7)))


def png(rng, width=240, height=160):
    """A small RGB picture of coloured bands, as PNG bytes (zlib and the PNG chunks by hand)."""
    bands = [tuple(rng.randrange(256) for _ in range(3)) for _ in range(6)]
    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            rows.extend(bands[(x * 6 // width + y * 3 // height) % 6])

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(bytes(rows), 9)) + chunk(b"IEND", b""))


def make_docx(path, rng, n):
    document = docx.Document()
    fixed = datetime.datetime(2026, 3, 1, 9, 0, 0)
    document.core_properties.created = fixed
    document.core_properties.modified = fixed
    document.core_properties.title = f"Report {n}"
    document.add_heading(f"Report {n}: {sentence(rng, 3, 6)[:-1]}", level=0)
    for section in range(rng.randint(3, 6)):
        document.add_heading(sentence(rng, 2, 5)[:-1], level=1)
        for _ in range(rng.randint(2, 4)):
            document.add_paragraph(paragraph(rng))
        if section == 1:
            for _ in range(rng.randint(3, 6)):
                document.add_paragraph(sentence(rng, 4, 10), style="List Bullet")
        if section == 2:
            rows, columns = rng.randint(5, 10), 4
            table = document.add_table(rows=rows, cols=columns)
            table.style = "Table Grid"
            for r in range(rows):
                for c in range(columns):
                    table.cell(r, c).text = (
                        rng.choice(WORDS).capitalize() if c == 0 or r == 0
                        else f"{rng.uniform(1, 999):.2f}")
        if n % 3 == 0 and section == 0:
            document.add_picture(io.BytesIO(png(rng)), width=Cm(8))
    document.save(path)


def make_pptx(path, rng, n):
    deck = pptx.Presentation()
    fixed = datetime.datetime(2026, 3, 1, 9, 0, 0)
    deck.core_properties.created = fixed
    deck.core_properties.modified = fixed
    title = deck.slides.add_slide(deck.slide_layouts[0])
    title.shapes.title.text = f"Deck {n}"
    title.placeholders[1].text = sentence(rng, 4, 8)
    for index in range(rng.randint(4, 9)):
        if index == 2:
            slide = deck.slides.add_slide(deck.slide_layouts[5])
            slide.shapes.title.text = sentence(rng, 2, 4)[:-1]
            rows, columns = rng.randint(3, 6), 4
            shape = slide.shapes.add_table(rows, columns, pptx.util.Inches(0.5),
                                           pptx.util.Inches(1.6), pptx.util.Inches(9),
                                           pptx.util.Inches(0.4 * rows))
            for r in range(rows):
                for c in range(columns):
                    shape.table.cell(r, c).text = (
                        rng.choice(WORDS) if r == 0 or c == 0 else str(rng.randint(1, 999)))
        elif index == 3 and n % 2 == 0:
            slide = deck.slides.add_slide(deck.slide_layouts[5])
            slide.shapes.title.text = sentence(rng, 2, 4)[:-1]
            slide.shapes.add_picture(io.BytesIO(png(rng)), pptx.util.Inches(2),
                                     pptx.util.Inches(1.8), width=pptx.util.Inches(6))
        else:
            slide = deck.slides.add_slide(deck.slide_layouts[1])
            slide.shapes.title.text = sentence(rng, 2, 5)[:-1]
            body = slide.placeholders[1].text_frame
            body.text = sentence(rng, 4, 10)
            for _ in range(rng.randint(2, 5)):
                body.add_paragraph().text = sentence(rng, 4, 10)
    deck.save(path)


def make_xlsx(path, rng, n):
    book = openpyxl.Workbook()
    book.properties.created = datetime.datetime(2026, 3, 1, 9, 0, 0)
    book.properties.modified = datetime.datetime(2026, 3, 1, 9, 0, 0)
    for sheet_index in range(1 + n % 2):
        sheet = book.active if sheet_index == 0 else book.create_sheet()
        sheet.title = f"Sheet {sheet_index + 1}"
        sheet.append(["Item", "Customer", "Date", "Copies", "Pages", "Price", "Total", "Note"])
        rows = rng.randint(40, 120)
        start = datetime.date(2026, 1, 1)
        for r in range(2, rows + 2):
            sheet.append([
                f"{rng.choice(WORDS)}-{r}", rng.choice(WORDS).capitalize(),
                start + datetime.timedelta(days=rng.randint(0, 300)),
                rng.randint(1, 500), rng.randint(1, 40), round(rng.uniform(0.05, 3), 2),
                f"=D{r}*E{r}*F{r}", sentence(rng, 2, 5),
            ])
        sheet.append(["Total", None, None, f"=SUM(D2:D{rows + 1})", None, None,
                      f"=SUM(G2:G{rows + 1})"])
        sheet.column_dimensions["H"].width = 30
    book.save(path)


def make_odt(path, rng, n):
    document = odf.opendocument.OpenDocumentText()
    heading = odf.style.Style(name="Heading", family="paragraph")
    heading.addElement(odf.style.TextProperties(fontsize="16pt", fontweight="bold"))
    heading.addElement(odf.style.ParagraphProperties(margintop="0.4cm", marginbottom="0.2cm"))
    body = odf.style.Style(name="Body", family="paragraph")
    body.addElement(odf.style.TextProperties(fontsize="11pt", fontname="Liberation Serif"))
    body.addElement(odf.style.ParagraphProperties(marginbottom="0.25cm"))
    document.styles.addElement(heading)
    document.styles.addElement(body)
    document.text.addElement(odf.text.H(outlinelevel=1, stylename=heading,
                                        text=f"Notes {n}: {sentence(rng, 3, 6)[:-1]}"))
    for section in range(rng.randint(3, 6)):
        document.text.addElement(odf.text.H(outlinelevel=2, stylename=heading,
                                            text=sentence(rng, 2, 5)[:-1]))
        for _ in range(rng.randint(3, 6)):
            document.text.addElement(odf.text.P(stylename=body, text=paragraph(rng)))
        if section == 1:
            table = odf.table.Table(name=f"Table{n}")
            table.addElement(odf.table.TableColumn(numbercolumnsrepeated=3))
            for _ in range(rng.randint(4, 8)):
                row = odf.table.TableRow()
                for _ in range(3):
                    cell = odf.table.TableCell()
                    cell.addElement(odf.text.P(text=rng.choice(WORDS)))
                    row.addElement(cell)
                table.addElement(row)
            document.text.addElement(table)
    document.save(path)


def fix_dates(path):
    """Rewrites a zip package with every entry dated 1980-01-01 (same entries, same order),
    and the modification date openpyxl writes on saving replaced by a fixed one."""
    with zipfile.ZipFile(path) as source:
        entries = [(info, source.read(info)) for info in source.infolist()]
    modified = rb"(<dcterms:modified[^>]*>)[^<]*"
    entries = [(info, re.sub(modified, rb"\g<1>2026-03-01T09:00:00Z", data)
                if info.filename == "docProps/core.xml" else data) for info, data in entries]
    with zipfile.ZipFile(path, "w") as target:
        for info, data in entries:
            fixed = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            fixed.compress_type = info.compress_type
            fixed.external_attr = 0o644 << 16
            target.writestr(fixed, data)


def to_binary(sources, extension, out, profile):
    """Converts `sources` with LibreOffice to `extension` (doc, xls, ppt) into `out`."""
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run(
            ["soffice", f"-env:UserInstallation=file://{profile}", "--headless",
             "--convert-to", extension, "--outdir", scratch, *sources],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for source in sources:
            stem = os.path.splitext(os.path.basename(source))[0]
            made = os.path.join(scratch, stem + "." + extension)
            if not os.path.exists(made):
                sys.exit(f"soffice made no {extension} of {source}")
            shutil.move(made, os.path.join(out, stem + "." + extension))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    makers = [("docx", make_docx, 12), ("pptx", make_pptx, 8), ("xlsx", make_xlsx, 8),
              ("odt", make_odt, 8)]
    for kind, make, count in makers:
        for n in range(1, count + 1):
            path = os.path.join(out, f"{kind}-{n:02d}.{kind}")
            make(path, random.Random(f"{SEED}-{kind}-{n}"), n)
            fix_dates(path)
    # The old binary formats: documents of their own (seeded apart), written by LibreOffice.
    with tempfile.TemporaryDirectory() as scratch:
        for kind, make, count, binary in [("docx", make_docx, 6, "doc"),
                                          ("xlsx", make_xlsx, 3, "xls"),
                                          ("pptx", make_pptx, 3, "ppt")]:
            sources = []
            for n in range(1, count + 1):
                path = os.path.join(scratch, f"{binary}-{n:02d}.{kind}")
                make(path, random.Random(f"{SEED}-{binary}-{n}"), n + 20)
                sources.append(path)
            to_binary(sources, binary, out, os.path.join(scratch, "profile"))


if __name__ == "__main__":
    main()
