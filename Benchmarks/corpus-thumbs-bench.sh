#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark (issue #30): first-page 256-px thumbnails of every PDF of the Debian corpus
# (Benchmarks/debian-corpus.sh: hundreds of real PDFs from Debian 12's documentation packages),
# imprint against pdftoppm and mutool, one process a file:
#   imprint              `imprint thumb -o OUT --size 256 FILE...`: one process, its own forked
#                        workers (one a core)
#   pdftoppm, mutool     `pdftoppm -png -scale-to 256 -f 1 -l 1 -singlefile FILE PREFIX` and
#                        `mutool draw -q -w 256 -h 256 -o OUT FILE 1`, one process a file, run by
#                        `xargs -P 1` (a loop, without a shell's fork per file) and by
#                        `xargs -P 2` (two at a time, as imprint's two workers on two cores)
# Rounds ($RUNS, default 3) take turns through the five, so that all see the same load on this
# shared machine; each run is measured by Benchmarks/tree-usage.py (wall time, user + system CPU
# of the whole process tree, the tree's peak resident set sampled every 20 ms) and GNU time (the
# largest process's peak resident set), and the medians of the rounds are compared: peer ÷
# imprint, above 1 imprint is ahead.
# A file a tool refuses (no thumbnail) is counted and listed in $work/refused-TOOL.txt, not
# fatal: imprint refuses damaged or hostile files by design (their error codes are listed).
# Usage: Benchmarks/corpus-thumbs-bench.sh [CORPUS_DIR]   (default Benchmarks/out/debian-corpus,
# gathered by Benchmarks/debian-corpus.sh when it holds no PDF; needs scripts/bootstrap --bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/Benchmarks/common.sh"
corpus=${1:-$root/Benchmarks/out/debian-corpus}
if ! compgen -G "$corpus/[0-9][0-9][0-9][0-9]-*.pdf" >/dev/null; then
  bash "$root/Benchmarks/debian-corpus.sh" "$corpus" >&2
fi
corpus=$(cd "$corpus" && pwd)
files=("$corpus"/[0-9][0-9][0-9][0-9]-*.pdf)
work="$root/Benchmarks/out/corpus-thumbs"
rm -rf "$work"
mkdir -p "$work"
cd "$root"
build_imprint
usage_of="$root/Benchmarks/tree-usage.py"
runs=${RUNS:-3}
tools=(imprint pdftoppm-1 mutool-1 pdftoppm-2 mutool-2)

# The peers' argument lists for xargs, NUL-separated, outputs named as imprint names its own
# (FILE.png, FILE the input's name without .pdf): "FILE PREFIX" for pdftoppm (-singlefile
# writes PREFIX.png) and "-o OUT FILE 1" for mutool draw.
for f in "${files[@]}"; do
  b=${f##*/}
  printf '%s\0%s\0' "$f" "$work/pdftoppm.out/${b%.pdf}"
done >"$work/pdftoppm.args"
for f in "${files[@]}"; do
  b=${f##*/}
  printf '%s\0%s\0%s\0%s\0' -o "$work/mutool.out/${b%.pdf}.png" "$f" 1
done >"$work/mutool.args"

# run TOOL ROUND: one timed run into $work/TOOL.time.ROUND ("wall user sys maxrss_kb tree_kb",
# tree-usage.py's) and $work/TOOL.rss.ROUND (the largest process's peak, from GNU time: the
# maxrss of tree-usage.py's own children starts at its Python's resident set, 14 MB, at the
# fork), its thumbnails left in $work/TOOL.out (pdftoppm-1 and -2 share pdftoppm.out, as mutool's).
run() {
  local tool=$1 round=$2 out status=0
  local measured=(python3 "$usage_of" "$work/$tool.time.$round" --
    /usr/bin/time -f %M -o "$work/$tool.rss.$round")
  out="$work/${tool%-[12]}.out"
  rm -rf "$out"
  mkdir -p "$out"
  case $tool in
    imprint)
      "${measured[@]}" "$imprint" thumb --size 256 --json -o "$out" "${files[@]}" \
        >"$work/imprint.json" 2>"$work/$tool.err" || status=$?
      ;;
    pdftoppm-*)
      "${measured[@]}" xargs -0 -P "${tool#*-}" -n 2 \
        pdftoppm -png -scale-to 256 -f 1 -l 1 -singlefile \
        <"$work/pdftoppm.args" >/dev/null 2>"$work/$tool.err" || status=$?
      ;;
    mutool-*)
      "${measured[@]}" xargs -0 -P "${tool#*-}" -n 4 mutool draw -q -w 256 -h 256 \
        <"$work/mutool.args" >/dev/null 2>"$work/$tool.err" || status=$?
      ;;
  esac
  # xargs: 123 when some files failed (counted below); 124 and 125 (a peer exited 255 or died by
  # a signal) stop it early, which leaves the rest of the corpus undone: said, not hidden.
  if [[ $tool != imprint && $status -ge 124 ]]; then
    echo "warning: $tool stopped early (xargs status $status): $(tail -n1 "$work/$tool.err")" >&2
  fi
  if [[ ! -s $work/$tool.time.$round ]]; then
    echo "failed to measure $tool:" >&2
    tail -3 "$work/$tool.err" >&2
    exit 1
  fi
  # Which files have a thumbnail (a PNG of some bytes), for the counts.
  for f in "${files[@]}"; do
    b=${f##*/}
    [[ -s $out/${b%.pdf}.png ]] || echo "$f"
  done >"$work/refused-$tool.txt"
}

