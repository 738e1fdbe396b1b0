#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark (issue #29): `imprint serve` replicas sharing their jobs through PostgreSQL
# (`--jobs-db`) behind HAProxy, one replica against two, each pinned to a core of its own
# (`taskset -c N`, one document worker each: `-j 1`), in one run:
#   cards    wrk -c 8 POSTing a card PDF (both sides) through HAProxy for DURATION seconds:
#            requests per second
#   batches  BATCHES batches (default 4) of CARDS card items (default 1000) posted at once
#            through HAProxy, timed from the first POST until the last job is done (polled every
#            0.2 s through HAProxy), and from the first job's acceptance to the last one's end
#            by the database's clock (its reports' times: no poll interval); every job must end
#            done with all its items. A batch of more than 250 cards runs in shards (see
#            --job-shard-items), which both replicas take
#   database the jobs database's cost per batch job, from pg_stat_statements: statements run
#            and their execution time in all (claims, renewals, ends, and the polls' reads)
# Prints each figure for 1 and 2 replicas, the ratio (goal: 2 replicas >= 1.8x one) and each
# replica's peak memory (VmHWM). The database is a private cluster in a temporary folder (as the
# postgres user, a Unix socket only), removed at the end.
# This machine has 2 cores: HAProxy, wrk, curl and PostgreSQL share them with the replicas, so
# the ratio measured here is below what two machines give; the figures say so. HAProxy runs one
# thread and wrk one (8 connections): the least of the replicas' cores they can take.
# Usage: Benchmarks/scale-bench.sh   (needs scripts/bootstrap --bench; run it under
#        flock /work/bench.lock). Environment: DURATION (default 10), CARDS (default 1000),
#        BATCHES (default 4: a replica takes the next job when it ends one, so two replicas
#        share four batches evenly however their cores' speeds differ; with two, the slower
#        replica's one batch decides), ROUNDS (default 5: the figures are the rounds' medians),
#        SERVE_ARGS (more `imprint serve` arguments for every replica, e.g. "--job-shard-items 0"
#        to run each batch whole on one replica rather than in shards of 250 cards).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work="${BENCH_DIR:-$root/Benchmarks/out/scale}"
duration=${DURATION:-10}
cards=${CARDS:-1000}
batches=${BATCHES:-4}
rounds=${ROUNDS:-5}
rm -rf "$work"; mkdir -p "$work"
cd "$root"
source "$root/Benchmarks/common.sh"
if [[ -n "${IMPRINT:-}" ]]; then imprint=$IMPRINT; else build_imprint; fi
for tool in wrk haproxy taskset curl psql; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: run scripts/bootstrap --bench" >&2; exit 1; }
done
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
profile="$root/assets/samples/profiles/sora-park.json"

# The database: initdb and postgres as the postgres user (root may not run them), in /tmp (the
# socket's path is short; the postgres user reaches it).
pg=$(mktemp -d /tmp/imprint-scale-pg-XXXXXX)
chown postgres:postgres "$pg"
as_postgres() { setpriv --reuid postgres --regid postgres --init-groups "$@"; }
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  as_postgres "$bin/pg_ctl" -D "$pg/data" -m fast stop >/dev/null 2>&1 || true
  rm -rf "$pg"
}
trap cleanup EXIT
as_postgres "$bin/initdb" -D "$pg/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >/dev/null
as_postgres "$bin/pg_ctl" -D "$pg/data" -l "$pg/server.log" -w -o \
  "-c listen_addresses='' -c unix_socket_directories='$pg' -c shared_preload_libraries=pg_stat_statements -c fsync=off" \
  start >/dev/null
url="postgresql://postgres@/postgres?host=$pg"
sql() { psql -X -q -t -A "$url" -c "$1"; }
sql "CREATE EXTENSION pg_stat_statements" >/dev/null

# The batch: CARDS card items of one profile, as a multipart body curl sends.
python3 - "$cards" "$work/cards.jsonl" <<'PY'
import json, sys
count, out = int(sys.argv[1]), sys.argv[2]
with open(out, "w") as f:
    for index in range(count):
        f.write(json.dumps({"id": f"C-{index}", "kind": "card", "profile": "p.json"}) + "\n")
PY
printf 'wrk.method = "POST"\nwrk.path = "/v1/card"\nlocal f = assert(io.open("%s", "rb")); wrk.body = f:read("*a"); f:close()\nwrk.headers["Content-Type"] = "application/json"\n' \
  "$profile" >"$work/card.lua"

