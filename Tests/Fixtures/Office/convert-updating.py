#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The positive control of the link tests: LibreOffice converting a document to PDF as a person
would who let it update the document's links, with the network open:

  /usr/bin/python3 convert-updating.py INPUT OUTPUT PROFILE

Starts LibreOffice (`soffice --headless`, the launcher, which makes a new profile and restarts)
on PROFILE listening on a pipe of its own, loads INPUT hidden with UpdateDocMode FULL_UPDATE,
stores OUTPUT as PDF and ends the office. `soffice --convert-to` loads with link updates off,
so it cannot show what a document's links fetch; this does. The caller runs this script in a
process group of its own and kills the group past its deadline: the office may crash or hang
on what it fetched.

Run by Debian's Python (python3-uno).
"""
import os
import subprocess
import sys
import time

import uno
from com.sun.star.beans import PropertyValue

FULL_UPDATE = 3
FILTERS = (
    ("com.sun.star.sheet.SpreadsheetDocument", "calc_pdf_Export"),
    ("com.sun.star.presentation.PresentationDocument", "impress_pdf_Export"),
    ("com.sun.star.text.GenericTextDocument", "writer_pdf_Export"),
)

# Links updated on load, unasked: Writer's UpdateLinks AUTOMATIC (2), Calc's LM_ALWAYS (0); and
# macro security low, without which LibreOffice 7.4 updates the links only of documents in
# trusted locations.
SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Writer/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>2</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


def prop(name, value):
    item = PropertyValue()
    item.Name = name
    item.Value = value
    return item


def main():
    source, target, profile = (os.path.abspath(argument) for argument in sys.argv[1:4])
    os.makedirs(os.path.join(profile, "user"), exist_ok=True)
    with open(os.path.join(profile, "user", "registrymodifications.xcu"), "w") as settings:
        settings.write(SETTINGS)
    pipe = "imprint-updating-%d" % os.getpid()
    office = subprocess.Popen([
        "/usr/lib/libreoffice/program/soffice", "--headless", "--invisible", "--norestore",
        "--nologo", "--nolockcheck", "-env:UserInstallation=" + uno.systemPathToFileUrl(profile),
        "--accept=pipe,name=%s;urp;" % pipe,
    ], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext(
        "com.sun.star.bridge.UnoUrlResolver", local)
    context = None
    deadline = time.monotonic() + 60
    while context is None and time.monotonic() < deadline:
        try:
            context = resolver.resolve("uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
        except Exception:
            time.sleep(0.1)
    if context is None:
        raise SystemExit("LibreOffice did not start")
    desktop = context.ServiceManager.createInstanceWithContext(
        "com.sun.star.frame.Desktop", context)
    document = desktop.loadComponentFromURL(
        uno.systemPathToFileUrl(source), "_blank", 0,
        (prop("Hidden", True), prop("ReadOnly", True), prop("UpdateDocMode", FULL_UPDATE)))
    if document is None:
        raise SystemExit("LibreOffice could not load %s" % source)
    export = next(name for service, name in FILTERS if document.supportsService(service))
    document.storeToURL(uno.systemPathToFileUrl(target), (prop("FilterName", export),))
    document.close(True)
    try:
        desktop.terminate()
    except Exception:
        pass
    office.wait(timeout=30)


if __name__ == "__main__":
    main()
