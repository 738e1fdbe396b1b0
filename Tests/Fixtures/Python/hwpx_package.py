# SPDX-License-Identifier: Apache-2.0
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    z.writestr('mimetype', 'application/hwp+zip', zipfile.ZIP_STORED)
    z.writestr('version.xml', '<version/>', zipfile.ZIP_DEFLATED)
    z.writestr('Contents/header.xml', '<head/>', zipfile.ZIP_DEFLATED)
