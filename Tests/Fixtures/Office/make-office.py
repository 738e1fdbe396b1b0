#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Office documents made by real producers for the tests (python-docx, python-pptx, openpyxl,
odfpy, msoffcrypto-tool from PyPI; LibreOffice for the old binary formats):

  make-office.py KIND OUTPUT [ARGUMENT]

KIND:
  docx-pages N       N pages, each "Page K" and words in Korean and Arabic, split by page breaks
  pptx-hidden N H    N slides titled "Slide K", slide H (1-based) hidden
  xlsx-rows N        one sheet, N rows of "row K" (about 50 rows a printed page)
  docx-linked URL    one page with a picture linked (not embedded) from URL
  docx-comment TEXT  one page with a Word comment saying TEXT (comments do not print)
  docx-encrypted PW  docx-pages 2, protected with the password PW (agile encryption)
  odt-macro MARKER   an ODT whose Basic macro, bound to the document's load event, writes the
                     file MARKER when the document is opened with macros allowed
  ods-macro MARKER   an ODS whose cell calls a Basic function of the document that writes the
                     file MARKER when the sheet is loaded with macros allowed
  odt-pages N        N pages of an ODT (odfpy), split by page breaks
"""
import io
import sys
import zipfile


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
    elif kind == "xlsx-rows":
        import openpyxl
        workbook = openpyxl.Workbook()
        sheet = workbook.active
        for row in range(1, int(argument) + 1):
            sheet.cell(row, 1, f"row {row}")
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


if __name__ == "__main__":
    main()
