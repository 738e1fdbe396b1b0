#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: N cards through `imprint batch` on A4 with crop marks against glabels-3-batch
# merging the same N records onto the same stock with crop marks (-C), in one run; then
# imprint's peak memory for 10 x N cards, to show it stays flat as the manifest grows.
# Usage: Benchmarks/batch-bench.sh [N]   (default 1000; needs scripts/bootstrap --bench)
set -euo pipefail
count=${1:-1000}
root=$(cd "$(dirname "$0")/.." && pwd)
peer="$root/../shared/peers/glabels"
work="${BENCH_DIR:-$root/Benchmarks/out/batch}"
rm -rf "$work"; mkdir -p "$work"
cd "$root"
source "$root/Benchmarks/common.sh"
build_imprint

# gLabels and the sheets run: 3 runs each, interleaved (gLabels, imprint, gLabels, ...) so both
# see the same load on this shared machine, and the median run by CPU of each (a rerun of the
# sheets draws them all again). The --card-files run and the 10 x N run: once (a rerun would
# skip the finished cards).
RUNS=${RUNS:-3}
peer_records "$count" "$work/data"
cp "$peer/cr80-a4-10up.glabels" "$work/data/"
# The cards' fonts need the bundled templates folder; the profiles reference absolute photos.
export IMPRINT_TEMPLATES="$root/templates"
glabels_runs=""
imprint_runs=""
for ((r = 1; r <= RUNS; r++)); do
  glabels_runs+="$(cd "$work/data" && RUNS=1 measure "$work/glabels.time.$r" glabels-3-batch -C -i records.csv -o "$work/glabels.pdf" cr80-a4-10up.glabels)"$'\n'
  imprint_runs+="$(RUNS=1 measure "$work/imprint.time.$r" "$imprint" batch "$work/data/manifest.jsonl" -o "$work/out" --layout A4 --crop-marks -q)"$'\n'
done
glabels=$(printf '%s' "$glabels_runs" | median_by_cpu)
imprint_run=$(printf '%s' "$imprint_runs" | median_by_cpu)
echo "CPU s of each run, in order: gLabels $(printf '%s' "$glabels_runs" | awk 'NF {printf "%.2f ", $2 + $3}')| imprint $(printf '%s' "$imprint_runs" | awk 'NF {printf "%.2f ", $2 + $3}')"
placed=$(grep -c ',front,' "$work/out/sheet-map.csv")
[ "$placed" -eq "$count" ] || { echo "imprint placed $placed of $count cards" >&2; exit 1; }
sheets=$(pdfinfo "$work/out/sheets-A4.pdf" | awk '/^Pages:/{print $2}')
# The same, plus each card's own PDF (--card-files): a different job from the peer's, shown too.
files_run=$(RUNS=1 measure "$work/files.time" "$imprint" batch "$work/data/manifest.jsonl" -o "$work/out-files" --layout A4 --crop-marks --card-files -q)
cards=$(ls "$work/out-files/cards" | wc -l)
[ "$cards" -eq "$count" ] || { echo "imprint made $cards of $count card files" >&2; exit 1; }
gpages=$(pdfinfo "$work/glabels.pdf" | awk '/^Pages:/{print $2}')

peer_records $((count * 10)) "$work/data10"
big=$(RUNS=1 measure "$work/imprint10.time" "$imprint" batch "$work/data10/manifest.jsonl" -o "$work/out10" --layout A4 --crop-marks -q)

python3 - "$count" "$glabels" "$imprint_run" "$big" "$sheets" "$gpages" "$files_run" <<'PY'
import sys
n = int(sys.argv[1])
def parse(t): w, u, s, m = map(float, t.split()); return w, u + s, m / 1024
g, i, b, f = parse(sys.argv[2]), parse(sys.argv[3]), parse(sys.argv[4]), parse(sys.argv[7])
print(f"{n} cards on A4 with crop marks, 2 cores")
print(f"{'tool':52} {'wall_s':>7} {'cpu_s':>7} {'cpu_ms/card':>12} {'peak_MB':>8}")
print(f"{'gLabels 3 batch (front only, ' + sys.argv[6] + ' pages)':52} {g[0]:7.2f} {g[1]:7.2f} {g[1] * 1000 / n:12.2f} {g[2]:8.1f}")
print(f"{'imprint batch (front + back, ' + sys.argv[5] + ' pages)':52} {i[0]:7.2f} {i[1]:7.2f} {i[1] * 1000 / n:12.2f} {i[2]:8.1f}")
print(f"{'imprint batch --card-files (also a PDF per card)':52} {f[0]:7.2f} {f[1]:7.2f} {f[1] * 1000 / n:12.2f} {f[2]:8.1f}")
print(f"CPU per card: gLabels / imprint = {g[1] / i[1]:.1f}x (with a PDF per card too: {g[1] / f[1]:.1f}x)")
print(f"imprint peak memory: {i[2]:.1f} MB for {n} cards, {b[2]:.1f} MB for {10 * n} ({(b[2] / i[2] - 1) * 100:+.1f} %)")
PY
