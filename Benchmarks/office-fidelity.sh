#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Page fidelity of Office conversion: how often the PDF `imprint convert` makes of a Word file
# has the page count Microsoft Word stored in it (`<Pages>` in docProps/app.xml, written by Word
# when it saved the file).
# The corpus: real Word-saved .docx files, from the test folders of PyPI source distributions
# (pip download; pinned below) and from any FOLDER given (searched for .docx, e.g. a checkout of
# a public project's test data). A file is kept when its app.xml names a Microsoft Word
# application (<Application>Microsoft Office Word</Application>, Microsoft Macintosh Word,
# Microsoft Word 12.0.0 ...) and has <Pages>; the same bytes found twice count once; fuzzers'
# test cases (a name with clusterfuzz or crash-) are left out: their bytes were changed after
# Word saved them.
# Each kept file is converted by one `imprint convert` (a fresh, empty XDG_CACHE_HOME), and
# pdfinfo's page count of its PDF is compared with Word's. Prints matched/total (the goal of
# issue #31: at least 95 %), by source and by Word application, and every miss: file, Word's
# pages, ours (or why imprint failed), and plain LibreOffice's (`soffice --convert-to pdf`, the
# control: one process for all files, then a process for each file it left without a PDF).
# Word writes <Pages> from its last pagination, which can be stale: a miss whose file claims
# more than 2000 words a page (<Words> / <Pages>) is marked "stale?", and the figure is also
# given without such files.
# Usage: Benchmarks/office-fidelity.sh [FOLDER...]   (needs scripts/bootstrap; the downloads go
#        to Benchmarks/out/fidelity). IMPRINT=path measures another build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/Benchmarks/common.sh"
work="$root/Benchmarks/out/fidelity"
# The source distributions whose tests hold Word-saved .docx files.
sdists=(python-docx==1.2.0 PyDocX==0.9.10)
folders=()
for folder in "$@"; do folders+=("$(cd "$folder" && pwd)"); done
mkdir -p "$work/sdists"
rm -rf "$work/files" "$work/pdf" "$work/cache" "$work/soffice-pdf"
mkdir -p "$work/files" "$work/pdf" "$work/cache" "$work/soffice-pdf"
for spec in "${sdists[@]}"; do
  [[ -e "$work/sdists/.$spec" ]] && continue
  python3 -m pip download -q --no-deps --no-binary "${spec%%==*}" "$spec" -d "$work/sdists" >/dev/null ||
    { echo "pip could not download the source distribution of $spec" >&2; exit 1; }
  touch "$work/sdists/.$spec"
done
cd "$root"
if [[ -n "${IMPRINT:-}" ]]; then imprint=$IMPRINT; else build_imprint; fi

# The Word-saved files, named SOURCE--PATH (slashes as _), and what Word says of each.
python3 - "$work" "${folders[@]}" <<'PY'
import hashlib, io, os, re, sys, tarfile, zipfile
work, folders = sys.argv[1], sys.argv[2:]

def candidates():
    for archive in sorted(os.listdir(f"{work}/sdists")):
        path = f"{work}/sdists/{archive}"
        source = re.sub(r"\.(tar\.gz|zip)$", "", archive)
        if archive.endswith(".tar.gz"):
            with tarfile.open(path) as tar:
                for member in tar.getmembers():
                    if member.isfile() and member.name.lower().endswith(".docx"):
                        yield source, member.name.split("/", 1)[-1], tar.extractfile(member).read()
        elif archive.endswith(".zip"):
            with zipfile.ZipFile(path) as package:
                for name in package.namelist():
                    if name.lower().endswith(".docx"):
                        yield source, name.split("/", 1)[-1], package.read(name)
    for folder in folders:
        for directory, _, names in sorted(os.walk(folder)):
            for name in sorted(names):
                if name.lower().endswith(".docx") and not re.search("clusterfuzz|crash-", name):
                    path = os.path.join(directory, name)
                    with open(path, "rb") as f:
                        yield os.path.basename(folder), os.path.relpath(path, folder), f.read()

