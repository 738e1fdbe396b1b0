#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark: `imprint serve` under wrk against the same requests served by starting `imprint`
# once per request, in one run:
#   server   wrk -c 1, 8 and 64 (two wrk threads, or one for one connection) for DURATION
#            seconds a request kind; requests per second and p50/p99 latency from wrk's
#            distribution; any answer but 200 fails the run
#   cli      the same inputs given to `imprint qr` / `card` / `thumb` / `quote`, a
#            process per request, at the same concurrency (a Python driver keeping 1, 8 or 64
#            processes running for DURATION seconds); requests per second and p50/p99 of each
#            process's wall time
#   memory   a fresh server given MEMORY_REQUESTS (default 100 000) requests cycling through
#            MEMORY_KINDS (default the QR PNG and the card PDF: with the card PNG, about 30 a
#            second on this machine, 100 000 take half an hour), 64 connections, counted by the
#            server's /metrics: its VmHWM after the first tenth and at the end
# Request kinds: a card PNG (front, 300 dpi), a card PDF (both sides), a QR PNG, a first-page
# thumbnail, and a quote (assets/samples' booster order: its JSON and three files as one
# multipart body, built once by Python and sent as it is by wrk; priced by the server's
# --config list "booster") against `imprint quote --json`.
# The server's answers are checked before timing: the QR PNG is byte for byte what `imprint qr`
# writes and decodes to its payload, the card PDF has two pages, the card PNG and the quote's
# JSON are the CLI's bytes.
# The machine is shared: figures are as measured under whatever else runs (say so).
# Usage: Benchmarks/serve-bench.sh   (needs scripts/bootstrap --bench; run it under
#        flock /work/bench.lock). Environment: DURATION (default 10), CONNECTIONS
#        (default "1 8 64"; empty: the memory run only), MEMORY_REQUESTS (default 100000; 0
#        skips the memory run), MEMORY_KINDS (default "qr-png card-pdf").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work="${BENCH_DIR:-$root/Benchmarks/out/serve}"
duration=${DURATION:-10}
connections=${CONNECTIONS-1 8 64}
memory_requests=${MEMORY_REQUESTS:-100000}
memory_kinds=${MEMORY_KINDS:-qr-png card-pdf}
rm -rf "$work"; mkdir -p "$work"
cd "$root"
source "$root/Benchmarks/common.sh"
# IMPRINT=path measures another build (an older one, for a before/after) instead of this one's.
if [[ -n "${IMPRINT:-}" ]]; then imprint=$IMPRINT; else build_imprint; fi
command -v wrk >/dev/null || { echo "wrk is missing: run scripts/bootstrap --bench" >&2; exit 1; }

profile="$root/assets/samples/profiles/sora-park.json"
upload="$root/examples/uploads/handout.pdf"
samples="$root/assets/samples"
payload="https://example.com/orders/2026-0017?shop=sinchon"
encoded=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$payload")