cat "${files[@]}" >/dev/null # the corpus in the page cache before the first round
for ((r = 1; r <= runs; r++)); do
  for tool in "${tools[@]}"; do run "$tool" "$r"; done
done

python3 - "$work" "$runs" "$corpus" "${#files[@]}" "${tools[@]}" <<'PY'
import json, os, sys
work, runs, corpus, tools = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[5:]
total = int(sys.argv[4])


def median(values):
    """The middle value (the lower of the two middle ones for an even count)."""
    values = sorted(values)
    return values[(len(values) - 1) // 2]


def numbers(path):
    """The last line of a measurement file (GNU time writes one more first when the command
    exited non-zero), as numbers."""
    return [float(word) for word in open(path).read().splitlines()[-1].split()]


figures = {}
for tool in tools:
    rows = [numbers(f"{work}/{tool}.time.{r}") for r in range(1, runs + 1)]
    rss = [numbers(f"{work}/{tool}.rss.{r}")[0] for r in range(1, runs + 1)]
    refused = [line for line in open(f"{work}/refused-{tool}.txt").read().splitlines() if line]
    figures[tool] = dict(wall=median(r[0] for r in rows), cpu=median(r[1] + r[2] for r in rows),
                         peak=median(rss) / 1024, tree=median(r[4] for r in rows) / 1024,
                         made=total - len(refused), refused=refused)

manifest = os.path.join(corpus, "MANIFEST.tsv")
if os.path.exists(manifest):
    with open(manifest, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    pages = sum(int(r[6]) for r in rows if r[6].isdigit())
    print(f"corpus: {total} PDFs, {pages} pages, {len({r[1] for r in rows})} packages, "
          f"{len({r[7] for r in rows})} distinct producers ({corpus})")
else:
    print(f"corpus: {total} PDFs ({corpus})")
print(f"first-page 256-px thumbnails, medians of {runs} alternating round(s); "
      "ratios peer / imprint (above 1 imprint is ahead)")
names = {"imprint": "imprint thumb (one process, 2 workers)",
         "pdftoppm-1": "pdftoppm, one a file", "mutool-1": "mutool draw, one a file",
         "pdftoppm-2": "pdftoppm, xargs -P 2", "mutool-2": "mutool draw, xargs -P 2"}
mine = figures["imprint"]
print(f"{'tool':40} {'thumbs':>9} {'wall_s':>8} {'cpu_s':>8} {'peak_MB':>8} {'tree_MB':>8} "
      f"{'wall x':>7} {'cpu x':>7}")
for tool in tools:
    f = figures[tool]
    ratios = "" if tool == "imprint" else (
        f"{f['wall'] / mine['wall']:7.2f} {f['cpu'] / mine['cpu']:7.2f}")
    print(f"{names[tool]:40} {f['made']:>4}/{total:<4} {f['wall']:8.3f} {f['cpu']:8.2f} "
          f"{f['peak']:8.1f} {f['tree']:8.1f} {ratios}")
print(f"issue #30's goals: wall {figures['pdftoppm-1']['wall'] / mine['wall']:.2f}x a pdftoppm "
      f"loop's (goal 2.5), CPU {figures['mutool-1']['cpu'] / mine['cpu']:.2f}x less than a "
      "mutool loop's (goal 1.5)")

# Refusals side by side; imprint's with its error codes (the last round's report).
codes = {}
try:
    for entry in json.load(open(f"{work}/imprint.json"))["files"]:
        if entry.get("status") == "failed":
            code = (entry.get("error") or {}).get("code", "?")
            codes[code] = codes.get(code, 0) + 1
except (OSError, ValueError, KeyError):
    pass
print("refused (no thumbnail): "
      + ", ".join(f"{tool} {len(figures[tool]['refused'])}" for tool in tools)
      + ("; imprint's codes: " + ", ".join(f"{c} {n}" for c, n in sorted(codes.items()))
         if codes else ""))
for tool in ("imprint", "pdftoppm-1", "mutool-1"):
    for path in figures[tool]["refused"][:10]:
        print(f"  {tool}: {os.path.basename(path)}")
print(f"lists: {work}/refused-TOOL.txt")
PY
