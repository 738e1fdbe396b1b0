#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: Office files to PDF, imprint's warm office worker against LibreOffice started once
# per file and against unoserver kept warm, in one run, on the same files:
#   imprint    one `imprint convert -o DIR <all files>` process (one office worker, its office
#              started inside the timing), and the same on one file, so that the start-up can
#              be taken off; every run with a fresh, empty XDG_CACHE_HOME (converted PDFs are
#              kept by the upload's SHA-256: a second run would measure the cache)
#   soffice    `soffice --headless --convert-to pdf` a process per file, one private profile
#              made before the timing and reused (only the office's start is paid per file)
#   unoserver  `unoconvert IN OUT` a process per file against one `unoserver` started (and
#              warmed with a file of each kind) before the timing; the server's and its
#              office's CPU and memory are counted too (/proc, before and after)
# The corpus (Benchmarks/make-office-corpus.py, seeded): 48 files of a few pages each, DOCX,
# PPTX, XLSX, ODT, and DOC, XLS and PPT written by LibreOffice. unoserver 3.7 loads documents
# into a visible frame, which makes LibreOffice 7.4 (Debian 12's -nogui build) fail or abort on
# every spreadsheet, so it is compared on the 37 files that are not spreadsheets, with imprint
# timed on the same 37 (the run ends by showing that failure on one XLSX).
# CPU is user + sys of the whole process tree, offices killed with their worker included
# (Benchmarks/tree-usage.py reaps them); peak memory is the largest process's resident set and
# the largest sum of the tree's (sampled every 20 ms). Each measurement runs $RUNS times (default
# 3), the tools taking turns, and the run with the median wall time is kept. Every output's page
# count (pdfinfo) is compared across the three; a file where they differ is listed.
# Usage: Benchmarks/office-bench.sh   (needs scripts/bootstrap --bench and unoserver for Debian's
#        /usr/bin/python3, which has python3-uno: /usr/bin/python3 -m pip install
#        --break-system-packages unoserver; run it under flock /work/bench.lock).
#        IMPRINT=path measures another build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/Benchmarks/common.sh"
work="$root/Benchmarks/out/office"
corpus="$work/corpus"
runs=${RUNS:-3}
usage_of="$root/Benchmarks/tree-usage.py"

if ! /usr/bin/python3 -c 'import unoserver' 2>/dev/null || ! command -v unoconvert >/dev/null; then
  echo "unoserver is missing for /usr/bin/python3 (it needs Debian's python3-uno); install it with" >&2
  echo "  /usr/bin/python3 -m pip install --break-system-packages unoserver" >&2
  exit 1
fi
for tool in soffice pdfinfo; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: run scripts/bootstrap --bench" >&2; exit 1; }
done

# The corpus, made again when the generator changed.
stamp=$(sha256sum "$root/Benchmarks/make-office-corpus.py" | cut -c1-16)
if [[ "$(cat "$corpus/.stamp" 2>/dev/null)" != "$stamp" ]]; then
  rm -rf "$corpus"
  python3 "$root/Benchmarks/make-office-corpus.py" "$corpus"
  echo "$stamp" >"$corpus/.stamp"
fi
find "$work" -mindepth 1 -maxdepth 1 ! -name corpus -exec rm -rf {} +
cd "$root"
if [[ -n "${IMPRINT:-}" ]]; then imprint=$IMPRINT; else build_imprint; fi