server_pid=""
stop_server() {
  if [[ -n "$server_pid" ]]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  server_pid=""
}
trap stop_server EXIT
# start_server LOG: starts `imprint serve` on a port the system chooses; sets $server_pid, $base.
start_server() {
  : >"$1" # made before the server opens it, so the first look below finds it
  "$imprint" serve --listen 127.0.0.1:0 --config "$work/serve.json" 2>"$1" &
  server_pid=$!
  local port="" i
  for ((i = 0; i < 600; i++)); do
    port=$(sed -n 's|^serve: listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$1")
    [[ -n "$port" ]] && break
    sleep 0.1
  done
  [[ -n "$port" ]] || { echo "imprint serve did not start:" >&2; cat "$1" >&2; exit 1; }
  base="http://127.0.0.1:$port"
}
# The quote's price list, named as the request names it.
printf '{"priceLists": {"booster": "%s"}}\n' "$samples/prices-booster.json" >"$work/serve.json"
# The quote's body: the order and its three files as multipart/form-data, each file part named
# by its path in the order (as `curl -F` would send them), built once.
boundary="imprint-bench-7c1f04d2e9a8b6"
python3 - "$samples" "$boundary" "$work/quote.body" <<'PY'
import json, os, sys
samples, boundary, out = sys.argv[1], sys.argv[2].encode(), sys.argv[3]
order_path = os.path.join(samples, "order-booster.json")
parts = [("order", "order-booster.json", "application/json", open(order_path, "rb").read())]
for entry in json.load(open(order_path))["files"]:
    data = open(os.path.join(samples, entry["path"]), "rb").read()
    parts.append((entry["path"], os.path.basename(entry["path"]), "application/octet-stream", data))
body = b""
for name, filename, kind, data in parts:
    assert boundary not in data, f"the boundary occurs in {name}"
    body += (b"--" + boundary + b"\r\n"
             + f'Content-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'.encode()
             + f"Content-Type: {kind}\r\n\r\n".encode() + data + b"\r\n")
body += b"--" + boundary + b"--\r\n"
open(out, "wb").write(body)
PY
start_server "$work/serve.log"

# The request kinds: NAME|PATH AND QUERY|BODY FILE|CONTENT TYPE|CLI ARGUMENTS (OUT = the output).
kinds=(
  "card-png|/v1/card?format=png&side=front|$profile|application/json|card $profile --format png --side front -q -o OUT.png"
  "card-pdf|/v1/card|$profile|application/json|card $profile -q -o OUT.pdf"
  "qr-png|/v1/qr?payload=$encoded|||qr -o OUT.png $payload"
  "thumbnail|/v1/thumbnail?size=256|$upload|application/pdf|thumb --size 256 -o OUT.d $upload"
  "quote|/v1/quote?prices=booster|$work/quote.body|multipart/form-data; boundary=$boundary|quote --json $samples/order-booster.json --prices $samples/prices-booster.json"
)

# post LUA NAME PATH BODY TYPE: the wrk script posting one request, counting non-200 answers
# (wrk's own count misses none, but this one stops a memory run early: WRK_LIMIT per thread).
lua() {
  cat >"$1" <<LUA
wrk.method = "POST"
wrk.path = "$3"
local body = "$4"
if body ~= "" then local f = assert(io.open(body, "rb")); wrk.body = f:read("*a"); f:close() end
if "$5" ~= "" then wrk.headers["Content-Type"] = "$5" end
LUA
}

# The server's answer to each kind, checked; kinds whose route is absent are dropped.
active=()
for kind in "${kinds[@]}"; do
  IFS='|' read -r name path body type cli <<<"$kind"
  args=(-s -o "$work/$name.served" -w '%{http_code} %{content_type}' -X POST)
  [[ -n "$body" ]] && args+=(--data-binary "@$body")
  [[ -n "$type" ]] && args+=(-H "Content-Type: $type")
  read -r status content <<<"$(curl "${args[@]}" "$base$path")"
  if [[ "$status" == 404 ]] && grep -q '"http.notFound"' "$work/$name.served"; then
    echo "note: $name skipped: this server has no route ${path%%\?*} (404 http.notFound)"
    continue
  fi
  if [[ "$status" != 200 ]]; then
    echo "note: $name skipped: ${path%%\?*} answered $status to this bench's request:" \
      "$(head -c 300 "$work/$name.served")"
    continue
  fi
  out="$work/$name.cli"
  # shellcheck disable=SC2086
  "$imprint" ${cli//OUT/$out} >"$work/$name.cli.stdout" 2>"$work/$name.cli.err" ||
    { echo "the CLI failed for $name:" >&2; cat "$work/$name.cli.err" >&2; exit 1; }
  case "$name" in
    qr-png)
      cmp -s "$work/$name.served" "$out.png" || { echo "qr-png: the server's PNG is not the CLI's" >&2; exit 1; }
      [[ "$(zbarimg -q --raw --nodbus "$out.png")" == "$payload" ]] || { echo "qr-png does not decode" >&2; exit 1; }
      ;;
    card-pdf)
      [[ "$(pdfinfo "$work/$name.served" | awk '/^Pages:/ {print $2}')" == 2 ]] ||
        { echo "card-pdf: the server's PDF has not two pages" >&2; exit 1; }
      ;;
    card-png)
      cmp -s "$work/$name.served" "$out.png" || { echo "card-png: the server's PNG is not the CLI's" >&2; exit 1; }
      ;;
    quote)
      cmp -s "$work/$name.served" "$work/$name.cli.stdout" ||
        { echo "quote: the server's JSON is not imprint quote --json's" >&2; exit 1; }
      ;;
  esac
  echo "$name: $status $content, $(stat -c %s "$work/$name.served") bytes"
  active+=("$kind")
done

# wrk_run NAME CONNECTIONS: one wrk run; prints "rps p50_ms p99_ms requests".
wrk_run() {
  local name=$1 c=$2 threads=2 kind
  ((c < 2)) && threads=1
  for kind in "${active[@]}"; do [[ "${kind%%|*}" == "$name" ]] && break; done
  IFS='|' read -r _ path body type _ <<<"$kind"
  lua "$work/$name.lua" "$name" "$path" "$body" "$type"
  wrk -t "$threads" -c "$c" -d "${duration}s" --timeout 30s --latency -s "$work/$name.lua" \
    "$base" >"$work/$name.wrk.$c"
  python3 - "$work/$name.wrk.$c" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
if "Non-2xx" in text or "Socket errors" in text:
    sys.exit(f"wrk saw failures:\n{text}")
def ms(value):
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", value).groups()
    return float(number) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p50 = ms(re.search(r"^\s+50%\s+(\S+)", text, re.M).group(1))
p99 = ms(re.search(r"^\s+99%\s+(\S+)", text, re.M).group(1))
count = int(re.search(r"(\d+) requests in", text).group(1))
print(f"{rps:.1f} {p50:.2f} {p99:.2f} {count}")
PY
}

