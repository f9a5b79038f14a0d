# The open-loop latency scenario's tools (bench/scenarios/60-latency.sh):
# oha and pgbench at fixed rates on the generator's core, the sustainable
# rate's search, the database floors and the medians of repetitions.
# Sourced by the scenario; bench/lib.sh before it.

bench_ensure_oha() {
  local root="${CARGO_TARGET_DIR:-target}/bench-tools" version=1.16.0
  if [ ! -x "$root/bin/oha" ] || ! "$root/bin/oha" --version | grep -q "$version"; then
    echo "oha $version is missing; installing it (cargo install --locked)" >&2
    cargo install --quiet --locked --root "$root" oha --version "$version" >&2 || return 1
  fi
  echo "$root/bin/oha"
}

# oha's JSON report -> "achieved p50 p99 p99.9 2xx%" (milliseconds; the
# share of requests answered 2xx, transport errors counted as failures but
# not the requests still in flight when the run ends: oha's own success
# rate counts any answer).
bench_oha_summary() {
  python3 -c '
import json, sys
r = json.load(sys.stdin)
p = r["latencyPercentiles"]
ms = lambda k: "%.2f" % (1000 * (p.get(k) or 0))
codes = r.get("statusCodeDistribution") or {}
errors = sum(n for e, n in (r.get("errorDistribution") or {}).items()
             if e != "aborted due to deadline")
answered = sum(codes.values())
ok = sum(n for c, n in codes.items() if str(c).startswith("2"))
print("%.0f" % r["summary"]["requestsPerSec"], ms("p50"), ms("p99"), ms("p99.9"),
      "%.1f" % (100 * ok / max(1, answered + errors)))'
}

# Every process of the local PostgreSQL server on these CPUs (the ones it
# forks from now on inherit it from the postmaster).
bench_pin_postgres() { # cpus
  local pid
  for pid in $(pgrep -x postgres); do
    taskset -a -p -c "$1" "$pid" >/dev/null 2>&1 || true
  done
}

# oha on the generator's core (all of them when not pinned).
bench_oha() {
  if [ "${BENCH_LATENCY_PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ]; then
    taskset -c 1 "$@"
  else
    "$@"
  fi
}

# Milliseconds the hypervisor took from CPU 0 so far (steal time): on a
# virtual machine a vCPU taken away for 30 ms looks, from inside, like
# keel running 30 ms without answering.
bench_steal_ms() {
  awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu0" { printf "%.0f", $9 * 1000 / hz }' /proc/stat
}

# CPU 0's and CPU 1's ticks so far, busy and in all: "busy0 all0 busy1 all1"
# (busy: everything but idle, iowait and steal).
bench_cpu_ticks() {
  awk '$1 == "cpu0" || $1 == "cpu1" {
    all = 0; for (i = 2; i <= 9; i++) all += $i
    printf "%d %d ", all - $5 - $6 - $9, all }' /proc/stat
}

# How busy each core was between two bench_cpu_ticks: "cpu0% cpu1%".
bench_cpu_busy() { # "before" "after"
  echo "$1 $2" | awk '{ printf "%.0f %.0f", 100 * ($5 - $1) / ($6 - $2 + !($6 - $2)),
    100 * ($7 - $3) / ($8 - $4 + !($8 - $4)) }'
}

# Runs CMD, which prints a run's line with the milliseconds the hypervisor
# took from CPU 0 in its 6th field, again while that is over
# BENCH_LATENCY_MAX_STEAL_MS (default 100), at most
# BENCH_LATENCY_STEAL_RETRIES (default 2) more times, and prints the line
# of the least stolen run (its marks alone in $latency_marks, when set): a
# vCPU taken away is a stall no code in keel can answer. Each run made
# again adds a line to $BENCH_DIR/steal-retries.
bench_steal_guard() { # cmd [args...]
  local tries="${BENCH_LATENCY_STEAL_RETRIES:-2}" max="${BENCH_LATENCY_MAX_STEAL_MS:-100}"
  local best="" least="" line stolen marks kept=""
  marks=$(mktemp)
  while :; do
    : >"$marks"
    line=$(latency_marks=${latency_marks:+$marks} "$@")
    stolen=$(echo "$line" | cut -d' ' -f6)
    if [ -z "$best" ] || [ "${stolen:-0}" -lt "$least" ]; then
      best=$line least=${stolen:-0} kept=$(cat "$marks")
    fi
    [ "$least" -le "$max" ] || [ "$tries" -le 0 ] && break
    tries=$((tries - 1))
    echo "$line" >>"$BENCH_DIR/steal-retries"
  done
  rm -f "$marks"
  [ -n "${latency_marks:-}" ] && echo "$kept" >>"$latency_marks"
  echo "$best"
}

