#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: ID cards per second, imprint against gLabels 3 (glabels-3-batch), in one run.
#   gLabels  ../shared/peers/glabels job: N records merged onto CR80 cards 10-up on A4 (photo,
#            auto-shrink name, text block, QR of the profile URL), one PDF
#   imprint  the same N records as profile JSON files (name, join date, reputation, followers,
#            photo) through `imprint card`: all fronts into one PDF (one card a page, as a card
#            printer takes them), fronts and backs into one PDF, one PDF per card in a folder,
#            and one 300-dpi PNG per card (front)
# Prints CPU per card (user + sys), wall time, peak memory and ratios; then imprint's peak
# memory for N and 5 × N cards, to show it does not grow with the number of cards.
# Usage: Benchmarks/card-bench.sh [N]   (default 200; needs scripts/bootstrap --bench)
set -euo pipefail
count=${1:-200}
root=$(cd "$(dirname "$0")/.." && pwd)
peer="$root/../shared/peers/glabels"
work="${BENCH_DIR:-$root/Benchmarks/out/cards}"
rm -rf "$work"; mkdir -p "$work"
cd "$root"
source "$root/Benchmarks/common.sh"
build_imprint

default_runs=3
peer_records "$count" "$work/data"
cp "$peer/cr80-a4-10up.glabels" "$work/data/"
glabels=$(cd "$work/data" && measure "$work/glabels.time" glabels-3-batch -i records.csv -o "$work/glabels.pdf" cr80-a4-10up.glabels)
pages=$(pdfinfo "$work/glabels.pdf" | awk '/^Pages:/{print $2}')
[ "$pages" -ge $(((count + 9) / 10)) ] || { echo "gLabels made $pages pages" >&2; exit 1; }

common=(--photo-cache "$work/data/photos" -q)
run_imprint() { # NAME FORMAT SIDE: one file per card in a folder
  rm -rf "$work/$1"
  measure "$work/$1.time" "$imprint" card "$work"/data/profiles/*.json --output-dir "$work/$1" \
    --format "$2" --side "$3" "${common[@]}"
}
run_combined() { # NAME SIDE [DATA]: every card into one PDF
  rm -f "$work/$1.pdf"
  measure "$work/$1.time" "$imprint" card "$work/${3:-data}"/profiles/*.json -o "$work/$1.pdf" \
    --side "$2" --photo-cache "$work/${3:-data}/photos" -q
}
pdf_front=$(run_combined pdf-front front)
pdf_both=$(run_combined pdf-both both)
pdf_files=$(run_imprint pdf-files pdf front)
png_front=$(run_imprint png-front png front)
pages=$(pdfinfo "$work/pdf-both.pdf" | awk '/^Pages:/{print $2}')
[ "$pages" -eq $((2 * count)) ] || { echo "imprint's PDF has $pages pages" >&2; exit 1; }
made=$(ls "$work/png-front" | wc -l)
[ "$made" -eq "$count" ] || { echo "imprint made $made of $count PNGs" >&2; exit 1; }

# The peer's data has 8 distinct avatars, which imprint's image cache decodes once each: the
# same cards again with every photo made distinct (a comment chunk naming the card, so each
# file must be decoded, scaled and encoded), as a shop's real orders would be.
rm -rf "$work/distinct"; mkdir -p "$work/distinct"
cp -r "$work/data/profiles" "$work/distinct/"
python3 - "$work/data/photos" "$work/distinct/photos" <<'PY'
import os, struct, sys, zlib
source, target = sys.argv[1:]
os.makedirs(target, exist_ok=True)
for name in sorted(os.listdir(source)):
    data = open(os.path.join(source, name), "rb").read()
    text = b"Comment\0" + name.encode()
    chunk = struct.pack(">I", len(text)) + b"tEXt" + text + struct.pack(">I", zlib.crc32(b"tEXt" + text))
    open(os.path.join(target, name), "wb").write(data[:33] + chunk + data[33:])
PY
pdf_distinct=$(run_combined pdf-distinct both distinct)

# Memory does not grow with the number of cards: 5 × N cards into one PDF.
peer_records $((count * 5)) "$work/data5"
pdf_5x=$(run_combined pdf-5x front data5)

python3 - "$count" "$glabels" "$pdf_front" "$png_front" "$pdf_both" "$pdf_5x" "$pdf_files" "$pdf_distinct" "${RUNS:-$default_runs}" <<'PY'
import sys
n = int(sys.argv[1])
rows = [("gLabels 3 batch (10-up A4 PDF, front)", sys.argv[2]),
        ("imprint one PDF, fronts", sys.argv[3]), ("imprint one PDF, fronts + backs", sys.argv[5]),
        ("imprint one PDF, fronts + backs, all photos distinct", sys.argv[8]),
        ("imprint one PDF per card, front", sys.argv[7]), ("imprint PNG 300 dpi, front", sys.argv[4])]
def parse(t): w, u, s, m = map(float, t.split()); return w, u + s, m / 1024
g = parse(sys.argv[2])
print(f"{n} cards, 2 cores, median of {sys.argv[9]} runs each")
print(f"{'tool':52} {'wall_s':>7} {'cpu_s':>7} {'cpu_ms/card':>12} {'peak_MB':>8} {'CPU/card vs gLabels':>20}")
for name, t in rows:
    w, c, m = parse(t)
    print(f"{name:52} {w:7.2f} {c:7.2f} {c * 1000 / n:12.2f} {m:8.1f} {g[1] / c:19.1f}x less")
m1, m5 = parse(sys.argv[3])[2], parse(sys.argv[6])[2]
print(f"imprint peak memory: {m1:.1f} MB for {n} cards, {m5:.1f} MB for {5 * n} ({(m5 / m1 - 1) * 100:+.1f} %)")
PY
