#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Imprint's office worker: Office documents converted to PDF by LibreOffice, kept warm.

Started by ImprintDocuments' OfficeConverter as `python3 office-worker.py --profile DIR
--parent PID`; reads
one JSON request a line on standard input and answers each with one JSON line on standard
output:

  {"input": PATH, "output": PATH, "password": null, "seconds": 120, "cpuSeconds": 120,
   "memoryMB": 2048}
  -> {"status": "converted", "application": "writer|calc|impress|draw"}
  -> {"status": "failed", "code": CODE, "detail": TEXT}

CODE is one of `encrypted` (a password is needed, or the one given is wrong), `unreadable`
(LibreOffice cannot load the file), `exportFailed`, `timeLimit`, `cpuLimit`, `memoryLimit`,
`officeDied` (the office ended for another reason), `workerFailed` (this worker met an error it
did not foresee), `officeDidNotStart` (to the first request, when the office could not be
started), `badRequest`. After `timeLimit`, `cpuLimit`, `memoryLimit`, `officeDied` and
`workerFailed` the worker exits: its parent starts a new one.

Why Python: LibreOffice is driven through UNO, whose Debian binding is python3-uno. Debian 12's
LibreOfficeKit (7.4) cannot create spreadsheets at all (`documentLoad` of any .xlsx, .ods or even
`private:factory/scalc` returns "loadComponentFromURL returned an empty reference"), so the office
runs as `soffice.bin --headless` with a private profile and this worker talks to it over a pipe.

What the office may do:
- no network: soffice.bin runs under a seccomp filter (python3-seccomp, libseccomp's binding)
  that fails every AF_INET and AF_INET6 socket with EACCES, so a linked picture, a fetching field
  or a WEBSERVICE() cell fetches nothing;
- no macros: the profile sets macro security to "very high" with macros disabled, and every
  document is loaded with MacroExecutionMode NEVER_EXECUTE;
- no link updates: UpdateDocMode NO_UPDATE, link updates set to "never" for Writer and Calc
  (Writer's UpdateLinks NEVER is 0, its 2 is AUTOMATIC; Calc's ScLkUpdMode LM_NEVER is 1, its 2
  ON_DEMAND), and every question the office asks while loading (links, macros, filter options)
  answered "no";
- it dies with this worker (PR_SET_PDEATHSIG: this worker forks it from its main thread), and
  this worker with the process that started it; within the limits each request sets: wall
  time, CPU time and memory, its resident memory and its temporary files together (polled
  every 20 ms; the office is killed past any). RLIMIT_CPU, a second or two past the CPU time,
  backs the poll up; LibreOffice's handler turns its SIGXCPU into an abort, so an office that
  dies of a signal past its CPU time is told as `cpuLimit`;
- its temporary files (TMPDIR) are in the profile's folder, PROFILE/tmp, emptied whenever no
  office runs on the profile: LibreOffice inflates a package's part into a temporary file
  before it parses it, so a zip bomb's gigabytes land there, and a killed office leaves its
  temporary folder behind.
"""

import ctypes
import errno
import json
import os
import resource
import shutil
import signal
import socket
import sys
import threading
import time
import zipfile

import seccomp
import uno
import unohelper
from com.sun.star.beans import PropertyValue
from com.sun.star.task import XInteractionHandler

SOFFICE = "/usr/lib/libreoffice/program/soffice.bin"
PR_SET_PDEATHSIG = 1
libc = ctypes.CDLL(None, use_errno=True)

PROFILE_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
 xmlns:xs="http://www.w3.org/2001/XMLSchema"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Writer/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>1</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="UseOpenCL" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="UseLocking" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="CreateBackup" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Recovery/RecoveryInfo"><prop oor:name="Enabled" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Recovery/AutoSave"><prop oor:name="Enabled" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"""

# The fonts the office sees: the system's (fontconfig), with the families Office documents name
# and Debian lacks mapped to the nearest it has, so that lines and pages break as in Word
# (without them LibreOffice falls back to Noto Sans or Droid Sans Fallback, wider or taller, and
# pages run over). The first three were measured on Benchmarks/office-fidelity.sh's Word-saved
# files; the others map to a font of the same style.
# - Verdana: DejaVu Sans (Bitstream Vera, drawn to Verdana's proportions): a Verdana report of 4
#   pages in Word is 4, where Noto Sans made it 7.
# - MS Mincho and MS Gothic (and their P variants, by their Japanese names too): IPA's fonts,
#   drawn to their metrics (fonts-ipafont-mincho, -gothic): a Japanese report of 9 pages is 9,
#   where Droid Sans Fallback made it 10.
# - Calibri Light: Carlito (Calibri's metrics; Carlito has no Light weight).
# - Traditional Arabic: Noto Naskh Arabic, the same Naskh style (no metric twin exists: an Arabic
#   report Word lays out on 27 pages is 36, where DejaVu Sans made it 41).
# - Korean Office fonts: Malgun Gothic, Gulim, Dotum to NanumGothic, Batang and Gungsuh to
#   NanumMyeongjo, the same styles (no metric twins exist in Debian).
FONT_ALIASES = [
    ("Verdana", "DejaVu Sans"),
    ("MS Mincho", "IPAMincho"), ("ＭＳ 明朝", "IPAMincho"),
    ("MS PMincho", "IPAPMincho"), ("ＭＳ Ｐ明朝", "IPAPMincho"),
    ("MS Gothic", "IPAGothic"), ("ＭＳ ゴシック", "IPAGothic"),
    ("MS PGothic", "IPAPGothic"), ("ＭＳ Ｐゴシック", "IPAPGothic"),
    ("Calibri Light", "Carlito"),
    ("Traditional Arabic", "Noto Naskh Arabic"),
    ("Malgun Gothic", "NanumGothic"), ("맑은 고딕", "NanumGothic"),
    ("Gulim", "NanumGothic"), ("굴림", "NanumGothic"),
    ("Dotum", "NanumGothic"), ("돋움", "NanumGothic"),
    ("Batang", "NanumMyeongjo"), ("바탕", "NanumMyeongjo"),
    ("Gungsuh", "NanumMyeongjo"), ("궁서", "NanumMyeongjo"),
]


def font_settings(profile):
    """Writes PROFILE/fonts.conf (the system's fontconfig settings and FONT_ALIASES, its cache in
    the profile) and returns its path, for FONTCONFIG_FILE."""
    from xml.sax.saxutils import escape
    aliases = "".join(
        '  <alias binding="same"><family>%s</family><prefer><family>%s</family></prefer>'
        "</alias>\n" % (escape(family), escape(substitute))
        for family, substitute in FONT_ALIASES)
    path = os.path.join(profile, "fonts.conf")
    with open(path, "w", encoding="utf-8") as settings:
        settings.write(
            '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n'
            "<fontconfig>\n  <include>/etc/fonts/fonts.conf</include>\n%s"
            "  <cachedir>%s</cachedir>\n</fontconfig>\n"
            % (aliases, escape(os.path.join(profile, "fontconfig-cache"))))
    return path


# The PDF export: what the producer's own print would put on paper. Comments, speaker notes and
# hidden slides are left out; a sheet prints its print ranges (Calc's default).
EXPORT_FILTERS = {
    "writer": "writer_pdf_Export",
    "calc": "calc_pdf_Export",
    "impress": "impress_pdf_Export",
    "draw": "draw_pdf_Export",
}
# The import filters of Word's formats (LibreOffice's filter names), whose layout is Word's.
WORD_FILTERS = ("MS Word", "Office Open XML Text", "Rich Text Format", "Word 2007")
EXPORT_DATA = {
    "ExportNotes": False,
    "ExportNotesPages": False,
    "ExportOnlyNotesPages": False,
    "ExportHiddenSlides": False,
    "ExportFormFields": False,
    "ExportBookmarks": False,
    "UseTaggedPDF": False,
    "ReduceImageResolution": False,
    "EmbedStandardFonts": True,
}


def prop(name, value):
    item = PropertyValue()
    item.Name = name
    item.Value = value
    return item


class Refusals(unohelper.Base, XInteractionHandler):
    """Answers every question the office asks while loading with its most cautious choice, and
    remembers whether one was for a password."""

    def __init__(self):
        self.password_asked = False

    def handle(self, request):
        asked = request.getRequest()
        name = getattr(asked, "typeName", "") or type(asked).__name__
        if "Password" in name:
            self.password_asked = True
        choices = request.getContinuations()
        for wanted in ("XInteractionAbort", "XInteractionDisapprove"):
            for choice in choices:
                if any(wanted in t.typeName for t in choice.getTypes()):
                    choice.select()
                    return
        # No abort or disapprove offered: leaving it unanswered makes the load fail.


def no_network():
    """In the office's process, before exec: no internet sockets, and death with this worker."""
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    os.setsid()
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for family in (socket.AF_INET, socket.AF_INET6):
        rules.add_rule(seccomp.ERRNO(errno.EACCES), "socket", seccomp.Arg(0, seccomp.EQ, family))
    rules.load()


class Office:
    def __init__(self, profile):
        self.profile = profile
        self.pipe = "imprint-office-%d" % os.getpid()
        user = os.path.join(profile, "user")
        os.makedirs(user, exist_ok=True)
        with open(os.path.join(user, "registrymodifications.xcu"), "w") as settings:
            settings.write(PROFILE_SETTINGS)
        self.temporary = os.path.join(profile, "tmp")
        self.pid = None
        self.start()

    def start(self):
        arguments = [
            SOFFICE, "--headless", "--invisible", "--nologo", "--norestore", "--nodefault",
            "--nolockcheck", "--nofirststartwizard",
            "-env:UserInstallation=" + uno.systemPathToFileUrl(self.profile),
        ]
        # Its temporary files and anything it would keep in a home folder go to the profile's
        # folder, inside the converter's scratch folder: nothing is written elsewhere. What an
        # office killed on this profile left there (this worker's or one before it) goes first.
        self.empty_temporary()
        os.makedirs(self.temporary, exist_ok=True)
        self.environment = dict(
            os.environ, SAL_USE_VCLPLUGIN="svp", LC_ALL="C.UTF-8", TMPDIR=self.temporary,
            HOME=self.profile, FONTCONFIG_FILE=font_settings(self.profile))
        # The first start in a new profile ends with status 81 once the profile is made (the
        # office's launcher then starts it again): made here first, before this process has
        # the UNO bridge's threads, which a fork must not copy.
        for _ in range(3):
            self.spawn(arguments + ["--terminate_after_init"])
            status = wait_or_kill(self.pid, 60)
            self.pid = None
            if os.waitstatus_to_exitcode(status) == 0:
                break
        self.spawn(arguments + ["--accept=pipe,name=%s;urp;" % self.pipe])
        context = self.connect()
        if context is None:
            self.reap()
            raise RuntimeError("the office did not start")
        self.desktop = context.ServiceManager.createInstanceWithContext(
            "com.sun.star.frame.Desktop", context)

    def spawn(self, arguments):
        pid = os.fork()
        if pid == 0:
            try:
                no_network()
                devnull = os.open(os.devnull, os.O_RDWR)
                for stream in (0, 1, 2):
                    os.dup2(devnull, stream)
                os.execve(SOFFICE, arguments, self.environment)
            finally:
                os._exit(127)
        self.pid = pid
        self.status = None
        self.cpu_used = None

    def connect(self):
        local = uno.getComponentContext()
        resolver = local.ServiceManager.createInstanceWithContext(
            "com.sun.star.bridge.UnoUrlResolver", local)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.exited():
                return None
            try:
                return resolver.resolve(
                    "uno:pipe,name=%s;urp;StarOffice.ComponentContext" % self.pipe)
            except Exception:
                time.sleep(0.05)
        return None

    def exited(self):
        if self.pid is None:
            return True
        try:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == self.pid:
            self.pid = None
            self.status = status
            self.cpu_used = usage.ru_utime + usage.ru_stime
            return True
        return False

    def reap(self):
        """Kills and reaps the office, if it runs, and empties its temporary folder."""
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.pid = None
        self.empty_temporary()

    def empty_temporary(self):
        """Removes what is in the temporary folder (only while no office runs on it)."""
        try:
            names = os.listdir(self.temporary)
        except FileNotFoundError:
            return
        for name in names:
            path = os.path.join(self.temporary, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass

    def temporary_mb(self):
        """The megabytes the office's temporary files take on disk."""
        return folder_mb(self.temporary)

    @staticmethod
    def cpu_seconds(pid):
        with open("/proc/%d/stat" % pid) as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    @staticmethod
    def resident_mb(pid):
        with open("/proc/%d/statm" % pid) as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20

    def convert(self, request):
        source = uno.systemPathToFileUrl(os.path.abspath(request["input"]))
        target = uno.systemPathToFileUrl(os.path.abspath(request["output"]))
        seconds = max(1, min(int(request.get("seconds", 120)), 86400))
        cpu = max(1, min(int(request.get("cpuSeconds", seconds)), 86400))
        memory = max(64, min(int(request.get("memoryMB", 2048)), 1 << 20))
        pid = self.pid
        budget = self.cpu_budget = self.cpu_seconds(pid) + cpu
        _, hard = resource.prlimit(pid, resource.RLIMIT_CPU)
        soft = int(budget) + 2
        resource.prlimit(pid, resource.RLIMIT_CPU, (soft if hard < 0 else min(soft, hard), hard))
        verdict = {}
        done = threading.Event()

        def watch():
            deadline = time.monotonic() + seconds
            while not done.wait(0.02):
                try:
                    if self.resident_mb(pid) + self.temporary_mb() > memory:
                        verdict.setdefault("code", "memoryLimit")
                    elif self.cpu_seconds(pid) > budget:
                        verdict.setdefault("code", "cpuLimit")
                    elif time.monotonic() > deadline:
                        verdict.setdefault("code", "timeLimit")
                    else:
                        continue
                except (OSError, IndexError, ValueError):
                    return
                os.kill(pid, signal.SIGKILL)
                return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        refusals = Refusals()
        properties = [
            prop("Hidden", True), prop("ReadOnly", True), prop("MacroExecutionMode", 0),
            prop("UpdateDocMode", 0), prop("InteractionHandler", refusals),
            prop("Silent", True),
        ]
        if request.get("password") is not None:
            properties.append(prop("Password", str(request["password"])))
        document = None
        try:
            try:
                document = self.desktop.loadComponentFromURL(
                    source, "_blank", 0, tuple(properties))
            except Exception as error:
                return self.failure(verdict, refusals, "unreadable", error)
            if document is None:
                return self.failure(verdict, refusals, "unreadable", None)
            try:
                kind = self.kind(document)
            except Exception as error:
                # The office ended after the load had returned: a Word file's comments make
                # their windows in a user event of its main loop, where Debian's -nogui Writer
                # aborts (annotation.ui missing), before the load's answer or, under load,
                # after it. A call on a live office's document does not fail: wait for the
                # death (a gone bridge's proxy fails with "illegal object given!", which
                # `failure` does not know for one), so that it is told as one.
                deadline = time.monotonic() + 5
                while not self.exited() and time.monotonic() < deadline:
                    time.sleep(0.01)
                return self.failure(verdict, refusals, "unreadable", error)
            if kind is None:
                return {"status": "failed", "code": "unreadable",
                        "detail": "not a text document, spreadsheet, presentation or drawing"}
            if kind == "impress" and slide_count(request["input"]) == 0:
                # LibreOffice gives a deck without slides one empty slide of its own: that is
                # no page the customer made, and none to print or price.
                return {"status": "failed", "code": "noPages", "detail": "no slides"}
            if kind == "writer":
                try:
                    document = self.word_endnotes(document, properties)
                except Exception as error:
                    document = None
                    return self.failure(verdict, refusals, "unreadable", error)
                if document is None:
                    return self.failure(verdict, refusals, "unreadable", None)
            data = uno.Any("[]com.sun.star.beans.PropertyValue",
                           tuple(prop(k, v) for k, v in EXPORT_DATA.items()))
            try:
                document.storeToURL(target, (prop("FilterName", EXPORT_FILTERS[kind]),
                                             prop("FilterData", data)))
            except Exception as error:
                return self.failure(verdict, refusals, "exportFailed", error)
            return {"status": "converted", "application": kind}
        finally:
            done.set()
            if document is not None and not self.exited():
                try:
                    document.close(True)
                except Exception:
                    pass

    def word_endnotes(self, document, properties):
        """A Word file's endnotes where Word prints them: after the text, on its last page.
        LibreOffice 7.4 lays a Word file's endnotes out on a page of their own (one more page
        than Word prints, and prices). Its document setting ContinuousEndnotes puts them after
        the text, but it is read when the layout is made, which loading has done: so a Word
        file with endnotes is saved, with the setting, as an OpenDocument file in the scratch
        folder and loaded from there (as cautiously as the upload was), and that is exported.
        Other files, and files of LibreOffice's own formats, are exported as loaded."""
        filter_name = next((p.Value for p in document.getArgs() if p.Name == "FilterName"), "")
        if not any(word in filter_name for word in WORD_FILTERS):
            return document
        try:
            if document.Endnotes.Count == 0:
                return document
            settings = document.createInstance("com.sun.star.document.Settings")
            if settings.getPropertyValue("ContinuousEndnotes"):
                return document
            settings.setPropertyValue("ContinuousEndnotes", True)
        except Exception:
            return document
        os.makedirs(self.temporary, exist_ok=True)
        laid_out = os.path.join(self.temporary, "endnotes-%d.odt" % os.getpid())
        url = uno.systemPathToFileUrl(laid_out)
        try:
            try:
                document.storeToURL(url, (prop("FilterName", "writer8"),))
            except Exception:
                return document
            # From here the upload's document is closed: a failure to load the OpenDocument
            # file is the caller's (an exception, or None).
            document.close(True)
            return self.desktop.loadComponentFromURL(url, "_blank", 0, tuple(properties))
        finally:
            try:
                os.unlink(laid_out)
            except OSError:
                pass

    @staticmethod
    def kind(document):
        for service, kind in (
            ("com.sun.star.sheet.SpreadsheetDocument", "calc"),
            ("com.sun.star.presentation.PresentationDocument", "impress"),
            ("com.sun.star.drawing.DrawingDocument", "draw"),
            ("com.sun.star.text.GenericTextDocument", "writer"),
        ):
            if document.supportsService(service):
                return kind
        return None

    def failure(self, verdict, refusals, code, error):
        if "code" in verdict:
            # The watchdog killed the office: wait for it to be gone, then say which limit.
            try:
                if self.pid is not None:
                    self.status = wait_or_kill(self.pid, 5)
            except ChildProcessError:
                pass
            self.pid = None
            # Before the answer: its parent may stop this worker as soon as it has it.
            self.empty_temporary()
            return {"status": "failed", "code": verdict["code"], "detail": "stopped"}
        # A bridge to an office that died fails at once, a moment before the process is gone
        # (its pipe closes as it exits): wait for it, so that the death is told as one.
        if error is not None and ("Disposed" in type(error).__name__
                                  or "Disposed" in str(getattr(error, "typeName", ""))
                                  or "bridge" in str(error).lower()):
            deadline = time.monotonic() + 5
            while not self.exited() and time.monotonic() < deadline:
                time.sleep(0.01)
        if self.exited():
            code = verdict.get("code", "officeDied")
            status = self.status
            if code == "officeDied" and status is not None and os.WIFSIGNALED(status) and (
                    os.WTERMSIG(status) == signal.SIGXCPU
                    or self.cpu_used is not None and self.cpu_used >= self.cpu_budget):
                code = "cpuLimit"
            self.empty_temporary()
        elif refusals.password_asked:
            code = "encrypted"
        detail = type(error).__name__ if error is not None else "no document"
        return {"status": "failed", "code": code, "detail": detail}


def application_of(path):
    """The LibreOffice application a file opens in, from its package's part names (a guess for
    the answer only: the conversion itself never depends on it)."""
    try:
        with zipfile.ZipFile(path) as package:
            names = package.namelist()
            if "mimetype" in names:
                kind = package.read("mimetype")[:80].decode("ascii", "replace")
                for word, application in (("presentation", "impress"), ("spreadsheet", "calc"),
                                          ("graphics", "draw")):
                    if word in kind:
                        return application
    except (zipfile.BadZipFile, OSError, KeyError, ValueError, NotImplementedError):
        return "writer"
    if any(name.startswith("ppt/") for name in names):
        return "impress"
    if any(name.startswith("xl/") for name in names):
        return "calc"
    return "writer"


def slide_count(path):
    """The slides a PowerPoint or OpenDocument presentation package holds, from its part names
    or its content; None when the package does not say (a .ppt, a damaged file)."""
    try:
        with zipfile.ZipFile(path) as package:
            names = package.namelist()
            if any(name.startswith("ppt/") for name in names):
                return sum(1 for name in names if name.startswith("ppt/slides/slide")
                           and name.endswith(".xml"))
            if "content.xml" in names:
                content = package.open("content.xml").read(1 << 26)
                return content.count(b"<draw:page ") + content.count(b"<draw:page>")
    except (zipfile.BadZipFile, OSError, KeyError, ValueError, NotImplementedError,
            RuntimeError):
        return None
    return None


def folder_mb(folder):
    """The megabytes the files in `folder` and below take on disk."""
    total = 0
    folders = [folder]
    while folders:
        try:
            entries = list(os.scandir(folders.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                else:
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                pass
    return total >> 20


def convert_once(profile, request):
    """See `_convert_once`; whatever happens, its temporary folder is emptied after."""
    try:
        return _convert_once(profile, request)
    finally:
        shutil.rmtree(os.path.join(profile, "tmp"), ignore_errors=True)


def _convert_once(profile, request):
    """`soffice.bin --convert-to pdf` in a process of its own, fenced in as the warm office is
    (no network, the profile's settings, the request's limits): for a file whose loading through
    UNO ended the warm office. Debian's -nogui Writer lacks `modules/swriter/ui/annotation.ui`,
    which a document with comments needs when it is opened through UNO; a conversion from the
    command line does not. Returns an answer, or None when this way fails too."""
    seconds = max(1, min(int(request.get("seconds", 120)), 86400))
    cpu = max(1, min(int(request.get("cpuSeconds", seconds)), 86400))
    memory = max(64, min(int(request.get("memoryMB", 2048)), 1 << 20))
    user = os.path.join(profile, "user")
    os.makedirs(user, exist_ok=True)
    with open(os.path.join(user, "registrymodifications.xcu"), "w") as settings:
        settings.write(PROFILE_SETTINGS)
    scratch = os.path.join(profile, "tmp")
    os.makedirs(scratch, exist_ok=True)
    outdir = os.path.join(scratch, "once-%d" % os.getpid())
    os.makedirs(outdir, exist_ok=True)
    environment = dict(os.environ, SAL_USE_VCLPLUGIN="svp", LC_ALL="C.UTF-8", TMPDIR=scratch,
                       HOME=profile, FONTCONFIG_FILE=font_settings(profile))
    source = os.path.abspath(request["input"])
    application = application_of(source)
    # The warm office's export settings, in the command line's JSON form: the same PDF.
    options = json.dumps({name: {"type": "boolean", "value": "true" if value else "false"}
                          for name, value in EXPORT_DATA.items()}, separators=(",", ":"))
    arguments = [
        SOFFICE, "--headless", "--invisible", "--nologo", "--norestore", "--nodefault",
        "--nolockcheck", "--nofirststartwizard",
        "-env:UserInstallation=" + uno.systemPathToFileUrl(profile),
        "--convert-to", "pdf:%s:%s" % (EXPORT_FILTERS[application], options),
        "--outdir", outdir, source,
    ]
    # The first run in a new profile ends with status 81 once the profile is made: run again.
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            try:
                no_network()
                resource.setrlimit(resource.RLIMIT_CPU, (cpu + 2, cpu + 3))
                devnull = os.open(os.devnull, os.O_RDWR)
                for stream in (0, 1, 2):
                    os.dup2(devnull, stream)
                os.execve(SOFFICE, arguments, environment)
            finally:
                os._exit(127)
        deadline = time.monotonic() + seconds
        status = None
        while status is None:
            done, waited = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                status = waited
                break
            # The watchdog of the warm office: memory with the temporary files it spools,
            # CPU time (LibreOffice catches SIGXCPU and aborts: told by this, not the signal),
            # wall time.
            try:
                resident = Office.resident_mb(pid) + folder_mb(scratch)
                used = Office.cpu_seconds(pid)
            except (OSError, IndexError, ValueError):
                resident, used = 0, 0
            code = ("memoryLimit" if resident > memory else "cpuLimit" if used > cpu
                    else "timeLimit" if time.monotonic() > deadline else None)
            if code is not None:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return {"status": "failed", "code": code, "detail": "stopped"}
            time.sleep(0.02)
        if os.waitstatus_to_exitcode(status) != 81:
            break
    made = [name for name in os.listdir(outdir) if name.endswith(".pdf")]
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
        return {"status": "failed", "code": "cpuLimit", "detail": "stopped"}
    if len(made) != 1:
        return None
    os.replace(os.path.join(outdir, made[0]), os.path.abspath(request["output"]))
    return {"status": "converted", "application": application}


def wait_or_kill(pid, seconds):
    """The wait status of `pid`, killed first when it has not ended within `seconds`: no wait
    of this worker is unbounded (its parent would wait on it for its own time limit)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return status
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    return os.waitpid(pid, 0)[1]


def watch_parent(parent, office):
    """Ends this worker and its office as soon as the process that started it has ended (it
    may have been killed: standard input's end would then come only when every copy of its
    descriptor is closed). PR_SET_PDEATHSIG would follow the parent's thread, not the process."""
    while os.getppid() == parent:
        time.sleep(0.25)
    office.reap()
    os._exit(0)


def main():
    arguments = sys.argv[1:]
    profile = arguments[arguments.index("--profile") + 1]
    parent = int(arguments[arguments.index("--parent") + 1])
    if os.getppid() != parent:
        return
    try:
        office = Office(profile)
    except Exception as error:
        # The office did not start (or this worker failed while starting it): the request
        # that waits is answered so, and the worker ends; its parent starts a new one.
        sys.stdin.readline()
        sys.stdout.write(json.dumps({"status": "failed", "code": "officeDidNotStart",
                                     "detail": type(error).__name__}) + "\n")
        sys.stdout.flush()
        return
    threading.Thread(target=watch_parent, args=(parent, office), daemon=True).start()
    for line in sys.stdin:
        try:
            request = json.loads(line)
            if not isinstance(request, dict) or not isinstance(request.get("input"), str) \
                    or not isinstance(request.get("output"), str):
                raise ValueError("request")
        except (ValueError, RecursionError):
            answer = {"status": "failed", "code": "badRequest", "detail": "malformed request"}
        else:
            try:
                answer = office.convert(request)
                if answer.get("code") == "officeDied" and request.get("password") is None:
                    # The warm office is gone: this worker ends after answering (its parent
                    # starts a new one), and the file gets one more try from the command line.
                    once = convert_once(office.profile + "-once", request)
                    if once is not None:
                        answer = dict(once, officeEnded=True)
            except Exception as error:
                # Whatever this worker did not foresee is answered, never a traceback and an
                # exit its parent would have to guess at; the worker ends after it, its office
                # gone and its temporary files emptied first (its parent stops it on the answer).
                office.reap()
                answer = {"status": "failed", "code": "workerFailed",
                          "detail": type(error).__name__}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
        if answer.get("officeEnded") or answer.get("code") in (
                "timeLimit", "cpuLimit", "memoryLimit", "officeDied", "workerFailed"):
            break
    office.reap()


if __name__ == "__main__":
    main()