# cli_run NAME CONNECTIONS: `imprint` started per request, CONNECTIONS at once, for DURATION
# seconds; prints "rps p50_ms p99_ms requests".
cli_run() {
  local name=$1 c=$2 kind
  for kind in "${active[@]}"; do [[ "${kind%%|*}" == "$name" ]] && break; done
  IFS='|' read -r _ _ _ _ cli <<<"$kind"
  python3 - "$imprint" "$c" "$duration" "$work/cli-$name-$c" "$cli" <<'PY'
import os, shlex, statistics, subprocess, sys, threading, time
imprint, connections, duration, out, cli = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
os.makedirs(out, exist_ok=True)
latencies, failures, lock = [], [], threading.Lock()
start = time.monotonic()
deadline = start + duration
def worker(index):
    argv = [imprint] + shlex.split(cli.replace("OUT", f"{out}/{index}"))
    while time.monotonic() < deadline:
        begun = time.monotonic()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        took = time.monotonic() - begun
        with lock:
            (latencies if done.returncode == 0 else failures).append(took if done.returncode == 0 else done.stderr[-300:])
threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
for t in threads: t.start()
for t in threads: t.join()
elapsed = time.monotonic() - start
if failures:
    sys.exit(f"{len(failures)} CLI runs failed: {failures[0]!r}")
latencies.sort()
def percentile(p): return latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))] * 1000
print(f"{len(latencies) / elapsed:.1f} {percentile(50):.2f} {percentile(99):.2f} {len(latencies)}")
PY
}

echo
echo "DURATION=${duration}s a run; wrk 4.1 and the server share the machine's $(nproc) cores (and any other load)"
printf '%-10s %5s | %10s %9s %9s | %9s %9s %9s | %7s\n' kind conns "server r/s" "p50 ms" "p99 ms" "CLI r/s" "p50 ms" "p99 ms" ratio
for kind in "${active[@]}"; do
  name=${kind%%|*}
  for c in $connections; do
    read -r srps sp50 sp99 _ <<<"$(wrk_run "$name" "$c")"
    read -r crps cp50 cp99 _ <<<"$(cli_run "$name" "$c")"
    ratio=$(awk -v a="$srps" -v b="$crps" 'BEGIN {printf "%.1fx", a / b}')
    printf '%-10s %5s | %10s %9s %9s | %9s %9s %9s | %7s\n' "$name" "$c" "$srps" "$sp50" "$sp99" "$crps" "$cp50" "$cp99" "$ratio"
  done
done
stop_server

# Memory: a fresh server, MEMORY_KINDS in turn, 64 connections; VmHWM after a tenth and at the
# end.
if ((memory_requests > 0)); then
  start_server "$work/serve-memory.log"
  {
    echo "local kinds = {}"
    for kind in "${active[@]}"; do
      IFS='|' read -r name path body type _ <<<"$kind"
      [[ " $memory_kinds " == *" $name "* ]] || continue
      echo "kinds[#kinds + 1] = {path = \"$path\", body = \"$body\", type = \"$type\"}"
    done
    cat <<'LUA'
-- Built in init, once wrk has set its Host header (wrk.format takes it from there): a request
-- made at the script's top level has none, which HTTP/1.1 refuses (400).
local requests = {}
function init(args)
  for i, k in ipairs(kinds) do
    local headers = {}
    if k.type ~= "" then headers["Content-Type"] = k.type end
    local body = nil
    if k.body ~= "" then local f = assert(io.open(k.body, "rb")); body = f:read("*a"); f:close() end
    requests[i] = wrk.format("POST", k.path, headers, body)
  end
end
local next = 0
function request()
  next = next % #requests + 1
  return requests[next]
end
LUA
  } >"$work/mixed.lua"
  hwm() { awk '/^VmHWM:/ {print $2}' "/proc/$server_pid/status"; }
  # Requests answered so far, from the server's own counter (the scrapes themselves left out).
  answered() {
    curl -s "$base/metrics" | awk '/^imprint_http_requests_total\{/ && !/route="\/metrics"/ {n += $NF} END {print n + 0}'
  }
  wrk -t 2 -c 64 -d 86400s --timeout 30s -s "$work/mixed.lua" "$base" >"$work/mixed.wrk" &
  wrk_pid=$!
  for mark in $((memory_requests / 10)) "$memory_requests"; do
    while (($(answered) < mark)); do
      kill -0 "$wrk_pid" 2>/dev/null || { echo "wrk ended early:" >&2; cat "$work/mixed.wrk" >&2; exit 1; }
      sleep 0.5
    done
    echo "memory ($memory_kinds): after $(answered) requests, server VmHWM $(hwm) KB, VmRSS $(awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status") KB"
  done
  kill -INT "$wrk_pid"; wait "$wrk_pid" || true
  if grep -q "Non-2xx\|Socket errors" "$work/mixed.wrk"; then
    echo "the memory run saw failures:" >&2; cat "$work/mixed.wrk" >&2; exit 1
  fi
  stop_server
fi
