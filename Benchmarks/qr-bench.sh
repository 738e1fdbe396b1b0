#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: 1000 Ethereum-address QR PNGs (level M, 8 px modules, quiet zone 4), in one run:
#   imprint   one `imprint qr --eth --input` process (all cores)
#   qrencode  the qrencode CLI, one process per code (a shell loop)
#   segno     one Python process
#   floor     libqrencode encode + libpng write in C, one core (the cost of the work itself)
# Prints wall and CPU time, ratios and peak memory; checks a sample of every tool's codes with
# zbarimg. Usage: Benchmarks/qr-bench.sh [COUNT]   (needs scripts/bootstrap --bench)
set -euo pipefail
count=${1:-1000}
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-3}
# On the project's own disk (not /tmp, which may be another filesystem): file creation is a
# large share of this work, so every tool writes to the same kind of folder.
work="${BENCH_DIR:-$root/Benchmarks/out/qr}"
rm -rf "$work"; mkdir -p "$work"
cd "$root"
source "$root/Benchmarks/common.sh"
build_imprint
gcc -O2 -o "$work/qr_floor" Benchmarks/qr_floor.c $(pkg-config --cflags --libs libqrencode libpng)

# Deterministic random addresses; imprint prints their EIP-55 forms, which every tool then encodes.
python3 - "$count" >"$work/lower.txt" <<'PY'
import random, sys
r = random.Random(681)
for _ in range(int(sys.argv[1])):
    print("0x" + "".join(r.choice("0123456789abcdef") for _ in range(40)))
PY
"$imprint" qr --eth --input "$work/lower.txt" --output-dir "$work/warm" --format text --json -q |
  python3 -c 'import json,sys; [print(r["payload"]) for r in json.load(sys.stdin)["results"]]' \
  >"$work/addresses.txt"

measure() { # name, command...: runs it $runs times under GNU time into a fresh folder;
  # prints the run with the median wall time as "wall user sys maxrss_kb"
  local name=$1; shift
  for ((r = 1; r <= runs; r++)); do
    rm -rf "$work/$name"; mkdir -p "$work/$name"
    /usr/bin/time -f "%e %U %S %M" -o "$work/$name.time.$r" "$@" >/dev/null
  done
  cat "$work/$name".time.* | sort -n | sed -n "$(((runs + 1) / 2))p"
}

cat >"$work/segno_run.py" <<'PY'
import sys, segno
with open(sys.argv[1]) as f:
    for i, line in enumerate(f, 1):
        segno.make_qr(line.strip(), error="m", boost_error=False).save(
            f"{sys.argv[2]}/{i:06d}.png", scale=8, border=4, dpi=300)
PY
cat >"$work/qrencode_loop.sh" <<'SH'
n=0
while IFS= read -r a; do
  n=$((n+1)); qrencode -l M -s 8 -m 4 --dpi=300 -o "$2/$(printf %06d $n).png" "$a"
done <"$1"
SH

declare -A result
result[imprint]=$(measure imprint "$imprint" qr --eth -q --input "$work/addresses.txt" --output-dir "$work/imprint")
result[imprint-j1]=$(measure imprint-j1 "$imprint" qr --eth -q -j 1 --input "$work/addresses.txt" --output-dir "$work/imprint-j1")
result[qrencode]=$(measure qrencode bash "$work/qrencode_loop.sh" "$work/addresses.txt" "$work/qrencode")
result[segno]=$(measure segno python3 "$work/segno_run.py" "$work/addresses.txt" "$work/segno")
result[floor]=$(measure floor "$work/qr_floor" "$work/addresses.txt" "$work/floor")

# Every tool must have made every code, and a sample must decode to the right address.
for tool in imprint qrencode segno floor; do
  made=$(find "$work/$tool" -name '*.png' | wc -l)
  [ "$made" -eq "$count" ] || { echo "$tool made $made of $count codes" >&2; exit 1; }
done
for i in 1 $((count / 2)) "$count"; do
  expected=$(sed -n "${i}p" "$work/addresses.txt")
  for tool in qrencode segno floor; do
    got=$(zbarimg -q --raw --nodbus "$work/$tool/$(printf %06d "$i").png")
    [ "$got" = "$expected" ] || { echo "$tool code $i decodes to '$got'" >&2; exit 1; }
  done
done
for f in $(ls "$work/imprint" | sort | sed -n "1p;$((count / 2))p;${count}p"); do
  zbarimg -q --raw --nodbus "$work/imprint/$f" | grep -q '^0x' || { echo "imprint $f does not decode" >&2; exit 1; }
done

read -r iw iu is im <<<"${result[imprint]}"
printf '%s codes, level M, 8 px modules, quiet zone 4, %s cores, median of %s runs\n' "$count" "$(nproc)" "$runs"
printf '%-11s %9s %9s %11s %12s %10s\n' tool wall_s cpu_s cpu_ms/code peak_MB wall_ratio
for tool in imprint imprint-j1 qrencode segno floor; do
  read -r w u s m <<<"${result[$tool]}"
  python3 -c "
w,u,s,m,iw=$w,$u,$s,$m,$iw
print(f'%-11s %9.3f %9.3f %11.3f %12.1f %9.2fx' % ('$tool', w, u+s, (u+s)*1000/$count, m/1024, w/iw if iw else 0))"
done
read -r fw fu fs fm <<<"${result[floor]}"
python3 -c "
icpu=$iu+$is; fcpu=$fu+$fs
print(f'imprint CPU per code vs floor (libqrencode + libpng, one core): {icpu/fcpu:.2f}x')
print(f'imprint wall (all cores) vs floor wall (one core): {$iw/$fw:.2f}x')
print(f'imprint peak memory: {$im/1024:.1f} MB')"
