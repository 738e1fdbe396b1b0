# SPDX-License-Identifier: Apache-2.0
import sys
d = sys.argv[1] + '/'
import docx
w = docx.Document(); w.add_heading('Imprint', 0); w.add_paragraph('A page to print.')
w.save(d + 'sample.docx')
import pptx
p = pptx.Presentation(); s = p.slides.add_slide(p.slide_layouts[0])
s.shapes.title.text = 'Imprint'; p.save(d + 'sample.pptx')
import openpyxl
b = openpyxl.Workbook(); b.active['A1'] = 'Imprint'; b.active['B2'] = 42
b.save(d + 'sample.xlsx')
from odf import opendocument, text, table, draw, style
t = opendocument.OpenDocumentText(); t.text.addElement(text.P(text='Imprint'))
t.save(d + 'odfpy.odt')
t = opendocument.OpenDocumentSpreadsheet(); t.spreadsheet.addElement(table.Table(name='S'))
t.save(d + 'odfpy.ods')
for name, make in [('odp', opendocument.OpenDocumentPresentation),
                   ('odg', opendocument.OpenDocumentDrawing)]:
    t = make(); layout = style.PageLayout(name='L'); t.automaticstyles.addElement(layout)
    master = style.MasterPage(name='M', pagelayoutname=layout)
    t.masterstyles.addElement(master)
    body = t.presentation if name == 'odp' else t.drawing
    body.addElement(draw.Page(name='p1', masterpagename=master))
    t.save(d + 'odfpy.' + name)
