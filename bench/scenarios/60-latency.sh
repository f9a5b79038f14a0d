# Latency as users feel it, beside the HTTP floor. A closed loop at
# saturation (the other scenarios) measures queueing; here each endpoint is
# driven open-loop at fixed rates with oha (`-q` with
# `--latency-correction`: a request that should have been sent during a
# stall is timed from when it should have been sent, so stalls are not
# hidden by coordinated omission).
#
# 1. The sustainable rate: the highest fixed rate at which p99 stays under
#    50 ms and oha achieves at least 97 % of it, in two runs in a row
#    (bench_latency_sustains). A short search: oha's closed loop (64
#    connections) gives an upper bound, then four steps of bisection down
#    to half of it (a lower bound that is itself checked, and halved again
#    while it does not hold). Each run is as long as a row's
#    (BENCH_LATENCY_SEARCH_SECS, default BENCH_LATENCY_SECS, after the same
#    warm-up): a rate that holds for 5 s can fall behind in 10.
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
#    A run (a row's, a floor's, a search step's or the search's closed
#    loop) that lost more than 100 ms of CPU 0 so is made again, at most
#    twice, and the least stolen one kept (bench_steal_guard).
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
# 6. Every run also gives how busy CPU 0 and CPU 1 were (/proc/stat). A
#    stall of s ms on a core busy a fraction u of the time takes about
#    s/(1-u) to drain: an 80 % row's tail follows its core's load. Before
#    the rows, the load floor (/healthz at 80 % of its own sustainable
#    rate; BENCH_LATENCY_LOAD_FLOOR=0 skips it: over 25 ms, it marks every
#    80 % miss `load floor over`); after a row that missed with its floors
#    under the goal, /healthz at the rate that keeps CPU 0 as busy as the
#    row did (bench_latency_same_load).
#
# The generator and the server do not share a core: keel is started on
# CPU 0 (and on PostgreSQL the database's processes are pinned there) and
# oha runs on CPU 1 (taskset; BENCH_LATENCY_PIN=0 to leave both free). One
# user per endpoint (oha sends one set of headers): accounts GET /account and GET
# /goals/weekly (5 goals), usage-alerts GET /history?offset=0 (1,000
# events) and POST /event, and channel-api stream.isLive.

# shellcheck source=bench/latency.sh
. bench/latency.sh


bench_latency_rows() { # backend label read|write oha url [oha args...]
  local backend=$1 label=$2 kind=$3 oha=$4 url=$5
  shift 5
  local secs="${BENCH_LATENCY_SECS:-10}" reps="${BENCH_LATENCY_REPS:-3}" found sat rate again
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
  again=$(bench_steal_retries)
  found=$(bench_latency_sustainable "$oha" "$@" "$url")
  read -r sat rate <<<"$found"
  echo "| $backend | $label: sustainable rate (p99 < 50 ms; closed loop at 64 connections: $sat/s$(bench_steal_note "$again")) | $rate | - | - | - | - | $(bench_peak_rss) |"
  local pct asked i runs floors dbs db e f d goal marks before batched shapes shape="" same
  local writer=""
  [ "$backend" = postgres ] && writer="${latency_writer:-}"
  for pct in 50 80; do
    asked=$(awk -v s="$rate" -v p="$pct" 'BEGIN {printf "%.0f", s*p/100}')
    runs="" floors="" dbs="" shapes=""
    bench_reset_peak
    marks=$(mktemp) again=$(bench_steal_retries)
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
    goal=$(bench_latency_goal "$kind" "$pct" "$e" "$f" "${d:-0 0 0 0}")
    same=""
    if [[ $goal == *MISSED ]] && [ -n "${load_floor:-}" ]; then
      [ "$pct" = 80 ] && goal+=$(bench_latency_load_verdict "$load_floor")
      same=$(bench_latency_same_load "$backend" "$oha" "$healthz" "$e" "$f" "$kind" "$pct")
      goal+=$(echo "$same" | sed -n 2p)
    fi
    read -r e_ach e50 e99 e999 e_ok e_steal e_cpu0 e_cpu1 e50r e99r e999r <<<"$e"
    echo "| $backend | $label at $pct % ($asked/s asked, median of $reps$(bench_steal_note "$again"), ${e_ok} % 2xx, CPU 0 ${e_cpu0} % busy and ${e_steal} ms stolen per run, CPU 1 ${e_cpu1} % busy) | $e_ach | ${e50}ms ($e50r) | ${e99}ms ($e99r) | ${e999}ms ($e999r) | $goal | $(bench_peak_rss) |"
    bench_latency_floor_row "$backend" "floor: /healthz at $asked/s, same cores" "$f"
    if [ -n "$d" ]; then
      read -r d_ach d50 d99 d999 _ _ d50r d99r d999r <<<"$d"
      if [ -n "$shape" ]; then
        echo "| $backend | database floor: keel's batches straight at the database, one at a time (median $shape) | $d_ach | ${d50}ms ($d50r) | ${d99}ms ($d99r) | ${d999}ms ($d999r) | - | - |"
      else
        echo "| $backend | database floor: the endpoint's statements straight at the database at $asked/s | $d_ach | ${d50}ms ($d50r) | ${d99}ms ($d99r) | ${d999}ms ($d999r) | - | - |"
      fi
    fi
    [ -n "$same" ] && echo "$same" | head -n1
    if [ -n "${BENCH_LATENCY_SLOW_MS:-}" ]; then
      echo "| $backend | where it went: $(python3 bench/latency_explain.py "$BENCH_DIR/stderr" "$marks" \
        "$url" "$BENCH_LATENCY_SLOW_MS") | - | - | - | - | - | - |"
    fi
    rm -f "$marks"
  done
}

