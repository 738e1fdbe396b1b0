#!/usr/bin/env python3
"""Writes the document fixtures (run from this folder; needs qpdf for the encrypted one).

Minimal hand-written PDFs, so every structural property is known exactly:
  mixed.pdf        3 pages: A4 portrait (black text), Letter landscape (a red square),
                   A5 with /Rotate 90 (blank)
  hyperlink.pdf    1 A4 page of black text with one small blue word (colour, 0.0075 % of the page)
  encrypted.pdf    mixed.pdf with user password "secret" (qpdf)
  noprint.pdf      mixed.pdf, empty user password, printing not permitted (qpdf)
  objstreams.pdf   PDF 1.5: the page tree (two levels, an inherited media box, a rotated
                   page) inside a Flate object stream, found through a cross-reference stream
                   with the PNG Up predictor; 3 pages: A4, Letter landscape, A5 turned
Hostile:
  empty.pdf, html.pdf (HTML named .pdf), truncated.pdf, brokenxref.pdf, zeropages.pdf,
  countlies.pdf (/Count 1, 3 kids), cycle.pdf (a kid pointing back at the root),
  huge-page.pdf (200 x 200 inch), huge.png (claims 100000 x 100000), bomb.pdf (1 MB stream
  that inflates to a 18900 x 18900 RGB image), cpu.pdf (a content stream of 400 MB of spaces)
"""
import struct, subprocess, zlib

def pdf(objects, root=1, extra_trailer=""):
    out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        if isinstance(body, str):
            body = body.encode("latin-1")
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, root, extra_trailer.encode(), xref)
    return out

def stream(data, extra=""):
    if isinstance(data, str):
        data = data.encode("latin-1")
    return b"<< /Length %d %s>>\nstream\n" % (len(data), extra.encode()) + data + b"\nendstream"

font = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
text = "BT /F1 24 Tf 72 700 Td (Imprint test page) Tj ET"

def page(parent, box, content, rotate=0):
    return ("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %s] /Rotate %d "
            "/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>") % (parent, box, rotate, 3, content)

# mixed.pdf: 1 catalog, 2 pages, 3 font, 4..6 pages, 7..9 contents
mixed = pdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [4 0 R 5 0 R 6 0 R] /Count 3 >>",
    font,
    page(2, "595.28 841.89", 7),
    page(2, "792 612", 8),
    page(2, "419.53 595.28", 9, rotate=90),
    stream(text),
    stream("1 0 0 rg 100 100 300 300 re f 0 g " + text),
    stream(""),
])
open("mixed.pdf", "wb").write(mixed)
open("hyperlink.pdf", "wb").write(pdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
    font,
    page(2, "595.28 841.89", 5),
    stream(text + " BT /F1 6 Tf 0 0 1 rg 72 650 Td (link) Tj ET"),
]))
def pdf_compressed(in_stream, plain):
    """Objects 1..len(in_stream) in one object stream, the plain ones after it, then an xref
    stream with W [1 4 2] and predictor 12."""
    header, body = b"", b""
    for number, obj in enumerate(in_stream, 1):
        header += b"%d %d " % (number, len(body))
        body += obj.encode("latin-1") + b"\n"
    objstm_number = len(in_stream) + 1
    out = b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n"
    offsets = {}
    data = zlib.compress(header + body)
    offsets[objstm_number] = len(out)
    out += b"%d 0 obj\n<< /Type /ObjStm /N %d /First %d /Length %d /Filter /FlateDecode >>\nstream\n" % (
        objstm_number, len(in_stream), len(header), len(data)) + data + b"\nendstream\nendobj\n"
    for index, obj in enumerate(plain):
        number = objstm_number + 1 + index
        offsets[number] = len(out)
        if isinstance(obj, str):
            obj = obj.encode("latin-1")
        out += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref_number = objstm_number + 1 + len(plain)
    offsets[xref_number] = len(out)
    rows = [(0, 0, 65535)]
    for number in range(1, xref_number + 1):
        if number <= len(in_stream):
            rows.append((2, objstm_number, number - 1))
        else:
            rows.append((1, offsets[number], 0))
    raw, previous = b"", bytes(7)
    for row in rows:
        current = struct.pack(">BIH", *row)
        raw += b"\x02" + bytes((c - p) & 0xFF for c, p in zip(current, previous))
        previous = current
    data = zlib.compress(raw)
    out += (b"%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Filter /FlateDecode "
            b"/DecodeParms << /Predictor 12 /Columns 7 >> /Length %d >>\nstream\n" % (
                xref_number, xref_number + 1, len(data)) + data + b"\nendstream\nendobj\n")
    out += b"startxref\n%d\n%%%%EOF\n" % offsets[xref_number]
    return out

