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
  docx-encrypted PW  docx-pages 2, protected with the password PW (agile encryption)
  odt-macro MARKER   an ODT whose Basic macro, bound to the document's load event, would write
                     the file MARKER
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


def odt_macro(path, marker):
    """An ODT holding a Basic module whose Main writes `marker`, bound to the load event."""
    content = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
        ' xmlns:script="urn:oasis:names:tc:opendocument:xmlns:script:1.0"'
        ' xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.2">'
        '<office:body><office:text><text:p>A document with a macro.</text:p>'
        '</office:text></office:body></office:document-content>')
    settings_events = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<office:document-styles xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' office:version="1.2"/>')
    meta_with_events = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<office:document-settings xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' office:version="1.2"/>')
    module = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<!DOCTYPE script:module PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" '
        '"module.dtd"><script:module xmlns:script="http://openoffice.org/2000/script" '
        'script:name="Module1" script:language="StarBasic">Sub Main\n'
        'Open "%s" For Output As #1\nPrint #1, "ran"\nClose #1\nEnd Sub\n</script:module>'
        % marker)
    library = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<!DOCTYPE library:library PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" '
        '"library.dtd"><library:library xmlns:library="http://openoffice.org/2000/library" '
        'library:name="Standard" library:readonly="false" library:passwordprotected="false">'
        '<library:element library:name="Module1"/></library:library>')
    libraries = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<!DOCTYPE library:libraries PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" '
        '"libraries.dtd"><library:libraries xmlns:library="http://openoffice.org/2000/library" '
        'xmlns:xlink="http://www.w3.org/1999/xlink"><library:library library:name="Standard" '
        'library:link="false"/></library:libraries>')
    # The load event, in the document's own event table (office:event-listeners in styles'
    # master is not where it goes: ODF keeps document events in content.xml's office:scripts).
    content = content.replace(
        '<office:body>',
        '<office:scripts><office:event-listeners><script:event-listener '
        'script:language="ooo:script" script:event-name="dom:load" xlink:href="'
        'vnd.sun.star.script:Standard.Module1.Main?language=Basic&amp;location=document"/>'
        '</office:event-listeners></office:scripts><office:body>')
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"'
        ' manifest:version="1.2">'
        '<manifest:file-entry manifest:full-path="/" manifest:media-type='
        '"application/vnd.oasis.opendocument.text"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        '<manifest:file-entry manifest:full-path="styles.xml" manifest:media-type="text/xml"/>'
        '<manifest:file-entry manifest:full-path="settings.xml" manifest:media-type="text/xml"/>'
        '<manifest:file-entry manifest:full-path="Basic/" manifest:media-type=""/>'
        '<manifest:file-entry manifest:full-path="Basic/script-lc.xml" manifest:media-type='
        '"text/xml"/>'
        '<manifest:file-entry manifest:full-path="Basic/Standard/" manifest:media-type=""/>'
        '<manifest:file-entry manifest:full-path="Basic/Standard/script-lb.xml" '
        'manifest:media-type="text/xml"/>'
        '<manifest:file-entry manifest:full-path="Basic/Standard/Module1.xml" '
        'manifest:media-type="text/xml"/>'
        '</manifest:manifest>')
    with zipfile.ZipFile(path, "w") as target:
        target.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text",
                        compress_type=zipfile.ZIP_STORED)
        for name, data in (
            ("content.xml", content), ("styles.xml", settings_events),
            ("settings.xml", meta_with_events), ("Basic/script-lc.xml", libraries),
            ("Basic/Standard/script-lb.xml", library), ("Basic/Standard/Module1.xml", module),
            ("META-INF/manifest.xml", manifest),
        ):
            target.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)


if __name__ == "__main__":
    main()
