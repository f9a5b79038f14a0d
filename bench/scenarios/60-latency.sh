# Latency as users feel it, beside the HTTP floor. A closed loop at
# saturation (the other scenarios) measures queueing; here each endpoint is
# driven open-loop at fixed rates with oha (`-q` with
# `--latency-correction`: a request that should have been sent during a
# stall is timed from when it should have been sent, so stalls are not
# hidden by coordinated omission).
#
# 1. The sustainable rate: the highest fixed rate at which p99 stays under
#    50 ms and oha achieves at least 97 % of it. A short search: oha's
#    closed loop (64 connections) gives an upper bound, then four steps of
#    bisection down to half of it (a lower bound that is itself checked,
#    and halved again while it does not hold). Each step is as long as a
#    row's run (BENCH_LATENCY_SEARCH_SECS, default BENCH_LATENCY_SECS, after
#    the same warm-up): a rate that holds for 5 s can fall behind in 10.
# 2. At 50 % and 80 % of that rate, BENCH_LATENCY_REPS (default 3)
#    repetitions, each: the endpoint for BENCH_LATENCY_SECS (default 10),
#    then keel's own /healthz at the same rate on the same cores (the
#    floor). Every run is preceded by BENCH_LATENCY_WARMUP_SECS (default 2)
#    at its rate, not counted: connections opened, pools filled, caches
#    warm, as in a service that has been up. The rows give the median of
#    the repetitions with their spread (min-max).
# 3. Goals: at 50 %, p99 <= 5 ms for reads and <= 15 ms for writes, and
#    within 3x the floor's p99 at the same rate; at 80 %, p99.9 <= 25 ms.
#    A goal the floor itself misses is marked as the machine's. Each row
#    also gives the time the hypervisor took from keel's core during the
#    run (steal time, median per run): what no code in keel can answer.
# 4. A second floor for endpoints that use the database: the endpoint's
#    statements straight at it, at the same rate, in the same repetitions
#    (PostgreSQL: pgbench -R from oha's core, against the server on keel's
#    core; SQLite: sqlite-floor at a fixed rate on keel's core, keel idle).
#    It shows what the database alone takes at that rate; a miss within
#    3x /healthz + the database floor is marked so, and one where the two
#    floors' p99s added are over the goal already says by how much keel's
#    p99 is over or under that sum. PostgreSQL's POST /event is committed
#    in batches by one writer: its floor is the batches keel committed in
#    the run just measured (their rate and median size, from keel's
#    keel_batch_items), pgbench running that transaction one at a time.
# 5. BENCH_LATENCY_SLOW_MS=N: keel runs with KEEL_SLOW_REQUEST_MS=N and
#    each row says where the endpoint's requests over N ms went (running,
#    ready for a thread, waiting outside, the database, writing) and how
#    often the runtime ran a ready task N ms late (bench/latency_explain.py),
#    and before the rows a line gives the same probe with keel idle.
#
# The generator and the server do not share a core: keel is started on
# CPU 0 (and on PostgreSQL the database's processes are pinned there) and
# oha runs on CPU 1 (taskset; BENCH_LATENCY_PIN=0 to leave both free). One
# user per endpoint (oha sends one set of headers): accounts GET /account and GET
# /goals/weekly (5 goals), usage-alerts GET /history?offset=0 (1,000
# events) and POST /event, and channel-api stream.isLive.

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

# One fixed-rate run: "achieved p50 p99 p99.9 success% steal-ms", after a
# warm-up.
bench_latency_run() { # oha secs rate url [oha args...]
  local oha=$1 secs=$2 rate=$3 warm="${BENCH_LATENCY_WARMUP_SECS:-2}" stolen summary
  shift 3
  if [ "$warm" != 0 ]; then
    bench_oha "$oha" -z "${warm}s" -q "$rate" --no-tui -c 64 --output-format json "$@" \
      >/dev/null 2>&1 || true
  fi
  stolen=$(bench_steal_ms)
  # Where keel's log stands before and after the run (warm-up excluded),
  # for the slow-request summary (BENCH_LATENCY_SLOW_MS).
  [ -n "${latency_marks:-}" ] && printf '%s ' "$(stat -c %s "$BENCH_DIR/stderr")" >>"$latency_marks"
  summary=$(bench_oha "$oha" -z "${secs}s" -q "$rate" --latency-correction --no-tui -c 64 \
    --output-format json "$@" 2>/dev/null | bench_oha_summary)
  [ -n "${latency_marks:-}" ] && stat -c %s "$BENCH_DIR/stderr" >>"$latency_marks"
  echo "$summary $(($(bench_steal_ms) - stolen))"
}