# One fixed-rate run: "achieved p50 p99 p99.9 success% steal-ms cpu0%
# cpu1%", after a warm-up; made again under steal (bench_steal_guard).
bench_latency_run() { # oha secs rate url [oha args...]
  bench_steal_guard bench_latency_run_once "$@"
}

# How many runs were made again for steal so far.
bench_steal_retries() {
  if [ -f "$BENCH_DIR/steal-retries" ]; then wc -l <"$BENCH_DIR/steal-retries"; else echo 0; fi
}

# ", N runs made again for steal" since bench_steal_retries gave BEFORE;
# nothing when none was.
bench_steal_note() { # before
  local n=$(($(bench_steal_retries) - $1))
  [ "$n" -eq 1 ] && echo ", 1 run made again for steal"
  [ "$n" -gt 1 ] && echo ", $n runs made again for steal"
  return 0
}

bench_latency_run_once() { # oha secs rate url [oha args...]
  local oha=$1 secs=$2 rate=$3 warm="${BENCH_LATENCY_WARMUP_SECS:-2}" stolen summary ticks
  shift 3
  if [ "$warm" != 0 ]; then
    bench_oha "$oha" -z "${warm}s" -q "$rate" --no-tui -c 64 --output-format json "$@" \
      >/dev/null 2>&1 || true
  fi
  stolen=$(bench_steal_ms)
  ticks=$(bench_cpu_ticks)
  # Where keel's log stands before and after the run (warm-up excluded),
  # for the slow-request summary (BENCH_LATENCY_SLOW_MS).
  [ -n "${latency_marks:-}" ] && printf '%s ' "$(stat -c %s "$BENCH_DIR/stderr")" >>"$latency_marks"
  summary=$(bench_oha "$oha" -z "${secs}s" -q "$rate" --latency-correction --no-tui -c 64 \
    --output-format json "$@" 2>/dev/null | bench_oha_summary)
  [ -n "${latency_marks:-}" ] && stat -c %s "$BENCH_DIR/stderr" >>"$latency_marks"
  echo "$summary $(($(bench_steal_ms) - stolen)) $(bench_cpu_busy "$ticks" "$(bench_cpu_ticks)")"
}

# Whether a run held: p99 under 50 ms and at least 97 % of the rate.
bench_latency_holds() { # rate "achieved p50 p99 p99.9 ok"
  awk -v r="$1" -v line="$2" 'BEGIN { split(line, f, " ");
    exit !(f[3] < 50 && f[1] >= 0.97 * r && f[5] >= 99.9) }'
}

# oha's closed loop (64 connections): "requests/s - - - - steal-ms".
bench_latency_closed_loop() { # oha secs url [oha args...]
  local oha=$1 secs=$2 stolen sat
  shift 2
  stolen=$(bench_steal_ms)
  sat=$(bench_oha "$oha" -z "${secs}s" --no-tui -c 64 --output-format json "$@" 2>/dev/null \
    | bench_oha_summary | cut -d' ' -f1)
  echo "${sat:-0} - - - - $(($(bench_steal_ms) - stolen))"
}

# Whether a rate is sustained: two runs at it in a row both hold (one run
# that holds is not enough on a shared core: PostgreSQL GET /history held
# the closed loop's 4,057/s for one 10 s run, and half that rate then had a
# p99 of 183 ms; run alone minutes later it sustained 1,898/s).
bench_latency_sustains() { # oha secs rate url [oha args...]
  local oha=$1 secs=$2 rate=$3 run
  shift 3
  for run in 1 2; do
    bench_latency_holds "$rate" "$(bench_latency_run "$oha" "$secs" "$rate" "$@")" || return 1
  done
}

# The highest fixed rate that is sustained (see the top of this file):
# "closed-loop-rate sustainable-rate".
bench_latency_sustainable() { # oha url [oha args...]
  local oha=$1 secs="${BENCH_LATENCY_SEARCH_SECS:-${BENCH_LATENCY_SECS:-10}}" sat lo hi mid step
  shift
  sat=$(bench_steal_guard bench_latency_closed_loop "$oha" "$secs" "$@" | cut -d' ' -f1)
  hi=$sat
  if bench_latency_sustains "$oha" "$secs" "$hi" "$@"; then
    echo "$sat $hi"
    return
  fi
  lo=$((sat / 2))
  for step in 1 2 3 4; do
    mid=$(((lo + hi) / 2))
    if bench_latency_sustains "$oha" "$secs" "$mid" "$@"; then
      lo=$mid
    else
      hi=$mid
    fi
  done
  # No step held: half of the closed loop was only assumed to; check it,
  # and halve it while it does not.
  if [ "$lo" -eq $((sat / 2)) ]; then
    for step in 1 2 3; do
      bench_latency_sustains "$oha" "$secs" "$lo" "$@" && break
      lo=$((lo / 2))
    done
  fi
  echo "$sat $lo"
}

