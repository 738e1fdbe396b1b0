#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Office documents made by real producers for the tests (python-docx, python-pptx, openpyxl,
odfpy, msoffcrypto-tool from PyPI; LibreOffice for the old binary formats):

  make-office.py KIND OUTPUT [ARGUMENT]

KIND:
  docx-pages N       N pages, each "Page K" and words in Korean and Arabic, split by page breaks
  pptx-hidden N H    N slides titled "Slide K", slide H (1-based) hidden
  pptx-empty         a deck without slides
  xlsx-rows N        one sheet, N rows of "row K" (about 50 rows a printed page)
  xlsx-print-area N  xlsx-rows N whose print area is A1:A10
  docx-linked URL    one page with a picture linked (not embedded) from URL
  docx-comment TEXT  one page with a Word comment saying TEXT (comments do not print)
  docx-endnote N TEXT  docx-pages N with an endnote saying TEXT on its last page's words
  docx-fonts         a paragraph in each of Verdana, MS Mincho, Malgun Gothic, Batang and
                     Traditional Arabic (fonts Debian lacks), in its script's words
  docx-encrypted PW  docx-pages 2, protected with the password PW (agile encryption)
  odt-macro MARKER   an ODT whose Basic macro, bound to the document's load event, writes the
                     file MARKER when the document is opened with macros allowed
  ods-macro MARKER   an ODS whose cell calls a Basic function of the document that writes the
                     file MARKER when the sheet is loaded with macros allowed
  odt-pages N        N pages of an ODT (odfpy), split by page breaks

Hostile files (Tests/ImprintDocumentsTests/OfficeHostileTests.swift), made by python-docx,
python-pptx or openpyxl and then edited as a hostile producer would:
  docx-bomb MB       a DOCX whose word/document.xml inflates to MB megabytes of paragraphs
                     (deflate of repeated text, about 1000:1)
  docx-laughs        billion laughs: entities nested ten deep in word/document.xml (15 GB)
  odt-laughs         the same in an ODT's content.xml
  docx-xxe URL       word/document.xml declaring an external entity SYSTEM URL and using it
  docx-dtd URL       word/document.xml whose DOCTYPE names an external DTD at URL
  odt-xxe URL        an ODT's content.xml declaring and using an external entity SYSTEM URL
  docx-field CODE    a paragraph holding the Word field CODE (INCLUDEPICTURE "URL", DDEAUTO ...)
  xlsx-formula F     cell A2 holding the formula F (no cached value, as openpyxl writes it)
  xlsx-extlink URL   cell A2 =[1]Sheet!A2, a reference to cell A2 of the workbook at URL (an
                     external link part keeping the value last seen, "cached")
  odt-linked-image URL  an ODT with a picture linked (not embedded) from URL
  odt-linked-object URL an ODT with an OLE object linked from URL (no replacement image)
  docx-escape NAME...   docx-pages 1 with an extra entry under each NAME ("../../x", "/tmp/x")
  docx-noword        docx-pages 1 with word/ renamed body/: a ZIP that is no Office package
  xlsx-million N     one sheet of N rows of numbers, written as a producer streams them
  xlsx-sparse        a sheet claiming A1:XFD1048576, with cells in its two corners
  pptx-slides N      N slides titled "Slide K" (one python-pptx slide, copied)