# objstreams.pdf: in the object stream 1 catalog, 2 root (A4 media box, inherited), 3 and 5
# inner nodes, 4 6 7 pages; then 8 the object stream, 9 font, 10..12 contents, 13 the xref stream.
open("objstreams.pdf", "wb").write(pdf_compressed([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 3 /MediaBox [0 0 595.28 841.89] >>",
    "<< /Type /Pages /Parent 2 0 R /Kids [4 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 3 0 R /Resources << /Font << /F1 9 0 R >> >> /Contents 10 0 R >>",
    "<< /Type /Pages /Parent 2 0 R /Kids [6 0 R 7 0 R] /Count 2 /Rotate 0 >>",
    "<< /Type /Page /Parent 5 0 R /MediaBox [0 0 792 612] /Contents 11 0 R >>",
    "<< /Type /Page /Parent 5 0 R /MediaBox [0 0 419.53 595.28] /Rotate 90 /Contents 12 0 R >>",
], [font, stream(text), stream("1 0 0 rg 100 100 300 300 re f"), stream("")]))
subprocess.run(["qpdf", "--encrypt", "secret", "owner", "256", "--", "mixed.pdf", "encrypted.pdf"], check=True)
subprocess.run(["qpdf", "--encrypt", "", "owner", "256", "--print=none", "--", "mixed.pdf", "noprint.pdf"], check=True)

open("empty.pdf", "wb").write(b"")
open("html.pdf", "wb").write(b"<!DOCTYPE html><html><body>Not a PDF</body></html>\n")
open("truncated.pdf", "wb").write(mixed[: len(mixed) // 3])
broken = mixed.replace(b"startxref\n", b"startxref\n9").replace(b"xref\n0 10", b"xref\n0 99")
open("brokenxref.pdf", "wb").write(broken)
open("zeropages.pdf", "wb").write(pdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [] /Count 0 >>",
]))
open("countlies.pdf", "wb").write(pdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [4 0 R 5 0 R 6 0 R] /Count 1 >>",
    font,
    page(2, "595.28 841.89", 7), page(2, "595.28 841.89", 7), page(2, "595.28 841.89", 7),
    stream(text),
]))
open("cycle.pdf", "wb").write(pdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [4 0 R 2 0 R] /Count 2 >>",
    font,
    page(2, "595.28 841.89", 5),
    stream(text),
]))
open("huge-page.pdf", "wb").write(pdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 14400 14400] /Contents 4 0 R >>",
    stream("0 g 0 0 100 100 re f"),
]))
ihdr = struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0, 0, 0)
def chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
open("huge.png", "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(b"IEND", b""))

side = 18900
compressor = zlib.compressobj(9)
row = b"\x80" * (side * 3)
parts = []
for _ in range(side):
    parts.append(compressor.compress(row))
parts.append(compressor.flush())
image = b"".join(parts)
open("bomb.pdf", "wb").write(pdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /Im 5 0 R >> >> /Contents 4 0 R >>",
    stream("q 595 0 0 842 0 0 cm /Im Do Q"),
    stream(image, "/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode " % (side, side)),
]))
spaces = zlib.compress(b" " * (400 << 20), 9)
open("cpu.pdf", "wb").write(pdf([
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
    stream(spaces, "/Filter /FlateDecode "),
]))
