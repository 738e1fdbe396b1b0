#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: preparing every corpus file 2-up duplex (issue #14): `imprint prepare` on one order of
# all 14 files against pdfjam (`--nup 2x1 --landscape`, LaTeX's pdfpages, file by file), in one
# run; CPU, wall and peak memory (the run with the median CPU of RUNS, default 3), then whether
# each output keeps its text as text (pdffonts lists fonts wherever the input had them) and has
# the pages it should (pdfinfo: ceil(pages / 2), plus imprint's blank back).
# Usage: flock /work/bench.lock Benchmarks/prepare-bench.sh [CORPUS_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/Benchmarks/common.sh"
corpus=$(corpus_folder "${1:-}")
work="$root/Benchmarks/out/prepare"
rm -rf "$work"; mkdir -p "$work/jam"
cd "$root"
build_imprint
command -v pdfjam >/dev/null || { echo "pdfjam missing: scripts/bootstrap --bench" >&2; exit 1; }
files=("$corpus"/*.pdf)
python3 - "$work/order.json" "${files[@]}" <<'PY'
import json, sys
files = [{"path": p, "color": "mono", "duplex": "long-edge", "nUp": 2} for p in sys.argv[2:]]
json.dump({"schemaVersion": 1, "files": files}, open(sys.argv[1], "w"))
PY
prepare=$(measure "$work/imprint" bash -c '
  rm -rf "$1"; exec "$2" prepare "$3" --prices "$4" --files-root / -o "$1"' _ \
  "$work/imprint-out" "$imprint" "$work/order.json" "$root/examples/prices-usd.json")
pdfjam=$(measure "$work/pdfjam" bash -c '
  out=$1; shift
  for f in "$@"; do
    pdfjam --quiet --nup 2x1 --landscape --outfile "$out/$(basename "$f")" "$f" || exit 1
  done' _ "$work/jam" "${files[@]}")
python3 - "$prepare" "$pdfjam" "$work" "${files[@]}" <<'PY'
import math, os, subprocess, sys
prepare, pdfjam, work, files = sys.argv[1].split(), sys.argv[2].split(), sys.argv[3], sys.argv[4:]
def pages(path):
    out = subprocess.run(["pdfinfo", path], capture_output=True, text=True).stdout
    return next((int(l.split()[1]) for l in out.splitlines() if l.startswith("Pages:")), -1)
def fonts(path):
    out = subprocess.run(["pdffonts", path], capture_output=True, text=True).stdout
    return len(out.splitlines()[2:])
prepared = sorted(os.listdir(f"{work}/imprint-out"))
text_kept = {"imprint": 0, "pdfjam": 0}; with_fonts = 0; right = {"imprint": 0, "pdfjam": 0}
for index, path in enumerate(files, 1):
    name = os.path.basename(path)
    stem = os.path.splitext(name)[0]
    mine = f"{work}/imprint-out/{index}-{stem}.pdf"
    jam = f"{work}/jam/{name}"
    sides = math.ceil(pages(path) / 2)
    right["imprint"] += pages(mine) == sides + sides % 2
    right["pdfjam"] += pages(jam) == sides
    if fonts(path) > 0:
        with_fonts += 1
        text_kept["imprint"] += fonts(mine) > 0
        text_kept["pdfjam"] += fonts(jam) > 0
def cpu(run): return float(run[1]) + float(run[2])
print(f"{len(files)} corpus files, 2-up duplex (median of {os.environ.get('RUNS', 3)} by CPU)")
print(f"{'':16}{'wall s':>8}{'CPU s':>8}{'peak MB':>9}  right pages  text as text")
for name, run in (("imprint prepare", prepare), ("pdfjam", pdfjam)):
    key = name.split()[0]
    print(f"{name:16}{float(run[0]):8.2f}{cpu(run):8.2f}{int(run[3]) / 1024:9.0f}"
          f"  {right[key]:>5}/{len(files)}   {text_kept[key]:>6}/{with_fonts}")
print(f"pdfjam / imprint: {float(pdfjam[0]) / float(prepare[0]):.1f}x wall, "
      f"{cpu(pdfjam) / cpu(prepare):.1f}x CPU")
PY