"""
import io
import re
import struct
import sys
import zipfile
import zlib


def docx_pages(count):
    import docx
    from docx.enum.text import WD_BREAK
    document = docx.Document()
    for page in range(1, count + 1):
        document.add_paragraph(f"Page {page} 안녕하세요 مرحبا imprint")
        if page < count:
            document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    return document


def main():
    kind, output = sys.argv[1], sys.argv[2]
    argument = sys.argv[3] if len(sys.argv) > 3 else None
    if kind == "docx-pages":
        docx_pages(int(argument)).save(output)
    elif kind == "docx-comment":
        import docx
        document = docx.Document()
        paragraph = document.add_paragraph("Commented text")
        document.add_comment(paragraph.runs, text=argument, author="Reviewer")
        document.save(output)
    elif kind == "docx-endnote":
        docx_endnote(output, int(argument), sys.argv[4])
    elif kind == "docx-fonts":
        docx_fonts(output)
    elif kind == "pptx-hidden":
        import pptx
        count, hidden = int(argument), int(sys.argv[4])
        presentation = pptx.Presentation()
        for number in range(1, count + 1):
            slide = presentation.slides.add_slide(presentation.slide_layouts[1])
            slide.shapes.title.text = f"Slide {number}"
            slide.notes_slide.notes_text_frame.text = f"speaker note {number}"
        presentation.slides[hidden - 1]._element.set("show", "0")
        presentation.save(output)
    elif kind == "pptx-empty":
        import pptx
        pptx.Presentation().save(output)
    elif kind in ("xlsx-rows", "xlsx-print-area"):
        import openpyxl
        workbook = openpyxl.Workbook()
        sheet = workbook.active
        for row in range(1, int(argument) + 1):
            sheet.cell(row, 1, f"row {row}")
        if kind == "xlsx-print-area":
            # Only the first ten rows are the sheet's print area.
            sheet.print_area = "A1:A10"
        workbook.save(output)
    elif kind == "docx-linked":
        import docx
        document = docx.Document()
        document.add_paragraph("A linked picture follows.")
        document.save(output)
        link_picture(output, argument)
    elif kind == "docx-encrypted":
        from msoffcrypto.format.ooxml import OOXMLFile
        plain = io.BytesIO()
        docx_pages(2).save(plain)
        plain.seek(0)
        source = OOXMLFile(plain)
        with open(output, "wb") as target:
            source.encrypt(argument, target)
    elif kind == "odt-macro":
        odt_macro(output, argument)
    elif kind == "ods-macro":
        ods_macro(output, argument)
    elif kind == "odt-pages":
        from odf.opendocument import OpenDocumentText
        from odf.style import ParagraphProperties, Style
        from odf.text import P
        document = OpenDocumentText()
        breaking = Style(name="Break", family="paragraph")
        breaking.addElement(ParagraphProperties(breakbefore="page"))
        document.automaticstyles.addElement(breaking)
        for page in range(1, int(argument) + 1):
            document.text.addElement(
                P(stylename=breaking if page > 1 else None, text=f"Page {page} imprint"))
        document.save(output)
    elif kind in HOSTILE:
        HOSTILE[kind](output, *sys.argv[3:])
    else:
        raise SystemExit(f"unknown kind {kind}")


def link_picture(path, url):
    """Adds a DrawingML picture whose blip is linked (r:link) to `url`, not embedded: an office
    that fetches linked pictures on load would request it."""
    with zipfile.ZipFile(path) as source:
        parts = {name: source.read(name) for name in source.namelist()}
    relationships = parts["word/_rels/document.xml.rels"].decode()
    relationships = relationships.replace(
        "</Relationships>",
        '<Relationship Id="rIdLinked" Type="http://schemas.openxmlformats.org/officeDocument/'
        '2006/relationships/image" Target="%s" TargetMode="External"/></Relationships>' % url)
    parts["word/_rels/document.xml.rels"] = relationships.encode()
    drawing = (
        '<w:p><w:r><w:drawing><wp:inline><wp:extent cx="914400" cy="914400"/>'
        '<wp:docPr id="1" name="Linked"/><a:graphic><a:graphicData '
        'uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic>'
        '<pic:nvPicPr><pic:cNvPr id="0" name="linked.png"/><pic:cNvPicPr/></pic:nvPicPr>'
        '<pic:blipFill><a:blip r:link="rIdLinked"/><a:stretch><a:fillRect/></a:stretch>'
        '</pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="914400" cy="914400"/>'
        '</a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic>'
        '</a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>')
    body = parts["word/document.xml"].decode()
    namespaces = ""
    for prefix, uri in (
        ("wp", "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"),
        ("a", "http://schemas.openxmlformats.org/drawingml/2006/main"),
        ("pic", "http://schemas.openxmlformats.org/drawingml/2006/picture"),
        ("r", "http://schemas.openxmlformats.org/officeDocument/2006/relationships"),
    ):
        if f"xmlns:{prefix}=" not in body:
            namespaces += f' xmlns:{prefix}="{uri}"'
    body = body.replace("<w:document ", "<w:document" + namespaces + " ", 1)
    body = body.replace("<w:sectPr", drawing + "<w:sectPr", 1)
    parts["word/document.xml"] = body.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in parts.items():
            target.writestr(name, data)


def basic_library(source):
    """The parts (name, text) of a document Basic library "Standard" holding one module,
    Module1, with `source`, as LibreOffice 7.4 stores them: Basic/script-lc.xml lists the
    libraries, Basic/Standard/script-lb.xml the library's modules."""
    escaped = source.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
    module = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE script:module PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" '
        '"module.dtd">\n<script:module xmlns:script="http://openoffice.org/2000/script" '
        'script:name="Module1" script:language="StarBasic">%s</script:module>' % escaped)
    library = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE library:library PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" '
        '"library.dtd">\n<library:library xmlns:library="http://openoffice.org/2000/library" '
        'library:name="Standard" library:readonly="false" library:passwordprotected="false">\n'
        ' <library:element library:name="Module1"/>\n</library:library>')
    libraries = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE library:libraries PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" '
        '"libraries.dtd">\n<library:libraries xmlns:library="http://openoffice.org/2000/library"'
        ' xmlns:xlink="http://www.w3.org/1999/xlink">\n'
        ' <library:library library:name="Standard" library:link="false"/>\n'
        '</library:libraries>')
    return [
        ("Basic/Standard/Module1.xml", module), ("Basic/Standard/script-lb.xml", library),
        ("Basic/script-lc.xml", libraries),
    ]


