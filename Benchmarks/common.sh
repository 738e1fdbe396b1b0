#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Shared by the benchmark scripts: the release build and the real-PDF corpus.
# Sourced with $root set to the repository.

# build_imprint: builds the release binary (as the README's quick start does: the Swift runtime
# linked in) and the document engines it loads beside it (libImprintDocumentEngines.so), and
# sets $imprint to it.
build_imprint() {
  (cd "$root" && swift build -c release --static-swift-stdlib --product imprint >/dev/null 2>&1 &&
    swift build -c release --static-swift-stdlib --product ImprintDocumentEngines >/dev/null 2>&1)
  imprint="$root/.build/release/imprint"
}

# corpus_folder DIR: echoes DIR (default Benchmarks/out/corpus), fetching the corpus with
# ../shared/corpus/get-corpus.sh when it holds no PDF yet.
corpus_folder() {
  local corpus="${1:-$root/Benchmarks/out/corpus}"
  if ! ls "$corpus"/*.pdf >/dev/null 2>&1; then
    mkdir -p "$corpus"
    bash "$root/../shared/corpus/get-corpus.sh" "$corpus" >/dev/null
  fi
  echo "$corpus"
}

# peer_records N DIR: the shared gLabels peer's N records (make_data.py: records.csv, avatars),
# and the same records as profile JSON (DIR/profiles/rNNNNN.json), each account's photo copied
# to DIR/photos/ACCOUNT.png (for --photo-cache), and a card manifest (DIR/manifest.jsonl).
peer_records() {
  local peer="$root/../shared/peers/glabels"
  python3 "$peer/make_data.py" --records "$1" --out "$2" >/dev/null
  python3 - "$2" <<'PY'
import csv, json, os, shutil, sys
out = sys.argv[1]
os.makedirs(f"{out}/profiles", exist_ok=True); os.makedirs(f"{out}/photos", exist_ok=True)
with open(f"{out}/records.csv", encoding="utf-8") as f, open(f"{out}/manifest.jsonl", "w") as m:
    for i, row in enumerate(csv.DictReader(f), 1):
        account = f"{row['account'][:10].rstrip('-')}-{i}"
        shutil.copyfile(row["photo"], f"{out}/photos/{account}.png")
        profile = {"id": int(row["id"]) if row["id"].isdigit() else i, "name": account,
                   "json_metadata": {"profile": {"name": row["name"]}},
                   "created": "2017-03-14T09:26:53", "reputation": "95832978796820",
                   "stats": {"followers": int(row["followers"] or 0), "following": 0}}
        with open(f"{out}/profiles/r{i:05d}.json", "w", encoding="utf-8") as p:
            json.dump(profile, p, ensure_ascii=False)
        m.write(json.dumps({"id": f"r{i:05d}", "kind": "card", "profile": f"profiles/r{i:05d}.json",
                            "photo": row["photo"], "template": "classic"}) + "\n")
PY
}

# measure OUT_FILE command...: runs the command ${RUNS:-$default_runs} times under GNU time
# (stdout discarded, stderr into OUT_FILE.stderr; a failure ends the script) and prints the run
# with the median CPU time as "wall user sys maxrss_kb" (the machines are shared: one slow run
# is noise, not a result).
measure() {
  local out=$1 runs=${RUNS:-${default_runs:-3}} r; shift
  for ((r = 1; r <= runs; r++)); do
    /usr/bin/time -f "%e %U %S %M" -o "$out.$r" "$@" >/dev/null 2>"$out.stderr" || {
      echo "failed: $*" >&2; tail -5 "$out.stderr" >&2; exit 1; }
  done
  for ((r = 1; r <= runs; r++)); do cat "$out.$r"; done | median_by_cpu
}

# median_by_cpu: of the "wall user sys maxrss_kb" lines on stdin, the one with the median
# user + sys.
median_by_cpu() {
  awk 'NF {print $2 + $3, $0}' | sort -n | awk '{line[NR] = $0} END {print line[int((NR + 1) / 2)]}' |
    cut -d' ' -f2-
}
