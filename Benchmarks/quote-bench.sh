#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: quoting an order of every corpus file (monochrome, so no colour analysis) against
# counting the same files' pages (`imprint inspect` and a `pdfinfo` loop), in one run, 5 runs
# each (median of 5). Quoting adds only pure-Swift arithmetic to the count.
# Usage: Benchmarks/quote-bench.sh [CORPUS_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/Benchmarks/common.sh"
corpus=$(corpus_folder "${1:-}")
work="$root/Benchmarks/out/quote"
rm -rf "$work"; mkdir -p "$work"
cd "$root"
build_imprint
files=("$corpus"/*.pdf)
python3 - "$work/order.json" "${files[@]}" <<'PY'
import json, sys
files = [{"path": p, "color": "mono", "duplex": "long-edge", "nUp": 2} for p in sys.argv[2:]]
json.dump({"schemaVersion": 1, "files": files}, open(sys.argv[1], "w"))
PY
median() { # NAME command...: median wall seconds of 5 runs
  local name=$1; shift
  for r in 1 2 3 4 5; do /usr/bin/time -f "%e" -o "$work/$name.$r" "$@" >/dev/null 2>&1; done
  sort -n "$work/$name".? | sed -n 3p
}
# The order names the corpus files by absolute paths, outside its own folder: --files-root /
# confines them to the whole tree, as an operator quoting local files would.
quote=$(median quote "$imprint" quote "$work/order.json" --prices "$root/examples/prices-usd.json" --files-root / --json)
inspect=$(median inspect "$imprint" inspect --json "${files[@]}")
pdfinfo=$(median pdfinfo bash -c 'for f in "$@"; do pdfinfo "$f"; done' _ "${files[@]}")
"$imprint" quote "$work/order.json" --prices "$root/examples/prices-usd.json" --files-root / --json >"$work/quote.json"
python3 - "$quote" "$inspect" "$pdfinfo" "$work/quote.json" "${#files[@]}" <<'PY'
import json, sys
q, i, p = map(float, sys.argv[1:4])
total = json.load(open(sys.argv[4]))["total"]["formatted"]
print(f"{sys.argv[5]} corpus files, monochrome, 2-up duplex; total {total}")
print(f"imprint quote:        {q:6.2f} s")
print(f"imprint inspect:      {i:6.2f} s   quote / count = {q / i:.2f}")
print(f"pdfinfo loop (count): {p:6.2f} s   quote / pdfinfo = {q / p:.2f}")
PY