files=("$corpus"/*)
documents=() # what unoserver can convert here: all but the spreadsheets
for f in "${files[@]}"; do [[ "$f" == *.xls || "$f" == *.xlsx ]] || documents+=("$f"); done
one=("$corpus/docx-01.docx")

# unoserver on two free loopback ports, stopped when the script ends.
read -r port uno_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
server_pid=""
stop_server() {
  if [[ -n "$server_pid" ]]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  server_pid=""
}
trap stop_server EXIT
unoserver --interface 127.0.0.1 --port "$port" --uno-port "$uno_port" \
  --user-installation "$work/unoserver-profile" >"$work/unoserver.log" 2>&1 &
server_pid=$!
mkdir -p "$work/warm"
for warm in docx-02.docx pptx-01.pptx odt-01.odt; do
  for ((i = 0; i < 120; i++)); do
    unoconvert --port "$port" "$corpus/$warm" "$work/warm/$warm.pdf" >/dev/null 2>&1 && break
    kill -0 "$server_pid" 2>/dev/null || { echo "unoserver ended:" >&2; tail -5 "$work/unoserver.log" >&2; exit 1; }
    sleep 0.5
  done
  [[ -s "$work/warm/$warm.pdf" ]] || { echo "unoserver did not convert $warm" >&2; exit 1; }
done
# The soffice profile, made before the timing.
soffice_profile="file://$work/soffice-profile"
soffice "-env:UserInstallation=$soffice_profile" --headless --convert-to pdf --outdir "$work/warm" \
  "$corpus/docx-02.docx" >/dev/null 2>&1

# measure NAME RUN command...: runs the command (in it, @OUT@ is the output folder, made empty)
# under tree-usage.py with a fresh XDG_CACHE_HOME; into $work/NAME.time.RUN.
measure() {
  local name=$1 run=$2 out="$work/$1.out"; shift 2
  rm -rf "$out" "$work/cache"; mkdir -p "$out" "$work/cache"
  local command=("${@//@OUT@/$out}")
  XDG_CACHE_HOME="$work/cache" python3 "$usage_of" "${also[@]}" "$work/$name.time.$run" -- \
    "${command[@]}" >/dev/null 2>"$work/$name.err" || {
    echo "failed: $name" >&2; tail -5 "$work/$name.err" >&2; exit 1; }
}
soffice_loop='out=$1; profile=$2; shift 2
for f in "$@"; do soffice "-env:UserInstallation=$profile" --headless --convert-to pdf --outdir "$out" "$f"; done'
unoconvert_loop='out=$1; port=$2; shift 2
for f in "$@"; do b=${f##*/}; unoconvert --port "$port" "$f" "$out/${b%.*}.pdf" || exit 1; done'
for ((r = 1; r <= runs; r++)); do
  also=()
  measure imprint-all "$r" "$imprint" convert -o @OUT@ "${files[@]}"
  measure imprint-one "$r" "$imprint" convert -o @OUT@ "${one[@]}"
  measure imprint-documents "$r" "$imprint" convert -o @OUT@ "${documents[@]}"
  measure soffice "$r" bash -c "$soffice_loop" _ @OUT@ "$soffice_profile" "${files[@]}"
  also=(--also "$server_pid")
  measure unoserver "$r" bash -c "$unoconvert_loop" _ @OUT@ "$port" "${documents[@]}"
done

# What unoserver does with a spreadsheet here (not timed; the server may not survive it).
if unoconvert --port "$port" "$corpus/xlsx-01.xlsx" "$work/warm/xlsx-01.pdf" >/dev/null 2>&1; then
  spreadsheet="converted xlsx-01.xlsx"
elif kill -0 "$server_pid" 2>/dev/null; then
  spreadsheet="failed on xlsx-01.xlsx (LibreOffice could not load it)"
else
  sleep 1
  spreadsheet="failed on xlsx-01.xlsx: LibreOffice aborted and unoserver ended ($(grep -m1 -o 'Fatal exception: Signal [0-9]*' "$work/unoserver.log" || echo 'no signal logged'))"
fi
stop_server

python3 - "$work" "${#files[@]}" "${#documents[@]}" "$runs" "$spreadsheet" "${files[@]}" <<'PY'
import os, subprocess, sys
work, total, documents, runs, spreadsheet = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
files = sys.argv[6:]

