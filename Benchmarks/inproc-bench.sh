#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: imprint against in-process peers, the libraries a backend would call instead
# (Benchmarks/inproc/, issue #30), each job one alternating run of whole processes:
#   cards      N CR80 cards (default 200) in one PDF, fronts; fronts + backs with a QR code:
#              `imprint card` vs Typst (typst-py) and ReportLab
#   documents  first-page 256-px thumbnails of the corpus, every page of gnuplot.pdf, page
#              counts: `imprint thumb` / `imprint inspect` vs pypdfium2 (PDFium) and PyMuPDF
#   qr         N Ethereum-address QR PNGs (default 1000): `imprint qr --eth` vs zint-bindings,
#              zxing-cpp and segno
# Each job's run.py writes its tables, checks and every run to Benchmarks/out/inproc/results/JOB/;
# this script then prints ONE table of every ratio (peer ÷ imprint: CPU, wall, peak memory) read
# from those files, with the date, the machine's load and its cores, also written to
# Benchmarks/out/inproc/summary.md.
# Usage: Benchmarks/inproc-bench.sh [cards|documents|qr|all] [N]   (default all; N is the cards'
#        and QR codes' count). Environment: ROUNDS (default 5: run.py's --rounds), IMPRINT (a
#        binary already built: no build), CORPUS_DIR (the documents' corpus folder).
# Needs scripts/bootstrap --bench (GNU time, poppler-utils, zbar-tools, python3-venv). The peers'
# PyPI packages (Benchmarks/inproc/requirements.txt, pinned) go into a venv this script makes,
# Benchmarks/out/inproc/venv, and PyMuPDF again with --no-deps into Benchmarks/out/inproc/venv-lean
# (the documents job's timed PyMuPDF rows): never into the system's Python. A venv is made again
# when requirements.txt changes. On a shared machine run it under flock /work/bench.lock.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/Benchmarks/common.sh"

what=${1:-all}
count=${2:-}
case "$what" in
  cards | documents | qr) jobs=("$what") ;;
  all) jobs=(cards documents qr) ;;
  *) echo "usage: Benchmarks/inproc-bench.sh [cards|documents|qr|all] [N]" >&2; exit 2 ;;
esac
rounds=${ROUNDS:-5}
out="$root/Benchmarks/out/inproc"
here="$root/Benchmarks/inproc"
mkdir -p "$out/logs"

for tool in /usr/bin/time pdfinfo pdftoppm zbarimg; do
  command -v "$tool" >/dev/null || { echo "inproc-bench: $tool is missing: run scripts/bootstrap --bench" >&2; exit 1; }
done
python3 -c 'import ensurepip, venv' 2>/dev/null ||
  { echo "inproc-bench: python3 cannot make a venv (Debian: python3-venv): run scripts/bootstrap --bench" >&2; exit 1; }

load_before=$(uptime)
cd "$root"
if [[ -n "${IMPRINT:-}" ]]; then
  imprint=$IMPRINT built="IMPRINT=$IMPRINT"
else
  build_imprint
  built="built at $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
fi
[[ -x "$imprint" ]] || { echo "inproc-bench: no imprint binary at $imprint" >&2; exit 1; }

# The peers' venv, made again when the pinned list changes (its copy is kept inside the venv).
requirements="$here/requirements.txt"
venv="$out/venv"
if ! cmp -s "$requirements" "$venv/requirements.txt"; then
  echo "inproc-bench: making $venv (pip install -r Benchmarks/inproc/requirements.txt)" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$venv/requirements.txt"
fi
if [[ " ${jobs[*]} " == *" documents "* ]]; then
  # PyMuPDF without what `pip install pymupdf` brings along (see documents/README.md).
  mupdf=$(grep -E '^pymupdf==' "$requirements")
  lean="$out/venv-lean"
  if [[ "$(cat "$lean/pymupdf.txt" 2>/dev/null)" != "$mupdf" ]]; then
    echo "inproc-bench: making $lean (pip install --no-deps $mupdf)" >&2
    rm -rf "$lean"
    python3 -m venv "$lean"
    "$lean/bin/pip" install -q --disable-pip-version-check --no-deps "$mupdf"
    echo "$mupdf" >"$lean/pymupdf.txt"
  fi
fi

export IMPRINT="$imprint" IMPRINT_CHECKOUT="$root"
results=()
for job in "${jobs[@]}"; do
  case "$job" in
    cards) args=("${count:-200}"); results+=("$out/results/cards/cards-${count:-200}.md") ;;
    qr) args=("${count:-1000}"); results+=("$out/results/qr/qr-${count:-1000}.md") ;;
    documents)
      args=("$(corpus_folder "${CORPUS_DIR:-}")")
      export LEAN_PY="$out/venv-lean/bin/python"
      results+=("$out/results/documents/documents.md")
      ;;
  esac
  echo "inproc-bench: $job ${args[*]}, $rounds rounds (log: Benchmarks/out/inproc/logs/$job.log)" >&2
  "$venv/bin/python" "$here/$job/run.py" "${args[@]}" --rounds "$rounds" >"$out/logs/$job.log" ||
    { echo "inproc-bench: $job failed; the end of its log:" >&2; tail -20 "$out/logs/$job.log" >&2; exit 1; }
done

header="# In-process peers: Benchmarks/inproc-bench.sh $what${count:+ $count}

$(date -u '+%Y-%m-%d %H:%M UTC'), $("$imprint" --version 2>/dev/null | head -n 1) ($built), \
$(nproc) cores (nproc), median of $rounds alternating rounds.

- load before (uptime): ${load_before#*load average: }
- load after (uptime): $(uptime | sed 's/.*load average: //')"
python3 "$here/summary.py" "$out/summary.md" "$header" "${results[@]}"