# CPU clock ticks (user + system, reaped children's included) of processes $@, and the machine's
# busy ticks (every core's user, nice, system, irq and softirq time: /proc/stat).
ticks() {
  local pid sum=0 fields
  for pid in "$@"; do
    fields=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null) || continue
    read -r -a f <<<"$fields"
    sum=$((sum + f[11] + f[12] + f[13] + f[14]))
  done
  echo "$sum"
}
busy_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
postgres_pids() { pgrep -u postgres -d ' ' postgres || true; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# run N: N replicas on cores 0..N-1 behind HAProxy; prints "cards_rps batches_s statements ms hwm_kb..."
run() {
  local n=$1 core port ports=() replica_pids=() log i balancer=""
  # This runs in a subshell ($(run N)): its own processes stopped whatever happens.
  trap 'kill -TERM ${replica_pids[*]:-} ${balancer:-} 2>/dev/null || true' EXIT
  local jobs="$work/jobs-$n"
  mkdir -p "$jobs"
  for ((core = 0; core < n; core++)); do
    port=$(free_port)
    log="$work/replica-$n-$core.log"
    taskset -c "$core" "$imprint" serve --listen "127.0.0.1:$port" --jobs-dir "$jobs" \
      --jobs-db "$url" -j 1 --job-queue 100 --jobs-disk $((8 << 30)) ${SERVE_ARGS:-} 2>"$log" &
    replica_pids+=($!)
    for ((i = 0; i < 600; i++)); do grep -q "listening on" "$log" 2>/dev/null && break; sleep 0.1; done
    grep -q "listening on" "$log" || { echo "replica did not start:" >&2; cat "$log" >&2; exit 1; }
    ports+=("$port")
  done
  local front
  front=$(free_port)
  {
    printf 'global\n  maxconn 512\n  nbthread 1\ndefaults\n  mode http\n  timeout connect 2s\n  timeout client 300s\n  timeout server 300s\n'
    printf 'frontend imprint\n  bind 127.0.0.1:%s\n  default_backend replicas\n' "$front"
    printf 'backend replicas\n  balance roundrobin\n  option httpchk GET /readyz\n  http-check expect status 200\n'
    for ((i = 0; i < n; i++)); do printf '  server r%s 127.0.0.1:%s check inter 500ms\n' "$i" "${ports[$i]}"; done
  } >"$work/haproxy-$n.cfg"
  haproxy -db -f "$work/haproxy-$n.cfg" >"$work/haproxy-$n.log" 2>&1 &
  balancer=$!
  for ((i = 0; i < 100; i++)); do curl -sf "http://127.0.0.1:$front/readyz" >/dev/null && break; sleep 0.1; done

  # Cards through the balancer, with the CPU time each part of the run took meanwhile.
  local before_replicas before_balancer before_postgres before_busy
  before_replicas=$(ticks "${replica_pids[@]}") before_balancer=$(ticks "$balancer")
  before_postgres=$(ticks $(postgres_pids)) before_busy=$(busy_ticks)
  /usr/bin/time -f "%U %S" -o "$work/wrk-$n.time" \
    wrk -t 1 -c 8 -d "${duration}s" --timeout 60s -s "$work/card.lua" "http://127.0.0.1:$front" \
    >"$work/cards-$n.wrk"
  local cpu
  cpu="$(($(ticks "${replica_pids[@]}") - before_replicas)) $(($(ticks "$balancer") - before_balancer))"
  cpu+=" $(awk '{printf "%d", ($1 + $2) * 100}' "$work/wrk-$n.time")"
  cpu+=" $(($(ticks $(postgres_pids)) - before_postgres)) $(($(busy_ticks) - before_busy))"
  cpu+=" $(awk '/requests in/ {print $1}' "$work/cards-$n.wrk")"
  if grep -q "Non-2xx\|Socket errors" "$work/cards-$n.wrk"; then
    echo "wrk saw failures:" >&2; cat "$work/cards-$n.wrk" >&2; exit 1
  fi
  local rps
  rps=$(awk '/Requests\/sec:/ {print $2}' "$work/cards-$n.wrk")

  # Batches posted at once; the database's statements counted from here.
  sql "SELECT pg_stat_statements_reset()" >/dev/null
  local start ids=() id
  local batch_replicas batch_busy
  batch_replicas=$(ticks "${replica_pids[@]}") batch_busy=$(busy_ticks)
  start=$(date +%s.%N)
  local posts=()
  for ((i = 0; i < batches; i++)); do
    curl -sf -F "manifest=@$work/cards.jsonl;filename=cards.jsonl" -F "p.json=@$profile" \
      "http://127.0.0.1:$front/v1/batch" -o "$work/posted-$n-$i.json" &
    posts+=($!)
  done
  for pid in "${posts[@]}"; do wait "$pid"; done
  # The client's own CPU takes a core from the replicas when two of them use both: job ids and
  # states read with sed (a Python start costs more than a poll), every job's checks after the
  # timed run.
  for ((i = 0; i < batches; i++)); do
    ids+=("$(sed -n 's/^  "job" : "\([0-9a-f-]*\)".*/\1/p' "$work/posted-$n-$i.json")")
  done
  local k=0
  for id in "${ids[@]}"; do
    local state=""
    while :; do
      curl -sf "http://127.0.0.1:$front/v1/jobs/$id" -o "$work/job-$n-$k.json" || true
      state=$(sed -n 's/^  "state" : "\([a-z]*\)".*/\1/p' "$work/job-$n-$k.json" 2>/dev/null || true)
      [[ "$state" == queued || "$state" == running || -z "$state" ]] || break
      sleep 0.2
    done
    k=$((k + 1))
  done
  local end seconds database_seconds
  end=$(date +%s.%N)
  cpu+=" $(($(ticks "${replica_pids[@]}") - batch_replicas)) $(($(busy_ticks) - batch_busy))"
  seconds=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$start" "$end")
  # Each job must end done with all its items; the first job's acceptance to the last one's end,
  # by the database's clock (its reports' times, to the millisecond): the batches' time without
  # the client's poll interval.
  database_seconds=$(python3 - "$cards" "$work"/job-"$n"-*.json <<'PY'
import datetime, json, sys
cards, accepted, finished = int(sys.argv[1]), [], []
for path in sys.argv[2:]:
    job = json.load(open(path))
    summary = job.get("summary") or {}
    if job["state"] != "done" or summary.get("ok", 0) + summary.get("skipped", 0) != cards:
        sys.exit(f"job {job['job']} ended {job['state']}: {summary}")
    stamp = lambda key: datetime.datetime.fromisoformat(job[key].replace("Z", "+00:00")).timestamp()
    accepted.append(stamp("accepted"))
    finished.append(stamp("finished"))
print(f"{max(finished) - min(accepted):.3f}")
PY
  )
  rm -f "$work"/job-"$n"-*.json
  local statements
  statements=$(sql "SELECT sum(calls), round(sum(total_exec_time)::numeric, 1) FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'")
  local hwm=()
  for pid in "${replica_pids[@]}"; do hwm+=("$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")"); done
  kill -TERM "$balancer" "${replica_pids[@]}" 2>/dev/null || true
  for pid in "$balancer" "${replica_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  echo "$rps $seconds ${statements//|/ } $database_seconds $cpu ${hwm[*]}"
}

echo "scale-bench: $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, imprint $("$imprint" --version | awk '{print $2}')${SERVE_ARGS:+, serve $SERVE_ARGS}"
# ROUNDS rounds (default 5), one replica then two in each, alternating: the machine is shared
# and its load drifts, so each figure is the median of the rounds, and so is each ratio.
results=()
for ((round = 0; round < rounds; round++)); do
  results+=("$(run 1)" "$(run 2)")
done
python3 - "$batches" "$cards" "$duration" "${results[@]}" <<'PY'
import statistics, sys
batches, cards, duration = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
lines = [line.split() for line in sys.argv[4:]]
ones, twos = lines[0::2], lines[1::2]
med = statistics.median
rps1, rps2 = med(float(l[0]) for l in ones), med(float(l[0]) for l in twos)
secs1, secs2 = med(float(l[1]) for l in ones), med(float(l[1]) for l in twos)
card_ratios = [float(b[0]) / float(a[0]) for a, b in zip(ones, twos)]
batch_ratios = [float(a[1]) / float(b[1]) for a, b in zip(ones, twos)]
calls1, calls2 = med(int(l[2]) for l in ones), med(int(l[2]) for l in twos)
ms1, ms2 = med(float(l[3]) for l in ones), med(float(l[3]) for l in twos)
db1, db2 = med(float(l[4]) for l in ones), med(float(l[4]) for l in twos)
db_ratios = [float(a[4]) / float(b[4]) for a, b in zip(ones, twos)]
# The card phase's CPU, in clock ticks (1/100 s): replicas, HAProxy, wrk, PostgreSQL, the
# machine's busy time on all cores; then the requests wrk made; then the batches' run's
# replicas' and machine's busy ticks; then each replica's peak memory.
def per_request(lines, field):
    return med(int(l[field]) * 10 / int(l[10]) for l in lines)  # ms a request
def rest(l):
    return int(l[9]) - int(l[5]) - int(l[6]) - int(l[7]) - int(l[8])
rest1 = med(rest(l) * 10 / int(l[10]) for l in ones)
rest2 = med(rest(l) * 10 / int(l[10]) for l in twos)
# Card requests a replica-CPU-second, 2 / 1: how the replicas themselves scale, whatever the
# other processes take from the cores.
own_ratios = [(int(b[10]) / int(b[5])) / (int(a[10]) / int(a[5])) for a, b in zip(ones, twos)]
# The cores the replicas used: their CPU seconds a second of wrk's run.
def replica_cores(l):
    return int(l[5]) / 100 / duration
hwm1 = max(int(l[13]) for l in ones)
hwm2 = [max(int(l[13]) for l in twos), max(int(l[14]) for l in twos)]
def spread(values):
    return f"{med(values):.2f}x ({min(values):.2f}-{max(values):.2f})"
print(f"{len(ones)} rounds; medians, and each round's ratio's range")
print(f"| | 1 replica | 2 replicas | 2 / 1 |")
print(f"|---|---|---|---|")
print(f"| card PDFs through HAProxy (wrk -c 8), requests/s | {rps1:.1f} | {rps2:.1f} | {spread(card_ratios)} |")
print(f"| {batches} batches of {cards} cards at once, s (cards/s) | {secs1:.2f} ({batches * cards / secs1:.0f}) | "
      f"{secs2:.2f} ({batches * cards / secs2:.0f}) | {spread(batch_ratios)} |")
print(f"| the same, first acceptance to last end by the database's clock, s (cards/s) | "
      f"{db1:.2f} ({batches * cards / db1:.0f}) | {db2:.2f} ({batches * cards / db2:.0f}) | "
      f"{spread(db_ratios)} |")
print(f"| database statements a batch job (all replicas, polls included) | {calls1 / batches:.0f} | "
      f"{calls2 / batches:.0f} | |")
print(f"| database execution time a batch job, ms | {ms1 / batches:.1f} | {ms2 / batches:.1f} | |")
print(f"| CPU a card request (wrk's run): the replicas, ms | {per_request(ones, 5):.2f} | "
      f"{per_request(twos, 5):.2f} | |")
print(f"| the same: HAProxy, wrk, PostgreSQL, ms | {per_request(ones, 6):.3f}, {per_request(ones, 7):.3f}, "
      f"{per_request(ones, 8):.3f} | {per_request(twos, 6):.3f}, {per_request(twos, 7):.3f}, "
      f"{per_request(twos, 8):.3f} | |")
print(f"| the same: the rest of the machine's busy time (kernel, curl, other processes), ms | "
      f"{rest1:.3f} | {rest2:.3f} | |")
print(f"| cores the replicas used in wrk's run | {med(replica_cores(l) for l in ones):.2f} | "
      f"{med(replica_cores(l) for l in twos):.2f} | |")
print(f"| card requests a replica CPU-second (how the replicas themselves scale) | "
      f"{med(int(l[10]) / int(l[5]) * 100 for l in ones):.0f} | "
      f"{med(int(l[10]) / int(l[5]) * 100 for l in twos):.0f} | {spread(own_ratios)} |")
# The batches' run: the replicas' CPU (their document workers' included) and the machine's.
print(f"| the batches' run: the replicas' CPU, s; cores they used | "
      f"{med(int(l[11]) / 100 for l in ones):.2f}; {med(int(l[11]) / 100 / float(l[1]) for l in ones):.2f} | "
      f"{med(int(l[11]) / 100 for l in twos):.2f}; {med(int(l[11]) / 100 / float(l[1]) for l in twos):.2f} | |")
print(f"| the same: the machine's busy time, s | {med(int(l[12]) / 100 for l in ones):.2f} | "
      f"{med(int(l[12]) / 100 for l in twos):.2f} | |")
print(f"| peak memory (VmHWM) a replica, MB | {hwm1 / 1024:.0f} | {hwm2[0] / 1024:.0f}, {hwm2[1] / 1024:.0f} | |")
print("goal: 2 replicas >= 1.8x one (on this 2-core machine HAProxy, wrk, curl and PostgreSQL share the cores)")
PY
