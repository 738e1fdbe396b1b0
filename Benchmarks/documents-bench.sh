#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: uploaded documents on the real-PDF corpus, imprint against the peers, in one run.
#   thumbnails   first page at 256 px of every corpus file: one `imprint thumb` process vs a
#                `pdftoppm -scale-to 256` loop and a `mutool draw -w 256 -h 256` loop
#   all pages    every page of gnuplot.pdf (311) at 256 px: imprint vs pdftoppm vs mutool
#   page counts  every corpus file: `imprint inspect` vs a `pdfinfo` loop and a
#                `qpdf --show-npages` loop; the counts must equal pdfinfo's
#   colour       per-page colour of the colour-test files: `imprint inspect --colors` vs a
#                Ghostscript `inkcov` loop at 75 dpi
#   photo page   a phone photo saved as a PDF (a 4032 x 2268 baseline JPEG page, made here by
#                Pillow, seeded) thumbnailed at 256 px 20 times: `imprint thumb` vs `mutool
#                draw`, a process each, start-up included (issue #30: at most 3x mutool's CPU)
# Each is run $RUNS times (default 3); the run with the median wall time is reported.
# Usage: Benchmarks/documents-bench.sh [CORPUS_DIR]   (needs scripts/bootstrap --bench; the
# corpus comes from ../shared/corpus/get-corpus.sh, fetched here when the folder is empty)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/Benchmarks/common.sh"
corpus=$(corpus_folder "${1:-}")
work="$root/Benchmarks/out/documents"
rm -rf "$work"; mkdir -p "$work"
cd "$root"
build_imprint
files=("$corpus"/*.pdf)

runs=${RUNS:-3}
t() { # NAME command...: wall and CPU seconds (children included) and peak memory, the run with
  # the median wall time of $runs, into $work/NAME.time (the machines are shared and noisy)
  local name=$1 r; shift
  for ((r = 1; r <= runs; r++)); do
    local start=$(date +%s%N)
    /usr/bin/time -f "%U %S %M" -o "$work/$name.usage" "$@" >/dev/null 2>"$work/$name.err" ||
      { echo "failed: $name" >&2; tail -3 "$work/$name.err" >&2; exit 1; }
    local end=$(date +%s%N)
    # Wall time from the clock in nanoseconds (GNU time's %e counts hundredths).
    echo "$(((end - start) / 1000000)) $(cat "$work/$name.usage")" |
      awk '{printf "%.3f %s %s %s\n", $1 / 1000, $2, $3, $4}' >"$work/$name.time.$r"
  done
  sort -n "$work/$name".time.* | sed -n "$(((runs + 1) / 2))p" >"$work/$name.time"
}

mkdir -p "$work/i1" "$work/p1" "$work/m1"
t thumb-imprint "$imprint" thumb --size 256 -o "$work/i1" "${files[@]}"
t thumb-pdftoppm bash -c 'for f in "$@"; do pdftoppm -f 1 -l 1 -singlefile -scale-to 256 -png "$f" "'"$work"'/p1/$(basename "$f" .pdf)"; done' _ "${files[@]}"
t thumb-mutool bash -c 'for f in "$@"; do mutool draw -q -w 256 -h 256 -o "'"$work"'/m1/$(basename "$f" .pdf).png" "$f" 1; done' _ "${files[@]}"
[ "$(ls "$work/i1" | wc -l)" -eq "${#files[@]}" ] || { echo "imprint made too few thumbnails" >&2; exit 1; }

mkdir -p "$work/ia" "$work/pa" "$work/ma"
gnuplot="$corpus/gnuplot.pdf"
t all-imprint "$imprint" thumb --pages all --size 256 -o "$work/ia" "$gnuplot"
t all-pdftoppm pdftoppm -scale-to 256 -png "$gnuplot" "$work/pa/p"
t all-mutool mutool draw -q -w 256 -h 256 -o "$work/ma/p%d.png" "$gnuplot"
[ "$(ls "$work/ia" | wc -l)" -eq 311 ] || { echo "imprint made $(ls "$work/ia" | wc -l) pages" >&2; exit 1; }

t count-imprint "$imprint" inspect --json "${files[@]}"
"$imprint" inspect --json "${files[@]}" >"$work/counts.json"
t count-pdfinfo bash -c 'for f in "$@"; do pdfinfo "$f"; done' _ "${files[@]}"
t count-qpdf bash -c 'for f in "$@"; do qpdf --show-npages "$f"; done' _ "${files[@]}"
python3 - "$work/counts.json" "${files[@]}" <<'PY'
import json, subprocess, sys
report = {f["file"]: f for f in json.load(open(sys.argv[1]))["files"]}
for path in sys.argv[2:]:
    info = subprocess.run(["pdfinfo", path], capture_output=True, text=True).stdout
    pages = int([l.split()[-1] for l in info.splitlines() if l.startswith("Pages:")][0])
    mine = report[path].get("info", {}).get("pages")
    if mine != pages:
        sys.exit(f"page count differs for {path}: imprint {mine}, pdfinfo {pages}")
print(f"page counts: equal to pdfinfo's on all {len(sys.argv) - 2} files")
PY

colour=("$corpus/cups-testpage.pdf" "$corpus/eyes17.pdf" "$corpus/octave-refcard-a4.pdf" "$corpus/lilypond-essay.pdf" "$corpus/gle-manual.pdf")
t colour-imprint "$imprint" inspect --colors --json "${colour[@]}"
t colour-inkcov bash -c 'for f in "$@"; do gs -q -dSAFER -dBATCH -dNOPAUSE -sDEVICE=inkcov -r75 -o - "$f"; done' _ "${colour[@]}"

python3 - "$work/photo.pdf" <<'PY'
import random, sys
from PIL import Image, ImageFilter
random.seed(4)
width, height = 4032, 2268
noise = Image.effect_noise((width // 8, height // 8), 60).convert("RGB").resize((width, height), Image.BICUBIC)
gradient = Image.linear_gradient("L").resize((width, height)).convert("RGB")
photo = Image.blend(noise, gradient, 0.5).filter(ImageFilter.GaussianBlur(1))
photo.save(sys.argv[1] + ".jpg", quality=90)
Image.open(sys.argv[1] + ".jpg").save(sys.argv[1], "PDF", resolution=300)
PY
mkdir -p "$work/photo-i"
t photo-imprint bash -c 'for i in $(seq 20); do "$1" thumb --size 256 -o "$2" "$3"; done' _ "$imprint" "$work/photo-i" "$work/photo.pdf"
t photo-mutool bash -c 'for i in $(seq 20); do mutool draw -q -w 256 -h 256 -o "$1" "$2" 1 2>/dev/null; done' _ "$work/photo-m.png" "$work/photo.pdf"

python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
def read(name):
    w, u, s, m = map(float, open(f"{work}/{name}.time").read().split())
    return w, u + s, m / 1024
print(f"{'task':44} {'wall_s':>7} {'cpu_s':>7} {'peak_MB':>8} {'imprint is':>16} {'peer CPU / imprint':>19}")
for task, peers in [("thumb", ["pdftoppm", "mutool"]), ("all", ["pdftoppm", "mutool"]),
                    ("count", ["pdfinfo", "qpdf"]), ("colour", ["inkcov"]), ("photo", ["mutool"])]:
    mine = read(f"{task}-imprint")
    print(f"{task + ': imprint':44} {mine[0]:7.3f} {mine[1]:7.2f} {mine[2]:8.1f}")
    for peer in peers:
        other = read(f"{task}-{peer}")
        print(f"{task + ': ' + peer:44} {other[0]:7.3f} {other[1]:7.2f} {other[2]:8.1f} {other[0] / mine[0]:9.2f}x faster {other[1] / mine[1]:18.2f}x")
PY