def write_basic_macro(marker):
    """Basic statements that write "ran" to the file `marker`."""
    return 'Open "%s" For Output As #1\nPrint #1, "ran"\nClose #1\n' % marker


def write_package(path, media_type, content, extra):
    """An OpenDocument package: mimetype first and stored, content.xml, the `extra` parts
    (name, text) and a manifest listing them all."""
    parts = [("content.xml", content)] + extra
    entries = "".join(
        ' <manifest:file-entry manifest:full-path="%s" manifest:media-type="text/xml"/>\n' % name
        for name, _ in parts)
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest xmlns:manifest='
        '"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3">\n'
        ' <manifest:file-entry manifest:full-path="/" manifest:version="1.3" '
        'manifest:media-type="%s"/>\n%s</manifest:manifest>' % (media_type, entries))
    with zipfile.ZipFile(path, "w") as target:
        target.writestr(zipfile.ZipInfo("mimetype"), media_type,
                        compress_type=zipfile.ZIP_STORED)
        for name, data in parts + [("META-INF/manifest.xml", manifest)]:
            target.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)


# The namespaces of a content.xml that holds events, Basic calls and text. Some attribute
# values are names with a prefix too (`dom:load`, `ooo:script`, `of:=MARKER()`): without their
# namespaces LibreOffice drops the event binding and cannot read the formula (Err:510).
CONTENT_NAMESPACES = (
    ' xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
    ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
    ' xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"'
    ' xmlns:script="urn:oasis:names:tc:opendocument:xmlns:script:1.0"'
    ' xmlns:dom="http://www.w3.org/2001/xml-events"'
    ' xmlns:ooo="http://openoffice.org/2004/office"'
    ' xmlns:of="urn:oasis:names:tc:opendocument:xmlns:of:1.2"'
    ' xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.3"')


def odt_macro(path, marker):
    """An ODT whose Basic macro Standard.Module1.Main writes `marker`, bound to the document's
    load event (OnLoad), in the structure LibreOffice 7.4 itself stores for a document made
    through UNO with `BasicLibraries` and `Events.replaceByName("OnLoad", ...)`: the binding
    in content.xml's office:scripts as `dom:load`, the module under Basic/.

    LibreOffice runs it when it opens the file in a view with macros allowed (`soffice
    --headless FILE` with macro security low); a hidden load fires no document event at all,
    whatever its MacroExecutionMode."""
    content = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content%s>'
        '<office:scripts><office:event-listeners><script:event-listener '
        'script:language="ooo:script" script:event-name="dom:load" xlink:type="simple" '
        'xlink:href="vnd.sun.star.script:Standard.Module1.Main?language=Basic&amp;'
        'location=document"/></office:event-listeners></office:scripts>'
        '<office:body><office:text><text:p>A document with a macro.</text:p>'
        '</office:text></office:body></office:document-content>' % CONTENT_NAMESPACES)
    source = "Sub Main\n%sEnd Sub\n" % write_basic_macro(marker)
    write_package(path, "application/vnd.oasis.opendocument.text", content,
                  basic_library(source))