# The load floor: keel's /healthz at 80 % of its own sustainable rate on
# the same cores, BENCH_LATENCY_REPS times: what the machine's tail is
# with keel's core that busy and nothing behind the answers. Sets
# load_floor ("achieved cpu0% sustainable p99.9") for the verdicts.
bench_latency_load_floor() { # backend oha
  local url rate sat asked m again
  url=$(bench_url accounts /healthz)
  again=$(bench_steal_retries)
  read -r sat rate <<<"$(bench_latency_sustainable "$2" "$url")"
  asked=$((rate * 80 / 100))
  m=$(bench_latency_reps "$2" "$asked" "$url")
  bench_latency_floor_row "$1" "load floor: /healthz at 80 % of its own sustainable rate ($rate/s; closed loop $sat/s), $asked/s asked, median of ${BENCH_LATENCY_REPS:-3}$(bench_steal_note "$again")" "$m"
  load_floor="$(echo "$m" | cut -d' ' -f1,7) $rate $(echo "$m" | cut -d' ' -f4)"
}

# A row that missed with its floors under the goal: the floor at the same
# load. A stall of s ms on a core busy a fraction u of the time
# takes about s/(1-u) to drain, so the tail at a given load is the
# machine's stalls times that, whatever the endpoint. /healthz is run at
# the rate that keeps CPU 0 as busy as the row's runs did (from the two
# /healthz runs already made), BENCH_LATENCY_REPS times. Prints its row,
# then the verdict's addition (empty unless that floor, with CPU 0 at
# most 2 points busier than the row had it, accounts for the miss: at
# 80 % its p99.9 over 25 ms too; at 50 %, its p99 over the row's limit
# where the row's was, and the row's within 3x of it where the row was
# not within 3x of the floor at its rate).
bench_latency_same_load() { # backend oha healthz-url e f read|write pct
  local rate m p99 p999 cpu0
  rate=$(bench_latency_same_load_rate "$4" "$5" "$load_floor")
  m=$(bench_latency_reps "$2" "$rate" "$3")
  bench_latency_floor_row "$1" "floor at the same load: /healthz at $rate/s, CPU 0 as busy as the row's runs" "$m"
  read -r _ _ p99 p999 _ _ cpu0 _ <<<"$m"
  awk -v e="$4" -v f="$5" -v k="$6" -v p="$7" -v p99="$p99" -v p999="$p999" -v busy="$cpu0" 'BEGIN {
    split(e, a, " "); split(f, b, " ")
    if (busy - 2 > a[7]) exit
    if (p == 80) {
      if (p999 > 25) printf " (floor at the same load over: /healthz at CPU 0 %d %% busy, p99.9 %.2f)", busy, p999
      exit
    }
    # At 50 %: each part of the goal the row missed, the floor at its load
    # misses too (the absolute p99) or keeps the row within 3x (the ratio).
    lim = (k == "read") ? 5 : 15
    if (a[3] > lim && p99 <= lim) exit
    if (a[3] > 3 * b[3] && a[3] > 3 * p99) exit
    if (a[3] > lim) printf " (floor at the same load over: /healthz at CPU 0 %d %% busy, p99 %.2f)", busy, p99
    else printf " (within 3x the floor at the same load: /healthz at CPU 0 %d %% busy, p99 %.2f)", busy, p99 }'
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
  load_floor=""
  [ "${BENCH_LATENCY_LOAD_FLOOR:-1}" = 1 ] && bench_latency_load_floor "$1" "$oha"
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