def read(name):
    """The run with the median wall time: wall s, CPU s, largest process MB, tree MB, and the
    CPU seconds by process name (tree-usage.py's OUT.by)."""
    measured = []
    for r in range(1, int(runs) + 1):
        wall, user, system, largest, tree = map(float, open(f"{work}/{name}.time.{r}").read().split())
        by = dict(item.split("=") for item in open(f"{work}/{name}.time.{r}.by").read().split())
        measured.append((wall, user + system, largest / 1024, tree / 1024,
                         {k: float(v) for k, v in by.items()}))
    return sorted(measured, key=lambda m: m[0])[(len(measured) - 1) // 2]

def pages(folder, path):
    pdf = f"{work}/{folder}.out/{os.path.splitext(os.path.basename(path))[0]}.pdf"
    if not os.path.exists(pdf):
        return None
    info = subprocess.run(["pdfinfo", pdf], capture_output=True, text=True).stdout
    return int(next(l.split()[-1] for l in info.splitlines() if l.startswith("Pages:")))

differ, missing = [], []
for path in files:
    counts = [pages("imprint-all", path), pages("soffice", path)]
    if not path.endswith((".xls", ".xlsx")):
        counts.append(pages("unoserver", path))
    if None in counts:
        missing.append(os.path.basename(path))
    elif len(set(counts)) > 1:
        differ.append(f"{os.path.basename(path)} {counts}")
all_, one, docs, soffice, uno = (read(n) for n in
                                 ("imprint-all", "imprint-one", "imprint-documents", "soffice", "unoserver"))
print(f"office conversion, {total} files ({documents} without the spreadsheets), median of {runs}:")
print(f"{'run':46} {'files':>5} {'wall_s':>7} {'files/s':>7} {'cpu_ms/file':>11} {'peak_MB':>7} {'tree_MB':>7}")
def row(label, n, m):
    print(f"{label:46} {n:5d} {m[0]:7.2f} {n / m[0]:7.2f} {1000 * m[1] / n:11.0f} {m[2]:7.1f} {m[3]:7.1f}")
row("imprint convert, all files", total, all_)
row("imprint convert, one file (the start-up)", 1, one)
steady = ((all_[0] - one[0]) / (total - 1), (all_[1] - one[1]) / (total - 1))
print(f"{'imprint convert, start-up taken off':46} {total - 1:5d} {all_[0] - one[0]:7.2f} "
      f"{1 / steady[0]:7.2f} {1000 * steady[1]:11.0f}")
row("soffice --convert-to, a process a file", total, soffice)
row("imprint convert, no spreadsheets", documents, docs)
steady_docs = ((docs[0] - one[0]) / (documents - 1), (docs[1] - one[1]) / (documents - 1))
print(f"{'imprint convert, no spreadsheets, start-up off':46} {documents - 1:5d} {docs[0] - one[0]:7.2f} "
      f"{1 / steady_docs[0]:7.2f} {1000 * steady_docs[1]:11.0f}")
row("unoserver + unoconvert a file, no spreadsheets", documents, uno)
print(f"imprint vs soffice a file: {soffice[0] / all_[0]:.2f}x faster (wall), "
      f"{soffice[1] / all_[1]:.2f}x less CPU; start-up taken off "
      f"{soffice[0] / total / steady[0]:.2f}x faster, {soffice[1] / total / steady[1]:.2f}x less CPU (goal: 5x)")
print(f"imprint vs unoserver: {uno[0] / docs[0]:.2f}x faster (wall), {uno[1] / docs[1]:.2f}x less CPU; "
      f"start-up taken off {uno[0] / documents / steady_docs[0]:.2f}x faster, "
      f"{uno[1] / documents / steady_docs[1]:.2f}x less CPU (goal: 1.5x)")
split = {n: 1000 * (all_[4].get(n, 0) - one[4].get(n, 0)) / (total - 1)
         for n in ("soffice.bin", "python3", "imprint")}
print(f"imprint's CPU a file, start-up taken off (sampled by process): LibreOffice (soffice.bin) "
      f"{split['soffice.bin']:.0f} ms, office worker (python3) {split['python3']:.0f} ms, "
      f"imprint {split['imprint']:.0f} ms; the start-up (one file): "
      + ", ".join(f"{n} {1000 * one[4].get(n, 0):.0f} ms" for n in ("soffice.bin", "python3", "imprint")))
clients = uno[1] - uno[4]["also"]
print(f"unoserver's CPU a file: unoconvert (a Python process each) {1000 * clients / documents:.0f} ms, "
      f"the server (Python + LibreOffice) {1000 * uno[4]['also'] / documents:.0f} ms")
print(f"unoserver on a spreadsheet: {spreadsheet}")
if missing:
    print(f"missing outputs: {' '.join(missing)}")
print(f"page counts: {'equal on every file' if not differ else str(len(differ)) + ' differ (imprint, soffice, unoserver):'}")
for line in differ:
    print(f"  {line}")
PY