def ods_macro(path, marker):
    """An ODS whose cell A2 is `=MARKER()`, a Basic function of the document that writes
    `marker` and returns 7: Calc calls it while it computes the cell (the file keeps no
    cached value), on any load, hidden too, when macros are allowed."""
    content = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content%s>'
        '<office:body><office:spreadsheet><table:table table:name="Sheet1">'
        '<table:table-row><table:table-cell office:value-type="string">'
        '<text:p>A sheet with a macro.</text:p></table:table-cell></table:table-row>'
        '<table:table-row><table:table-cell table:formula="of:=MARKER()"/></table:table-row>'
        '</table:table></office:spreadsheet></office:body></office:document-content>'
        % CONTENT_NAMESPACES)
    source = "Function MARKER()\n%sMARKER = 7\nEnd Function\n" % write_basic_macro(marker)
    write_package(path, "application/vnd.oasis.opendocument.spreadsheet", content,
                  basic_library(source))


# Hostile files.


def docx_endnote(path, count, text):
    """docx-pages COUNT whose last paragraph ends with a reference to an endnote saying TEXT:
    the parts Word writes for one (word/endnotes.xml with its separators, its relationship
    and content type; python-docx has no API for endnotes)."""
    plain = io.BytesIO()
    docx_pages(count).save(plain)
    parts = read_parts(plain)
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    superscript = '<w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
    parts["word/endnotes.xml"] = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        f'<w:endnotes xmlns:w="{w}">'
        '<w:endnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p>'
        '</w:endnote><w:endnote w:type="continuationSeparator" w:id="0"><w:p><w:r>'
        '<w:continuationSeparator/></w:r></w:p></w:endnote>'
        f'<w:endnote w:id="1"><w:p><w:r>{superscript}<w:endnoteRef/></w:r>'
        f'<w:r><w:t xml:space="preserve"> {text}</w:t></w:r></w:p></w:endnote>'
        "</w:endnotes>").encode()
    document = parts["word/document.xml"].decode()
    last = document.rindex("</w:p>")
    reference = f'<w:r>{superscript}<w:endnoteReference w:id="1"/></w:r>'
    parts["word/document.xml"] = (document[:last] + reference + document[last:]).encode()
    relationships = parts["word/_rels/document.xml.rels"].decode()
    parts["word/_rels/document.xml.rels"] = relationships.replace(
        "</Relationships>",
        '<Relationship Id="rIdImprintEndnotes" Type="http://schemas.openxmlformats.org/'
        'officeDocument/2006/relationships/endnotes" Target="endnotes.xml"/></Relationships>'
    ).encode()
    types = parts["[Content_Types].xml"].decode()
    parts["[Content_Types].xml"] = types.replace(
        "</Types>",
        '<Override PartName="/word/endnotes.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.wordprocessingml.endnotes+xml"/></Types>').encode()
    write_parts(path, parts)


def docx_fonts(path):
    import docx
    from docx.oxml.ns import qn
    document = docx.Document()
    for family, words in (("Verdana", "Verdana imprint"), ("ＭＳ 明朝", "明朝 こんにちは"),
                          ("맑은 고딕", "고딕 안녕하세요"), ("바탕", "바탕 안녕하세요"),
                          ("Traditional Arabic", "مرحبا بالعالم")):
        run = document.add_paragraph().add_run(words)
        run.font.name = family
        fonts = run._element.rPr.rFonts
        for script in ("w:eastAsia", "w:cs"):
            fonts.set(qn(script), family)
    document.save(path)


def read_parts(path):
    with zipfile.ZipFile(path) as source:
        return {name: source.read(name) for name in source.namelist()}