# Whether a run held: p99 under 50 ms and at least 97 % of the rate.
bench_latency_holds() { # rate "achieved p50 p99 p99.9 ok"
  awk -v r="$1" -v line="$2" 'BEGIN { split(line, f, " ");
    exit !(f[3] < 50 && f[1] >= 0.97 * r && f[5] >= 99.9) }'
}

# The highest fixed rate that holds (see the top of this file).
bench_latency_sustainable() { # oha url [oha args...]
  local oha=$1 secs="${BENCH_LATENCY_SEARCH_SECS:-${BENCH_LATENCY_SECS:-10}}" sat lo hi mid step
  shift
  sat=$(bench_oha "$oha" -z "${secs}s" --no-tui -c 64 --output-format json "$@" 2>/dev/null \
    | bench_oha_summary | cut -d' ' -f1)
  hi=$sat
  if bench_latency_holds "$hi" "$(bench_latency_run "$oha" "$secs" "$hi" "$@")"; then
    echo "$sat $hi"
    return
  fi
  lo=$((sat / 2))
  for step in 1 2 3 4; do
    mid=$(((lo + hi) / 2))
    if bench_latency_holds "$mid" "$(bench_latency_run "$oha" "$secs" "$mid" "$@")"; then
      lo=$mid
    else
      hi=$mid
    fi
  done
  # No step held: half of the closed loop was only assumed to; check it,
  # and halve it while it does not.
  if [ "$lo" -eq $((sat / 2)) ]; then
    for step in 1 2 3; do
      bench_latency_holds "$lo" "$(bench_latency_run "$oha" "$secs" "$lo" "$@")" && break
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
# steal" per line -> those six medians, then "min-max" of each percentile.
bench_latency_median() {
  python3 -c '
import statistics, sys
runs = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
cols = list(zip(*runs))
med = [statistics.median(c) for c in cols]
print("%.0f %.2f %.2f %.2f %.1f %.0f" % tuple(med),
      *("%.2f-%.2f" % (min(c), max(c)) for c in cols[1:4]))'
}

bench_latency_rows() { # backend label read|write oha url [oha args...]
  local backend=$1 label=$2 kind=$3 oha=$4 url=$5
  shift 5
  local secs="${BENCH_LATENCY_SECS:-10}" reps="${BENCH_LATENCY_REPS:-3}" found sat rate
  local healthz
  healthz="$(echo "$url" | sed -E 's#^(https?://[^/]+).*#\1#')/healthz"
  if [ "$backend" = postgres ]; then
    # What the rows before wrote is vacuumed and checkpointed first, so that
    # PostgreSQL's catching up with it (on keel's core) is not measured as
    # this row's: after POST /event, stream.isLive's own /healthz floor was
    # over both goals.
    bench_sql postgres "VACUUM ANALYZE"
    bench_sql postgres "CHECKPOINT"
  fi
  bench_reset_peak
  found=$(bench_latency_sustainable "$oha" "$@" "$url")
  read -r sat rate <<<"$found"
  echo "| $backend | $label: sustainable rate (p99 < 50 ms; closed loop at 64 connections: $sat/s) | $rate | - | - | - | - | $(bench_peak_rss) |"
  local pct asked i runs floors dbs db e f d goal marks before batched shapes shape=""
  local writer=""
  [ "$backend" = postgres ] && writer="${latency_writer:-}"
  for pct in 50 80; do
    asked=$(awk -v s="$rate" -v p="$pct" 'BEGIN {printf "%.0f", s*p/100}')
    runs="" floors="" dbs="" shapes=""
    bench_reset_peak
    marks=$(mktemp)
    for i in $(seq "$reps"); do
      [ -n "$writer" ] && before=$(bench_batches "$writer")
      runs+="$(latency_marks=$marks bench_latency_run "$oha" "$secs" "$asked" "$@" "$url")"$'\n'
      [ -n "$writer" ] && batched=$(bench_batches "$writer")
      floors+="$(bench_latency_run "$oha" "$secs" "$asked" "$healthz")"$'\n'
      if [ -n "$writer" ]; then
        db=$(bench_batch_floor "$before" "$batched" "$secs" "${latency_db_floor%% *}")
        shapes+="$(echo "$db" | head -n1)"$'\n'
        db=$(echo "$db" | tail -n +2)
      else
        db=$(bench_latency_db_floor "$backend" "$asked" "$secs")
      fi
      [ -n "$db" ] && dbs+="$db"$'\n'
    done
    [ -n "$shapes" ] && shape=$(echo -n "$shapes" | python3 -c '
import statistics, sys
r, b = zip(*(map(float, l.split()) for l in sys.stdin if l.strip()))
print("%.0f batches/s of %.0f events" % (statistics.median(r), statistics.median(b)))')
    e=$(echo -n "$runs" | bench_latency_median)
    f=$(echo -n "$floors" | bench_latency_median)
    d=""
    [ -n "$dbs" ] && d=$(echo -n "$dbs" | bench_latency_median)
    goal=$(awk -v k="$kind" -v p="$pct" -v e="$e" -v f="$f" -v d="${d:-0 0 0 0}" 'BEGIN {
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
      }}')
    read -r e_ach e50 e99 e999 e_ok e_steal e50r e99r e999r <<<"$e"
    read -r f_ach f50 f99 f999 _ f_steal f50r f99r f999r <<<"$f"
    echo "| $backend | $label at $pct % ($asked/s asked, median of $reps, ${e_ok} % 2xx, CPU 0 stolen ${e_steal} ms per run) | $e_ach | ${e50}ms ($e50r) | ${e99}ms ($e99r) | ${e999}ms ($e999r) | $goal | $(bench_peak_rss) |"
    echo "| $backend | floor: /healthz at $asked/s, same cores (CPU 0 stolen ${f_steal} ms per run) | $f_ach | ${f50}ms ($f50r) | ${f99}ms ($f99r) | ${f999}ms ($f999r) | - | - |"
    if [ -n "$d" ]; then
      read -r d_ach d50 d99 d999 _ _ d50r d99r d999r <<<"$d"
      if [ -n "$shape" ]; then
        echo "| $backend | database floor: keel's batches straight at the database, one at a time (median $shape) | $d_ach | ${d50}ms ($d50r) | ${d99}ms ($d99r) | ${d999}ms ($d999r) | - | - |"
      else
        echo "| $backend | database floor: the endpoint's statements straight at the database at $asked/s | $d_ach | ${d50}ms ($d50r) | ${d99}ms ($d99r) | ${d999}ms ($d999r) | - | - |"
      fi
    fi
    if [ -n "${BENCH_LATENCY_SLOW_MS:-}" ]; then
      echo "| $backend | where it went: $(python3 bench/latency_explain.py "$BENCH_DIR/stderr" "$marks" \
        "$url" "$BENCH_LATENCY_SLOW_MS") | - | - | - | - | - | - |"
    fi
    rm -f "$marks"
  done
}

# The baseline of the runtime lag probe: keel (and on PostgreSQL the
# server) idle on CPU 0 for BENCH_LATENCY_IDLE_SECS (default 30), nothing
# asked. A lag here is not keel's load: the hypervisor, the kernel or
# keel's own timers.
bench_latency_idle() { # backend
  local secs="${BENCH_LATENCY_IDLE_SECS:-30}" marks stolen
  marks=$(mktemp)
  stolen=$(bench_steal_ms)
  printf '%s ' "$(stat -c %s "$BENCH_DIR/stderr")" >"$marks"
  sleep "$secs"
  stat -c %s "$BENCH_DIR/stderr" >>"$marks"
  echo "| $1 | keel idle for ${secs} s (CPU 0 stolen $(($(bench_steal_ms) - stolen)) ms): $(python3 \
    bench/latency_explain.py "$BENCH_DIR/stderr" "$marks" /idle "$BENCH_LATENCY_SLOW_MS") | - | - | - | - | - | - |"
  rm -f "$marks"
}

bench_scenario() { # backend floor
  local oha
  if ! oha=$(bench_ensure_oha); then
    echo "| $1 | latency at fixed rates: skipped (oha could not be installed) | - | - | - | - | - | - |"
    return 0
  fi
  local cores="" slow=()
  [ -n "${BENCH_LATENCY_SLOW_MS:-}" ] &&
    slow=(KEEL_LOG_FORMAT=json "KEEL_SLOW_REQUEST_MS=$BENCH_LATENCY_SLOW_MS")
  if [ "${BENCH_LATENCY_PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ]; then
    cores="0-$(($(nproc) - 1))"
    # Started on its core, not moved there: a runtime sized for two cores
    # and then pinned to one ran two threads taking turns on it at the
    # scheduler's pace (docs/performance.md).
    BENCH_KEEL_CPUS=0 bench_relaunch_keel "${slow[@]}"
    if [ "$1" = postgres ]; then
      # Unpinned again however this scenario ends: bench/run calls it in
      # $(...), so this trap is that subshell's and leaves bench/run's own.
      # The cores are written in now: `cores` is gone when the trap runs.
      # shellcheck disable=SC2064
      trap "bench_pin_postgres $cores" EXIT
      bench_pin_postgres 0
      echo "| $1 | latency at fixed rates: keel and PostgreSQL on CPU 0, oha on CPU 1 | - | - | - | - | - | - |"
    else
      echo "| $1 | latency at fixed rates: keel on CPU 0, oha on CPU 1 | - | - | - | - | - | - |"
    fi
  elif [ ${#slow[@]} -gt 0 ]; then
    bench_relaunch_keel "${slow[@]}"
  fi
  if [ -n "${BENCH_LATENCY_SLOW_MS:-}" ]; then
    bench_latency_idle "$1"
  fi
  local token user event
  token=$(curl -fs -X POST "$(bench_url accounts /auth/register)" \
    -d "username=latency1&email=latency1@example.com&password=bench-Password-4-keel" \
    | grep -o '"accessToken":"[^"]*"' | cut -d'"' -f4)
  [ -n "$token" ] || token=$(curl -fs -X POST "$(bench_url accounts /auth/login)" \
    -d "login=latency1&password=bench-Password-4-keel" | grep -o '"accessToken":"[^"]*"' | cut -d'"' -f4)
  for i in 1 2 3 4 5; do
    curl -fs -o /dev/null -X POST -H "Authorization: Bearer $token" \
      -d "title=goal $i" "$(bench_url accounts /goals/weekly)"
  done
  [ "$1" = postgres ] && bench_sql postgres "SET client_min_messages = warning;
    DROP TABLE IF EXISTS bench_sessions;
    CREATE TABLE bench_sessions AS SELECT g AS n, s.id, s.user_id FROM accounts_sessions s
      JOIN accounts_users u ON u.id = s.user_id CROSS JOIN generate_series(1, 200) g
      WHERE u.username = 'latency1' AND s.revoked_at IS NULL ORDER BY s.created_at DESC LIMIT 200;
    CREATE UNIQUE INDEX ON bench_sessions (n); ANALYZE bench_sessions"
  # On SQLite keel serves the session and user from its session cache.
  latency_db_floor="account -"
  bench_latency_rows "$1" "accounts GET /account" read "$oha" \
    "$(bench_url accounts /account)" -H "Authorization: Bearer $token"
  latency_db_floor="goals goals"
  bench_latency_rows "$1" "accounts GET /goals/weekly (5 goals)" read "$oha" \
    "$(bench_url accounts /goals/weekly)" -H "Authorization: Bearer $token"

  user=$(bench_dev_user latency-history)
  bench_sql "$1" "DELETE FROM ua_events WHERE user_id = '$user'"
  if [ "$1" = postgres ]; then
    bench_seed_history "postgres://postgres@127.0.0.1:5432/$BENCH_PG_DB" "$user"
  else
    bench_seed_history "$BENCH_DIR/keel.db" "$user"
  fi
  latency_db_floor="history,user='$user' history,$user"
  bench_latency_rows "$1" "usage-alerts GET /history?offset=0 (1,000 events)" read "$oha" \
    "$(bench_url usage-alerts /history?offset=0)" -H "Authorization: Bearer latency-history"
  event='{"sessionId":"big","timestamp":"2026-11-22T10:00:00Z","model":"claude","inputTokens":120,"outputTokens":80,"cacheReadTokens":10,"cacheWriteTokens":5,"costUSD":0.0021}'
  # On PostgreSQL keel commits concurrent events in one transaction: its
  # floor is those transactions (the batches it committed in the run, their
  # rate and size) one at a time, as its one writer commits them.
  latency_db_floor="event-batch event" latency_writer="usage-alerts events"
  bench_latency_rows "$1" "usage-alerts POST /event (one user)" write "$oha" \
    "$(bench_url usage-alerts /event)" -m POST -T application/json -d "$event" -H "Authorization: Bearer latency-writer"
  latency_db_floor="- -" latency_writer=""
  bench_latency_rows "$1" "channel-api GET stream.isLive" read "$oha" \
    "$(bench_url channel-api /api/trpc/stream.isLive)"
  if [ -n "$cores" ] || [ ${#slow[@]} -gt 0 ]; then bench_relaunch_keel; fi
  return 0
}