seen, kept, skipped = set(), [], 0
for source, path, data in candidates():
    digest = hashlib.sha256(data).hexdigest()
    if digest in seen:
        continue
    seen.add(digest)
    try:
        app = zipfile.ZipFile(io.BytesIO(data)).read("docProps/app.xml").decode("utf-8", "replace")
    except (zipfile.BadZipFile, KeyError):
        skipped += 1
        continue
    application = re.search(r"<Application>([^<]*)</Application>", app)
    pages = re.search(r"<Pages>(\d+)</Pages>", app)
    words = re.search(r"<Words>(\d+)</Words>", app)
    if not (application and pages and re.match(r"Microsoft.*Word", application.group(1))):
        skipped += 1
        continue
    name = f"{source}--{path.replace('/', '_')}"
    with open(f"{work}/files/{name}", "wb") as f:
        f.write(data)
    kept.append(f"{name}\t{source}\t{application.group(1)}\t{pages.group(1)}\t"
                f"{words.group(1) if words else 0}\n")
with open(f"{work}/word-pages.tsv", "w") as f:
    f.writelines(kept)
print(f"{len(kept)} Word-saved files with <Pages> ({skipped} other distinct .docx left out)")
PY

XDG_CACHE_HOME="$work/cache" "$imprint" convert --json -o "$work/pdf" "$work"/files/*.docx \
  >"$work/convert.json" 2>"$work/convert.err" || true

# The control: plain LibreOffice, one process for all, then one a file for those it left out
# (a file that crashes it ends the batch).
profile="file://$work/soffice-profile"
timeout 1800 soffice "-env:UserInstallation=$profile" --headless --convert-to pdf \
  --outdir "$work/soffice-pdf" "$work"/files/*.docx >/dev/null 2>&1 || true
for f in "$work"/files/*.docx; do
  b=${f##*/}
  [[ -e "$work/soffice-pdf/${b%.docx}.pdf" ]] && continue
  timeout 120 soffice "-env:UserInstallation=$profile" --headless --convert-to pdf \
    --outdir "$work/soffice-pdf" "$f" >/dev/null 2>&1 || true
done

python3 - "$work" <<'PY'
import json, os, subprocess, sys
work = sys.argv[1]
report = {os.path.basename(f["file"]): f for f in json.load(open(f"{work}/convert.json"))["files"]}

def pdf_pages(pdf):
    if not os.path.exists(pdf):
        return None
    info = subprocess.run(["pdfinfo", pdf], capture_output=True, text=True).stdout
    return next((l.split()[-1] for l in info.splitlines() if l.startswith("Pages:")), None)

rows = []
for line in open(f"{work}/word-pages.tsv"):
    name, source, application, word, words = line.rstrip("\n").split("\t")
    entry = report.get(name, {})
    if entry.get("status") == "ok":
        ours = pdf_pages(entry["output"])
    else:
        ours = "failed: " + entry.get("error", {}).get("code", "no answer")
    control = pdf_pages(f"{work}/soffice-pdf/{name[:-5]}.pdf") or "failed"
    stale = int(words) > 2000 * int(word)
    rows.append((name, source, application, word, ours, control, stale))

def figure(selected, column):
    matched = sum(1 for r in selected if r[column] == r[3])
    return f"{matched}/{len(selected)} ({100 * matched / max(1, len(selected)):.1f} %)"

plausible = [r for r in rows if not r[6]]
print(f"page counts equal to Word's: imprint {figure(rows, 4)}; plain LibreOffice {figure(rows, 5)} "
      f"(goal 95 %)")
print(f"without the {len(rows) - len(plausible)} files whose <Pages> is likely stale (more than "
      f"2000 words a page): imprint {figure(plausible, 4)}; plain LibreOffice {figure(plausible, 5)}")
for index, label in ((1, "source"), (2, "application")):
    for key in sorted({r[index] for r in rows}):
        selected = [r for r in rows if r[index] == key]
        print(f"  {label} {key}: imprint {figure(selected, 4)}, LibreOffice {figure(selected, 5)}")
misses = [r for r in rows if r[4] != r[3]]
if misses:
    print("imprint's misses (file, Word's pages, ours, plain LibreOffice's):")
    for name, _, _, word, ours, control, stale in misses:
        print(f"  {name}  {word}  {ours}  {control}{'  stale?' if stale else ''}")
PY
