# Latency as users feel it. A closed loop at saturation (the other
# scenarios) measures queueing; here each endpoint first gets its saturated
# rate, then an open loop at 25 %, 50 % and 80 % of it for
# BENCH_LATENCY_SECS (default 10) with oha (`-q` with
# `--latency-correction`: a request that should have been sent during a
# stall is timed from when it should have been sent, so stalls are not
# hidden by coordinated omission). The generator and the server do not
# share a core: keel's threads (and on PostgreSQL the database's processes,
# which would otherwise take the generator's core) are pinned to CPU 0 and
# oha runs on CPU 1 (taskset; BENCH_LATENCY_PIN=0 to leave both free), and
# the saturated rate is oha's own at 64 connections, so each load is a
# share of what keel and its database answer on one core with this
# generator. Rows: the load asked and achieved, p50,
# p99, p99.9, and the goal: reads p99 <= 5 ms and writes p99 <= 15 ms at
# 50 %, p99.9 <= 25 ms at 80 %. One user per endpoint (oha sends one set of
# headers): accounts GET /account and GET /goals/weekly (5 goals),
# usage-alerts GET /history?offset=0 (1,000 events) and POST /event, and
# channel-api stream.isLive.

bench_ensure_oha() {
  local root="${CARGO_TARGET_DIR:-target}/bench-tools" version=1.16.0
  if [ ! -x "$root/bin/oha" ] || ! "$root/bin/oha" --version | grep -q "$version"; then
    echo "oha $version is missing; installing it (cargo install --locked)" >&2
    cargo install --quiet --locked --root "$root" oha --version "$version" >&2 || return 1
  fi
  echo "$root/bin/oha"
}

# oha's JSON report -> "achieved p50 p99 p99.9 success%" (milliseconds).
bench_oha_summary() {
  python3 -c '
import json, sys
r = json.load(sys.stdin)
p = r["latencyPercentiles"]
ms = lambda k: "%.2f" % (1000 * (p.get(k) or 0))
print("%.0f" % r["summary"]["requestsPerSec"], ms("p50"), ms("p99"), ms("p99.9"),
      "%.1f" % (100 * r["summary"]["successRate"]))'
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

bench_latency_rows() { # backend label read|write oha url [oha args...]
  local backend=$1 label=$2 kind=$3 oha=$4 url=$5
  shift 5
  local secs="${BENCH_LATENCY_SECS:-10}" sat sat_row
  bench_reset_peak
  sat_row=$(bench_oha "$oha" -z "${secs}s" --no-tui -c 64 --output-format json "$@" "$url" 2>/dev/null | bench_oha_summary)
  read -r sat _ <<<"$sat_row"
  echo "| $backend | $label saturated (oha, 64 connections) | $sat | - | - | - | - | $(bench_peak_rss) |"
  local pct rate out achieved p50 p99 p999 ok goal
  for pct in 25 50 80; do
    rate=$(awk -v s="$sat" -v p="$pct" 'BEGIN {printf "%.0f", s*p/100}')
    bench_reset_peak
    out=$(bench_oha "$oha" -z "${secs}s" -q "$rate" --latency-correction --no-tui -c 64 \
      --output-format json "$@" "$url" 2>/dev/null | bench_oha_summary)
    read -r achieved p50 p99 p999 ok <<<"$out"
    goal=$(awk -v k="$kind" -v p="$pct" -v p99="$p99" -v p999="$p999" 'BEGIN {
      if (p == 50) { lim = (k == "read") ? 5 : 15; printf "p99 <= %d ms: %s", lim, (p99 <= lim) ? "met" : "MISSED" }
      else if (p == 80) { printf "p99.9 <= 25 ms: %s", (p999 <= 25) ? "met" : "MISSED" }
      else printf "-" }')
    echo "| $backend | $label at $pct % ($rate/s asked, ${ok} % 2xx) | $achieved | ${p50}ms | ${p99}ms | ${p999}ms | $goal | $(bench_peak_rss) |"
  done
}

bench_scenario() { # backend floor
  local oha
  if ! oha=$(bench_ensure_oha); then
    echo "| $1 | latency at fixed rates: skipped (oha could not be installed) | - | - | - | - | - | - |"
    return 0
  fi
  local cores=""
  if [ "${BENCH_LATENCY_PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ]; then
    cores="0-$(($(nproc) - 1))"
    taskset -a -p -c 0 "$(bench_keel_pid)" >/dev/null
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
  bench_latency_rows "$1" "accounts GET /account" read "$oha" \
    "$(bench_url accounts /account)" -H "Authorization: Bearer $token"
  bench_latency_rows "$1" "accounts GET /goals/weekly (5 goals)" read "$oha" \
    "$(bench_url accounts /goals/weekly)" -H "Authorization: Bearer $token"

  user=$(bench_dev_user latency-history)
  bench_sql "$1" "DELETE FROM ua_events WHERE user_id = '$user'"
  if [ "$1" = postgres ]; then
    bench_seed_history "postgres://postgres@127.0.0.1:5432/$BENCH_PG_DB" "$user"
  else
    bench_seed_history "$BENCH_DIR/keel.db" "$user"
  fi
  bench_latency_rows "$1" "usage-alerts GET /history?offset=0 (1,000 events)" read "$oha" \
    "$(bench_url usage-alerts /history?offset=0)" -H "Authorization: Bearer latency-history"
  event='{"sessionId":"big","timestamp":"2026-11-22T10:00:00Z","model":"claude","inputTokens":120,"outputTokens":80,"cacheReadTokens":10,"cacheWriteTokens":5,"costUSD":0.0021}'
  bench_latency_rows "$1" "usage-alerts POST /event (one user)" write "$oha" \
    "$(bench_url usage-alerts /event)" -m POST -T application/json -d "$event" -H "Authorization: Bearer latency-writer"
  bench_latency_rows "$1" "channel-api GET stream.isLive" read "$oha" \
    "$(bench_url channel-api /api/trpc/stream.isLive)"
  [ -n "$cores" ] && taskset -a -p -c "$cores" "$(bench_keel_pid)" >/dev/null
  return 0
}