# pgbench at a fixed rate (-R: each transaction timed from when it was
# due; prepared statements, as keel's; 16 connections unless the extra
# arguments say otherwise) on the generator's core, for
# BENCH_LATENCY_WARMUP_SECS more than asked, that first stretch (its 16
# connections being opened) not counted: "achieved p50 p99 p99.9 100.0 0".
bench_pgbench_at() { # rate secs name [pgbench args...]
  local rate=$1 secs=$2 name=$3 warm="${BENCH_LATENCY_WARMUP_SECS:-2}" dir script
  shift 3
  dir=$(mktemp -d)
  script="$PWD/bench/sql/$name.pgbench"
  (cd "$dir" && bench_oha pgbench -n -M prepared -h 127.0.0.1 -U postgres -f "$script" \
    -c 16 -j 1 "$@" -R "$rate" -T "$((secs + warm))" -l --log-prefix=pgb "$BENCH_PG_DB" \
    >/dev/null 2>&1) || true
  cat "$dir"/pgb.* 2>/dev/null | python3 -c '
import sys
secs, warm = float(sys.argv[1]), float(sys.argv[2])
rows = [f for f in (l.split() for l in sys.stdin) if len(f) >= 6]
# Completion times (epoch s + us); the first `warm` seconds are not counted.
t = [int(f[4]) + int(f[5]) / 1e6 for f in rows]
start = min(t, default=0) + warm
lat = sorted(int(f[2]) + (int(f[6]) if len(f) > 6 else 0)
             for f, done in zip(rows, t) if done >= start)
at = lambda q: lat[min(len(lat) - 1, int(len(lat) * q))] / 1000 if lat else 0
print("%.0f %.2f %.2f %.2f 100.0 0" % (len(lat) / secs, at(0.5), at(0.99), at(0.999)))' "$secs" "$warm"
  rm -rf "$dir"
}

# sqlite-floor at a fixed rate on keel's core (keel idle meanwhile).
bench_sqlite_floor_at() { # rate secs scenario [arg]
  local rate=$1 secs=$2
  shift 2
  if [ "${BENCH_LATENCY_PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ]; then
    SQLITE_FLOOR_RATE=$rate taskset -c 0 "$SQLITE_FLOOR_BIN" "$BENCH_DIR/keel.db" "$secs" "$@"
  else
    SQLITE_FLOOR_RATE=$rate "$SQLITE_FLOOR_BIN" "$BENCH_DIR/keel.db" "$secs" "$@"
  fi
}

# The database floor of the endpoint being measured, at RATE: from
# $latency_db_floor, "pgbench-name[,pgbench -D arg] sqlite-scenario[,arg]"
# ("-" where there is none); nothing when there is none.
bench_latency_db_floor() { # backend rate secs
  local pg sq name arg
  read -r pg sq <<<"${latency_db_floor:-- -}"
  if [ "$1" = postgres ] && [ "$pg" != - ]; then
    name=${pg%%,*} arg=${pg#*,}
    if [ "$arg" = "$pg" ]; then bench_pgbench_at "$2" "$3" "$name"
    else bench_pgbench_at "$2" "$3" "$name" -D "$arg"; fi
  elif [ "$1" = sqlite ] && [ "$sq" != - ]; then
    name=${sq%%,*} arg=${sq#*,}
    if [ "$arg" = "$sq" ]; then bench_sqlite_floor_at "$2" "$3" "$name"
    else bench_sqlite_floor_at "$2" "$3" "$name" "$arg"; fi
  fi
}

# keel's group commits so far for WRITER (keel_batch_items on its
# /metrics): "batches items".
bench_batches() { # writer
  curl -fs "http://127.0.0.1:$((BENCH_PORT_BASE + 9))/metrics" | awk -v w="writer=\"$1\"" '
    index($0, "keel_batch_items_count{") == 1 && index($0, w) { c = $NF }
    index($0, "keel_batch_items_sum{") == 1 && index($0, w) { s = $NF }
    END { printf "%d %d\n", c, s }'
}

# The database floor of a group-committed write: keel's batches as they
# were in the run just measured (between the counts BEFORE and AFTER, over
# SECS plus the warm-up), straight at PostgreSQL one at a time (keel has
# one writer) at the rate keel committed them: "rate size" then pgbench's
# line.
bench_batch_floor() { # before after secs pgbench-name
  local secs=$(($3 + ${BENCH_LATENCY_WARMUP_SECS:-2})) rate size
  read -r rate size <<<"$(echo "$1 $2" | awk -v t="$secs" '{
    n = $3 - $1; i = $4 - $2; if (n < 1) n = 1
    printf "%.0f %.0f", n / t, (i / n < 1) ? 1 : i / n }')"
  echo "$rate $size"
  bench_pgbench_at "$rate" "$3" "$4" -D "b=$size" -c 1
}

# The median and spread of repeated runs, one "achieved p50 p99 p99.9 ok
# steal [cpu0% cpu1%]" per line -> those medians, then "min-max" of each
# percentile.
bench_latency_median() {
  python3 -c '
import statistics, sys
runs = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
cols = list(zip(*runs))
med = [statistics.median(c) for c in cols]
fmt = ["%.0f", "%.2f", "%.2f", "%.2f", "%.1f", "%.0f"] + ["%.0f"] * (len(med) - 6)
print(" ".join(f % m for f, m in zip(fmt, med)),
      *("%.2f-%.2f" % (min(c), max(c)) for c in cols[1:4]))'
}

# The verdict of a row at PCT % of the sustainable rate, from the medians
# of the endpoint (E), the /healthz floor at the same rate (F) and the
# database floor ("0 0 0 0" when none).
bench_latency_goal() { # read|write pct e f d
  awk -v k="$1" -v p="$2" -v e="$3" -v f="$4" -v d="$5" 'BEGIN {
    split(e, a, " "); split(f, b, " "); split(d, c, " ")
    if (p == 50) {
      lim = (k == "read") ? 5 : 15
      ok = a[3] <= lim && a[3] <= 3 * b[3]
      printf "p99 <= %d ms and <= 3x floor (%.2f): %s", lim, 3 * b[3], ok ? "met" : "MISSED"
      if (!ok && b[3] > lim) printf " (floor over)"
      if (!ok && c[3] > 0 && a[3] <= lim && a[3] <= 3 * (b[3] + c[3]))
        printf " (within 3x /healthz + database floor: %.2f)", 3 * (b[3] + c[3])
      else if (!ok && c[3] > 0 && b[3] + c[3] > lim && a[3] <= 3 * (b[3] + c[3]))
        printf " (floors together over: /healthz + database floor %.2f; keel %+.2f)", b[3] + c[3], a[3] - b[3] - c[3]
    } else {
      ok = a[4] <= 25
      printf "p99.9 <= 25 ms: %s", ok ? "met" : "MISSED"
      if (!ok && b[4] > 25) printf " (floor over)"
      if (!ok && c[4] > 25) printf " (database floor over)"
    }}'
}

# An 80 % row's miss when the load floor (L, "achieved cpu0% sustainable
# p99.9": /healthz at 80 % of its own sustainable rate) misses the same
# goal: the machine does not hold a p99.9 of 25 ms at 80 % of what it
# sustains, whatever it answers. Empty when the load floor met it.
bench_latency_load_verdict() { # l
  awk -v l="$1" 'BEGIN { split(l, c, " ")
    if (c[4] > 25) printf " (load floor over: /healthz at 80 %% of its sustainable rate, CPU 0 %d %% busy, p99.9 %.2f)", c[2], c[4] }'
}

