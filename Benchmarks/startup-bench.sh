#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: what one short `imprint card` process costs, start-up included: the CPU (user +
# sys) of one card, front, into a PDF, for a Latin name and for a name in Devanagari, Tibetan
# and Chinese, median of RUNS (default 21). Fonts come from the fontconfig caches (a first run,
# not counted, writes any that are missing). With binaries as arguments, each is measured in
# turn, run by run, so that they see the same load (for a before/after comparison: copy the old
# .build/release/imprint and its *.resources folders somewhere first).
# Usage: Benchmarks/startup-bench.sh [IMPRINT...]   (default: the release build, made here)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work="${BENCH_DIR:-$root/Benchmarks/out/startup}"
rm -rf "$work"; mkdir -p "$work"
cd "$root"
source "$root/Benchmarks/common.sh"
if (($#)); then binaries=("$@"); else build_imprint; binaries=("$imprint"); fi
runs=${RUNS:-21}

profile() { # FILE NAME
  python3 - "$1" "$2" <<'PY'
import json, sys
meta = json.dumps({"profile": {"name": sys.argv[2], "version": 2}}, ensure_ascii=False)
json.dump({"name": "startup-bench", "posting_json_metadata": meta}, open(sys.argv[1], "w"), ensure_ascii=False)
PY
}
profile "$work/latin.json" "Mara Lindqvist"
profile "$work/world.json" "किरण शर्मा བསྟན་འཛིན 王晓明"

# CPU from wait4's rusage (microseconds; GNU time rounds to 10 ms, a third of a run).
python3 - "$work" "$runs" "${binaries[@]}" <<'PY'
import os, statistics, subprocess, sys
work, runs, binaries = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def cpu_ms(binary, name, out):
    # --allow-missing-glyphs: an older build lacking a script still draws the rest.
    argv = [binary, "card", f"{work}/{name}.json", "-o", out, "--side", "front", "-q",
            "--allow-missing-glyphs"]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        sys.exit(f"failed ({status}): {' '.join(argv)}")
    return (usage.ru_utime + usage.ru_stime) * 1000
results = {}
for name in ("latin", "world"):
    for b in binaries:
        cpu_ms(b, name, f"{work}/warm.pdf")  # writes any missing font cache
    samples = {b: [] for b in binaries}
    for _ in range(runs):
        for i, b in enumerate(binaries):
            samples[b].append(cpu_ms(b, name, f"{work}/{name}.{i}.pdf"))
    for b in binaries:
        results.setdefault(b, {})[name] = statistics.median(samples[b])
print(f"one card, front, PDF: CPU ms (user + sys), median of {runs} runs")
print(f"{'binary':60} {'Latin name':>11} {'4 scripts':>10}")
for b in binaries:
    print(f"{b:60} {results[b]['latin']:11.1f} {results[b]['world']:10.1f}")
PY