def write_parts(path, parts):
    """A ZIP of `parts` (name -> bytes) in their order, each deflated, names written as given
    (zipfile keeps "../" and a leading "/")."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in parts.items():
            target.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data,
                            compress_type=zipfile.ZIP_DEFLATED)


def docx_parts(body, doctype=""):
    """The parts of a python-docx document whose body is `body` (WordprocessingML before the
    section properties), with `doctype` after the XML declaration."""
    import docx
    plain = io.BytesIO()
    docx.Document().save(plain)
    parts = read_parts(plain)
    document = parts["word/document.xml"].decode()
    start = document.index("<w:body>") + len("<w:body>")
    document = document[:start] + body + document[document.index("<w:sectPr"):]
    # A standalone document may not use entities declared outside it: say nothing.
    document = re.sub(r"^<\?xml[^>]*\?>", '<?xml version="1.0" encoding="UTF-8"?>\n' + doctype,
                      document)
    parts["word/document.xml"] = document.encode()
    return parts


def paragraph(text):
    return "<w:p><w:r><w:t xml:space=\"preserve\">%s</w:t></w:r></w:p>" % text


def laughs(root, depth=9):
    """A DOCTYPE for `root` whose entity l9 expands to 10^9 copies of "imprint laughs "."""
    entities = '<!ENTITY l0 "imprint laughs ">\n' + "".join(
        '<!ENTITY l%d "%s">\n' % (level, ("&l%d;" % (level - 1)) * 10)
        for level in range(1, depth + 1))
    return "<!DOCTYPE %s [\n%s]>\n" % (root, entities)


def odt_content(body, doctype=""):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n%s<office:document-content%s><office:body>'
            "<office:text>%s</office:text></office:body></office:document-content>"
            % (doctype, CONTENT_NAMESPACES, body))


def write_odt(path, body, doctype=""):
    write_package(path, "application/vnd.oasis.opendocument.text", odt_content(body, doctype), [])


def docx_bomb(path, megabytes):
    """word/document.xml is MB megabytes of "<w:p><w:r><w:t>imprint bomb</w:t></w:r></w:p>".

    Compressing gigabytes would take minutes: once the window holds only the repeated text,
    each megabyte deflates (with a sync flush, so byte-aligned) to the same bytes, which are
    written again and again. The sizes and CRC are the true ones."""
    parts = docx_parts("")
    document = parts.pop("word/document.xml").decode()
    cut = document.index("<w:sectPr")
    head, tail = document[:cut].encode(), document[cut:].encode()
    unit = b"<w:p><w:r><w:t>imprint bomb</w:t></w:r></w:p>"
    chunk = unit * ((1 << 20) // len(unit))
    count = max(3, int(megabytes))
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    sync = zlib.Z_SYNC_FLUSH
    first = compressor.compress(head + chunk) + compressor.flush(sync)
    second = compressor.compress(chunk) + compressor.flush(sync)
    steady = compressor.compress(chunk) + compressor.flush(sync)
    assert second == steady, "the repeated megabyte did not deflate to the same bytes"
    last = compressor.compress(tail) + compressor.flush()
    checksum = zlib.crc32(head)
    for _ in range(count):
        checksum = zlib.crc32(chunk, checksum)
    checksum = zlib.crc32(tail, checksum)
    size = len(head) + count * len(chunk) + len(tail)
    assert size < 1 << 32, "no ZIP64 here: at most 4095 MB"
    entries = [(name, [zlib.compress(data, 6)[2:-4]], zlib.crc32(data), len(data))
               for name, data in parts.items()]
    entries.insert(2, ("word/document.xml", [first, second] + [steady] * (count - 2) + [last],
                       checksum, size))
    write_raw_zip(path, entries)


def write_raw_zip(path, entries):
    """A ZIP of deflated entries (name, pieces of the raw deflate stream, CRC-32, size)."""
    offsets = []
    with open(path, "wb") as out:
        for name, pieces, checksum, size in entries:
            offsets.append(out.tell())
            encoded = name.encode()
            compressed = sum(len(piece) for piece in pieces)
            out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, checksum,
                                  compressed, size, len(encoded), 0) + encoded)
            for piece in pieces:
                out.write(piece)
        central = out.tell()
        for (name, pieces, checksum, size), offset in zip(entries, offsets):
            encoded = name.encode()
            compressed = sum(len(piece) for piece in pieces)
            out.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21,
                                  checksum, compressed, size, len(encoded), 0, 0, 0, 0, 0,
                                  offset) + encoded)
        end = out.tell()
        out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries),
                              end - central, central, 0))


def docx_laughs(path):
    write_parts(path, docx_parts(paragraph("&l9;"), laughs("w:document")))


def odt_laughs(path):
    write_odt(path, "<text:p>&l9;</text:p>", laughs("office:document-content"))


def docx_xxe(path, url):
    doctype = '<!DOCTYPE w:document [\n<!ENTITY xxe SYSTEM "%s">\n]>\n' % url
    write_parts(path, docx_parts(paragraph("An entity follows: [&xxe;]"), doctype))


def docx_dtd(path, url):
    doctype = '<!DOCTYPE w:document SYSTEM "%s">\n' % url
    write_parts(path, docx_parts(paragraph("A document with an external DTD."), doctype))


def odt_xxe(path, url):
    doctype = '<!DOCTYPE office:document-content [\n<!ENTITY xxe SYSTEM "%s">\n]>\n' % url
    write_odt(path, "<text:p>An entity follows: [&xxe;]</text:p>", doctype)


def docx_field(path, code):
    """A field as Word writes one: begin, the instruction, separate, the last result, end."""
    escaped = code.replace("&", "&amp;").replace("<", "&lt;")
    field = (
        '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText '
        'xml:space="preserve"> %s </w:instrText></w:r><w:r><w:fldChar '
        'w:fldCharType="separate"/></w:r><w:r><w:t>last result</w:t></w:r><w:r><w:fldChar '
        'w:fldCharType="end"/></w:r></w:p>' % escaped)
    write_parts(path, docx_parts(paragraph("A field follows.") + field))


def xlsx_formula(path, formula):
    import openpyxl
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet["A1"] = "A formula follows."
    sheet["A2"] = formula
    workbook.save(path)


def xlsx_extlink(path, url):
    """A2 refers to Sheet!A2 of the workbook at `url` (openpyxl names its first sheet "Sheet")
    through an external link part, as Excel writes one: the part names the workbook (a
    relationship with TargetMode External) and keeps the value last seen, "cached"."""
    xlsx_formula(path, "=[1]Sheet!A2")
    parts = read_parts(path)
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    relationships = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    parts["xl/externalLinks/externalLink1.xml"] = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<externalLink xmlns="%s" '
        'xmlns:r="%s"><externalBook r:id="rId1"><sheetNames><sheetName val="Sheet"/>'
        '</sheetNames><sheetDataSet><sheetData sheetId="0"><row r="2"><c r="A2" t="str">'
        "<v>cached</v></c></row></sheetData></sheetDataSet></externalBook></externalLink>"
        % (main, relationships)).encode()
    parts["xl/externalLinks/_rels/externalLink1.xml.rels"] = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships '
        'xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship '
        'Id="rId1" Type="%s/externalLinkPath" Target="%s" TargetMode="External"/>'
        "</Relationships>" % (relationships, url)).encode()
    workbook = parts["xl/workbook.xml"].decode()
    workbook = workbook.replace(
        "</sheets>", '</sheets><externalReferences><externalReference r:id="rIdExternal"/>'
        "</externalReferences>", 1)
    # openpyxl declares the prefix r on each sheet element, not on the root.
    if "xmlns:r=" not in workbook[:workbook.index(">", workbook.index("<workbook"))]:
        workbook = workbook.replace("<workbook ", '<workbook xmlns:r="%s" ' % relationships, 1)
    parts["xl/workbook.xml"] = workbook.encode()
    parts["xl/_rels/workbook.xml.rels"] = parts["xl/_rels/workbook.xml.rels"].decode().replace(
        "</Relationships>", '<Relationship Id="rIdExternal" Type="%s/externalLink" '
        'Target="externalLinks/externalLink1.xml"/></Relationships>' % relationships).encode()
    parts["[Content_Types].xml"] = parts["[Content_Types].xml"].decode().replace(
        "</Types>", '<Override PartName="/xl/externalLinks/externalLink1.xml" ContentType='
        '"application/vnd.openxmlformats-officedocument.spreadsheetml.externalLink+xml"/>'
        "</Types>").encode()
    write_parts(path, parts)


def odt_linked(path, url, element):
    frame = (
        '<text:p>A linked %s follows.</text:p><text:p><draw:frame draw:name="Linked" '
        'text:anchor-type="as-char" svg:width="5cm" svg:height="5cm"><draw:%s xlink:href="%s" '
        'xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame></text:p>'
        % (element, element, url.replace("&", "&amp;").replace('"', "&quot;")))
    content = odt_content(frame).replace(
        "<office:document-content ",
        '<office:document-content xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"'
        ' xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" ', 1)
    write_package(path, "application/vnd.oasis.opendocument.text", content, [])


def docx_escape(path, *names):
    docx_pages(1).save(path)
    parts = read_parts(path)
    for name in names:
        parts[name] = b"written by a zip entry named to escape\n"
    write_parts(path, parts)


def docx_noword(path):
    docx_pages(1).save(path)
    parts = read_parts(path)
    write_parts(path, {
        name.replace("word/", "body/"): data.replace(b"word/", b"body/")
        for name, data in parts.items()})


def xlsx_million(path, rows):
    """N rows of two numbers each: openpyxl writes the workbook, the rows are put in by hand
    (openpyxl's write-only mode takes some 14 s for a million rows here, this 2 s)."""
    import openpyxl
    workbook = openpyxl.Workbook()
    workbook.active["A1"] = 1
    workbook.save(path)
    parts = read_parts(path)
    count = int(rows)
    cells = "".join(
        '<row r="%d"><c r="A%d"><v>%d</v></c><c r="B%d"><v>%d</v></c></row>'
        % (row, row, row, row, row * 7) for row in range(1, count + 1))
    sheet = parts["xl/worksheets/sheet1.xml"].decode()
    sheet = re.sub(r"<dimension [^>]*/>", '<dimension ref="A1:B%d"/>' % count, sheet)
    sheet = re.sub(r"<sheetData>.*</sheetData>|<sheetData/>",
                   lambda _: "<sheetData>%s</sheetData>" % cells, sheet, flags=re.S)
    parts["xl/worksheets/sheet1.xml"] = sheet.encode()
    write_parts(path, parts)


def xlsx_sparse(path):
    """Two cells, A1 and XFD1048576 (the last cell a sheet has), under a dimension claiming the
    whole sheet."""
    import openpyxl
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet["A1"] = "top left"
    sheet["XFD1048576"] = "bottom right"
    workbook.save(path)
    parts = read_parts(path)
    text = parts["xl/worksheets/sheet1.xml"].decode()
    parts["xl/worksheets/sheet1.xml"] = re.sub(
        r"<dimension [^>]*/>", '<dimension ref="A1:XFD1048576"/>', text).encode()
    write_parts(path, parts)


def pptx_slides(path, count):
    """N slides: python-pptx makes one, copied here with its relationships, content type and
    entry in the presentation's slide list (written in a second for 5000)."""
    import pptx
    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Slide 1"
    presentation.save(path)
    parts = read_parts(path)
    template = parts["ppt/slides/slide1.xml"].decode()
    relationships = parts["ppt/slides/_rels/slide1.xml.rels"]
    ids, links, types = [], [], []
    for number in range(2, int(count) + 1):
        parts["ppt/slides/slide%d.xml" % number] = template.replace(
            ">Slide 1<", ">Slide %d<" % number).encode()
        parts["ppt/slides/_rels/slide%d.xml.rels" % number] = relationships
        ids.append('<p:sldId id="%d" r:id="rIdSlide%d"/>' % (255 + number, number))
        links.append(
            '<Relationship Id="rIdSlide%d" Type="http://schemas.openxmlformats.org/'
            'officeDocument/2006/relationships/slide" Target="slides/slide%d.xml"/>'
            % (number, number))
        types.append(
            '<Override PartName="/ppt/slides/slide%d.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.presentationml.slide+xml"/>' % number)
    def append(name, closing, added):
        parts[name] = parts[name].decode().replace(closing, "".join(added) + closing).encode()
    append("ppt/presentation.xml", "</p:sldIdLst>", ids)
    append("ppt/_rels/presentation.xml.rels", "</Relationships>", links)
    append("[Content_Types].xml", "</Types>", types)
    write_parts(path, parts)


HOSTILE = {
    "docx-bomb": docx_bomb,
    "docx-laughs": docx_laughs,
    "odt-laughs": odt_laughs,
    "docx-xxe": docx_xxe,
    "docx-dtd": docx_dtd,
    "odt-xxe": odt_xxe,
    "docx-field": docx_field,
    "xlsx-formula": xlsx_formula,
    "xlsx-extlink": xlsx_extlink,
    "odt-linked-image": lambda path, url: odt_linked(path, url, "image"),
    "odt-linked-object": lambda path, url: odt_linked(path, url, "object"),
    "docx-escape": docx_escape,
    "docx-noword": docx_noword,
    "xlsx-million": xlsx_million,
    "xlsx-sparse": xlsx_sparse,
    "pptx-slides": pptx_slides,
}


if __name__ == "__main__":
    main()