# The rate at which /healthz keeps CPU 0 as busy as the endpoint's runs
# did (E's 7th field), by the line through two /healthz runs: the floor at
# the row's rate (F) and the load floor (L, "achieved cpu0% sustainable");
# at most the load floor's sustainable rate.
bench_latency_same_load_rate() { # e f l
  awk -v e="$1" -v f="$2" -v l="$3" 'BEGIN {
    split(e, a, " "); split(f, b, " "); split(l, c, " "); max = c[3]
    per = (c[2] - b[7]) / (c[1] - b[1] + !(c[1] - b[1]))
    rate = (per > 0) ? b[1] + (a[7] - b[7]) / per : max
    printf "%.0f", (rate > max) ? max : (rate < b[1]) ? b[1] : rate }'
}

# BENCH_LATENCY_REPS fixed-rate runs of one URL, their median (as
# bench_latency_median).
bench_latency_reps() { # oha rate url [oha args...]
  local oha=$1 rate=$2 runs="" i
  shift 2
  for i in $(seq "${BENCH_LATENCY_REPS:-3}"); do
    runs+="$(bench_latency_run "$oha" "${BENCH_LATENCY_SECS:-10}" "$rate" "$@")"$'\n'
  done
  echo -n "$runs" | bench_latency_median
}

# A floor's row from its median (a bench_latency_median line): LABEL, then
# the cores' busy time and the steal, then the percentiles with spreads.
bench_latency_floor_row() { # backend label median
  local ach p50 p99 p999 stolen cpu0 cpu1 r50 r99 r999
  read -r ach p50 p99 p999 _ stolen cpu0 cpu1 r50 r99 r999 <<<"$3"
  echo "| $1 | $2 (CPU 0 $cpu0 % busy and $stolen ms stolen per run, CPU 1 $cpu1 % busy) | $ach | ${p50}ms ($r50) | ${p99}ms ($r99) | ${p999}ms ($r999) | - | - |"
}
