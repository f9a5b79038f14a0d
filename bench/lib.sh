# Helpers for bench/run and its scenarios.

BENCH_PORT_BASE="${BENCH_PORT_BASE:-18080}"
KEEL_PID=""
BENCH_DIR=""

bench_ensure_gnuplot() {
  command -v gnuplot >/dev/null && return 0
  echo "gnuplot is missing; installing it (apt-get)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnuplot-nox) >/dev/null \
    || keel_fail "could not install gnuplot"
}

bench_ensure_wrk() {
  command -v wrk >/dev/null && return 0
  echo "wrk is missing; installing it (apt-get)" >&2
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null || keel_fail "could not install wrk"
}

# The fake Expo (testkit's fake-expo) on its port, at `rate` notifications
# a second (0: no limit).
EXPO_PORT=$((BENCH_PORT_BASE + 30))
EXPO_PID=""

bench_fake_expo() { # rate (0 = none)
  [ -n "$EXPO_PID" ] && kill "$EXPO_PID" 2>/dev/null && wait "$EXPO_PID" 2>/dev/null
  "$FAKE_EXPO_BIN" "127.0.0.1:$EXPO_PORT" "$1" >/dev/null 2>&1 &
  EXPO_PID=$!
  for _ in $(seq 1 50); do
    curl -fs "http://127.0.0.1:$EXPO_PORT/_fake/stats" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  keel_fail "the fake Expo did not start"
}

bench_url() { # service path
  case "$1" in
    accounts) echo "http://127.0.0.1:$((BENCH_PORT_BASE + 1))$2" ;;
    usage-alerts) echo "http://127.0.0.1:$((BENCH_PORT_BASE + 2))$2" ;;
    channel-web) echo "http://127.0.0.1:$((BENCH_PORT_BASE + 3))$2" ;;
    channel-api) echo "http://127.0.0.1:$((BENCH_PORT_BASE + 4))$2" ;;
    svc) echo "http://127.0.0.1:$((BENCH_PORT_BASE + 5))$2" ;;
  esac
}

bench_start_keel() { # backend
  if curl -fs "$(bench_url accounts /healthz)" >/dev/null 2>&1; then
    keel_fail "something already listens on $(bench_url accounts ''); stop it first"
  fi
  BENCH_DIR=$(mktemp -d)
  BENCH_DB_ENV=()
  if [ "$1" = postgres ]; then
    local name="keel_bench_$$"
    psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $name" -c "CREATE DATABASE $name" >/dev/null
    BENCH_PG_DB="$name"
    BENCH_DB_ENV=(DATABASE_URL="postgres://postgres@127.0.0.1:5432/$name?sslmode=disable" KEEL_DB_MAX_CONNECTIONS=16)
  fi
  trap bench_stop_keel EXIT
  bench_launch_keel
  # Idle: every service up and settled (start-up allocations returned),
  # nothing asked yet.
  sleep 5
  bench_rss > "$BENCH_DIR/idle_rss"
}

# Starts keel on the prepared data directory and database, with extra
# NAME=value settings (on the cores BENCH_KEEL_CPUS names, if set: its
# runtime then starts one thread per core it has), and waits until it
# answers. The load comes from one address, so accounts' per-address
# sign-in and registration limits are off.
bench_launch_keel() { # [NAME=value...]
  env -i PATH="$PATH" HOME="$HOME" RUST_LOG=warn \
    KEEL_DATA_DIR="$BENCH_DIR" \
    KEEL_ACCOUNTS_ADDR="127.0.0.1:$((BENCH_PORT_BASE + 1))" \
    KEEL_USAGE_ALERTS_ADDR="127.0.0.1:$((BENCH_PORT_BASE + 2))" \
    KEEL_CHANNEL_WEB_ADDR="127.0.0.1:$((BENCH_PORT_BASE + 3))" \
    KEEL_CHANNEL_API_ADDR="127.0.0.1:$((BENCH_PORT_BASE + 4))" \
    KEEL_SVC_ADDR="127.0.0.1:$((BENCH_PORT_BASE + 5))" \
    KEEL_CONSOLE_ADDR="127.0.0.1:$((BENCH_PORT_BASE + 6))" \
    KEEL_METRICS_ADDR="127.0.0.1:$((BENCH_PORT_BASE + 9))" \
    KEEL_APPCHECK_JWKS_URL="http://127.0.0.1:$((BENCH_PORT_BASE + 20))/jwks.json" \
    KEEL_EXPO_URL="http://127.0.0.1:$((BENCH_PORT_BASE + 30))" \
    KEEL_EXPO_RECEIPT_DELAY_SECS=86400 \
    KEEL_STREAM_URL="http://127.0.0.1:9" KEEL_7TV_URL="http://127.0.0.1:9" \
    KEEL_BTTV_URL="http://127.0.0.1:9" KEEL_FFZ_URL="http://127.0.0.1:9" \
    KEEL_APPLE_JWKS_URL="http://127.0.0.1:9/jwks" \
    KEEL_ACCOUNTS_LOGINS_PER_MINUTE=0 KEEL_ACCOUNTS_REGISTRATIONS_PER_MINUTE=0 \
    "${BENCH_DB_ENV[@]}" ${BENCH_KEEL_ENV:-} "$@" \
    ${BENCH_KEEL_CPUS:+taskset -c "$BENCH_KEEL_CPUS"} \
    "$KEEL_BIN" serve >>"$BENCH_DIR/stdout" 2>>"$BENCH_DIR/stderr" &
  KEEL_PID=$!
  # Scenarios run in subshells: the pid file is what the others go by.
  echo "$KEEL_PID" > "$BENCH_DIR/keel.pid"
  # Time to every listener healthy, polled every 10 ms.
  local started now service ok
  started=$(date +%s%N)
  for _ in $(seq 1 1000); do
    ok=1
    for service in accounts usage-alerts channel-web channel-api svc; do
      curl -fs -o /dev/null "$(bench_url "$service" /healthz)" 2>/dev/null || { ok=0; break; }
    done
    if [ "$ok" = 1 ]; then
      now=$(date +%s%N)
      echo $(((now - started) / 1000000)) > "$BENCH_DIR/last_start_ms"
      [ -f "$BENCH_DIR/first_start_ms" ] || cp "$BENCH_DIR/last_start_ms" "$BENCH_DIR/first_start_ms"
      return 0
    fi
    sleep 0.01
  done
  cat "$BENCH_DIR/stderr" >&2
  keel_fail "keel did not start"
}

# Resident memory now (MiB) of the running keel.
bench_rss() { awk '/VmRSS/ {printf "%.1f MiB", $2/1024}' "/proc/$(bench_keel_pid)/status"; }

# Stops keel (SIGTERM) and starts it again on the same data, with settings.
bench_relaunch_keel() { # [NAME=value...]
  bench_term_keel
  bench_launch_keel "$@"
}

# SIGTERM to keel, then waits until it is gone (it may not be our child).
bench_term_keel() {
  local pid
  pid=$(cat "$BENCH_DIR/keel.pid" 2>/dev/null || echo "$KEEL_PID")
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  # No `wait`: in a scenario's subshell bash would wait for any child.
  # Gone, or a zombie its parent has yet to reap, is done.
  for _ in $(seq 1 300); do
    case "$(ps -o stat= -p "$pid" 2>/dev/null)" in
      "" | Z*) return 0 ;;
    esac
    sleep 0.1
  done
}

# Sets BENCH_APPCHECK_TOKEN to an App Check token for project 123456, app
# 1:123456:ios:bench, serves its JWKS locally (BENCH_AUX_PID), and configures
# svc to accept it.
bench_appcheck() {
  local dir="$BENCH_DIR/appcheck"
  mkdir -p "$dir"
  [ -f "$dir/key.pem" ] || openssl genrsa -out "$dir/key.pem" 2048 2>/dev/null
  BENCH_APPCHECK_TOKEN=$(python3 bench/appcheck_token.py "$dir/key.pem" "$dir" 123456 "1:123456:ios:bench")
  if [ -z "${BENCH_AUX_PID:-}" ]; then
    python3 -m http.server "$((BENCH_PORT_BASE + 20))" --bind 127.0.0.1 --directory "$dir" >/dev/null 2>&1 &
    BENCH_AUX_PID=$!
  fi
  bench_keel_cli svc settings set appcheck_project_number 123456 >/dev/null
  bench_keel_cli svc settings set appcheck_app_ids "1:123456:ios:bench" >/dev/null
}

# Runs the keel CLI against the running keel's database.
bench_keel_cli() {
  local db_env=()
  [ -n "${BENCH_PG_DB:-}" ] && db_env=(DATABASE_URL="postgres://postgres@127.0.0.1:5432/$BENCH_PG_DB?sslmode=disable")
  env -i PATH="$PATH" HOME="$HOME" RUST_LOG=error KEEL_DATA_DIR="$BENCH_DIR" "${db_env[@]}" "$KEEL_BIN" "$@"
}

bench_stop_keel() {
  [ -n "${BENCH_AUX_PID:-}" ] && kill "$BENCH_AUX_PID" 2>/dev/null
  BENCH_AUX_PID=""
  [ -n "$KEEL_PID" ] || return 0
  bench_term_keel
  if [ -n "${BENCH_PG_DB:-}" ]; then
    psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $BENCH_PG_DB" >/dev/null || true
    BENCH_PG_DB=""
  fi
  rm -rf "$BENCH_DIR"
  KEEL_PID=""
}

# Resets the process's peak RSS so each scenario reports its own.
bench_keel_pid() { cat "$BENCH_DIR/keel.pid" 2>/dev/null || echo "$KEEL_PID"; }
bench_reset_peak() { echo 5 > "/proc/$(bench_keel_pid)/clear_refs" 2>/dev/null || true; }
bench_peak_rss() { awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$(bench_keel_pid)/status"; }

# bench_wrk NAME URL [LUA] -> "req/s p50 p99 p99.9" ; prints wrk's report
# on stderr. LUA runs inside bench/lua/percentiles.lua, which adds p99.9.
# Then measures /healthz on the same listener at once (BENCH_ADJACENT=0 to
# skip): this machine's speed drifts by a quarter within minutes, so each
# row's "% of /healthz" is taken against the /healthz measured beside it.
bench_wrk() {
  local url="$2"
  local report
  report=$(BENCH_LUA="${3:-}" wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency \
    -s bench/lua/percentiles.lua "$url")
  echo "$report" >&2
  local errors
  errors=$(echo "$report" | awk '/Non-2xx or 3xx responses/ {print $NF}')
  [ -n "$errors" ] && echo "warning: $errors non-2xx responses in $1" >&2
  rm -f "$BENCH_DIR/adjacent_healthz"
  if [ "${BENCH_ADJACENT:-1}" = 1 ] && [[ "$url" =~ ^(http://[^/]+) ]]; then
    wrk -t2 -c"$CONNECTIONS" -d"$DURATION" "${BASH_REMATCH[1]}/healthz" \
      | awk '/Requests\/sec/ {printf "%.0f", $2}' > "$BENCH_DIR/adjacent_healthz"
  fi
  echo "$report" | awk '
    /Requests\/sec/ {rps=$2}
    $1=="50%" {p50=$2}
    $1=="99%" {p99=$2}
    $1=="p99.9" {p999=$2}
    END {printf "%.0f %s %s %s", rps, p50, p99, p999}'
}

# bench_row BACKEND NAME FLOOR "rps p50 p99 p99.9" [FLOOR_NAME]
# Against /healthz (no FLOOR_NAME), the /healthz measured beside the row is
# used when there is one (see bench_wrk), and shown.
bench_row() {
  local rps p50 p99 p999 ratio floor=$3 adjacent=""
  read -r rps p50 p99 p999 <<<"$4"
  if [ -z "${5:-}" ] && [ -s "$BENCH_DIR/adjacent_healthz" ]; then
    floor=$(cat "$BENCH_DIR/adjacent_healthz")
    adjacent=" ($floor beside it)"
  fi
  if [ -n "$floor" ] && [ "$floor" != 0 ]; then
    ratio=$(awk -v a="$rps" -v b="$floor" -v n="${5:-/healthz}" 'BEGIN {printf "%.0f%% of %s", 100*a/b, n}')
    ratio="$ratio$adjacent"
  else
    ratio="(floor)"
  fi
  echo "| $1 | $2 | $rps | $p50 | $p99 | ${p999:--} | $ratio | $(bench_peak_rss) |"
}

# A floor straight at PostgreSQL: a pgbench script (bench/sql/NAME.pgbench,
# 16 clients on 2 threads) -> transactions/s. Extra arguments go to pgbench.
bench_pgbench() { # name [pgbench args...]
  local name=$1; shift
  pgbench -n -h 127.0.0.1 -U postgres "$@" -f "bench/sql/$name.pgbench" -c 16 -j 2 -T "${DURATION%s}" "$BENCH_PG_DB" 2>/dev/null \
    | awk '/^tps/ {printf "%.0f", $3}'
}

# A floor straight at SQLite (crates/testkit/src/bin/sqlite-floor.rs) -> ops/s.
bench_sqlite_floor() { # scenario [arg]
  "$SQLITE_FLOOR_BIN" "$BENCH_DIR/keel.db" "${DURATION%s}" "$@"
}

# A DB floor for BACKEND: pgbench NAME on PostgreSQL, sqlite-floor SCENARIO
# on SQLite.
bench_db_floor() { # backend pgbench-name sqlite-scenario [sqlite arg]
  if [ "$1" = postgres ]; then bench_pgbench "$2"; else bench_sqlite_floor "${@:3}"; fi
}

# The floor row and the endpoint's row against it.
bench_floor_rows() { # backend label floor "rps p50 p99 p99.9"
  echo "| $1 | $2 DB floor | $3 | - | - | - | (floor) | - |"
  bench_row "$1" "$2 vs its DB floor" "$3" "$4" "DB floor"
}

# The dev-mode user id keel derives from a bearer token.
bench_dev_user() { echo "dev-$(printf %s "$1" | sha256sum | cut -c1-32)"; }

# bench_sql BACKEND SQL: runs SQL on keel's database.
bench_sql() {
  if [ "$1" = postgres ]; then
    psql -q -h 127.0.0.1 -U postgres -d "$BENCH_PG_DB" -c "$2" >/dev/null
  else
    python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA busy_timeout=10000"); c.executescript(sys.argv[2]); c.commit()' "$BENCH_DIR/keel.db" "$2"
  fi
}

# 1,000 events of USER in DB (a URL or an SQLite file).
bench_seed_history() { # db user
  if [[ "$1" == postgres* ]]; then
    psql -q "$1" -c "INSERT INTO ua_events (id, user_id, session_id, timestamp, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at)
      SELECT gen_random_uuid()::text, '$2', 'seed', '2026-01-01T00:00:00Z', 'claude', 1, 1, 0, 0, 0.000001, now() - interval '1 day' FROM generate_series(1, 1000)" >/dev/null
  else
    python3 - "$1" "$2" <<'PY'
import sqlite3, sys, uuid
db = sqlite3.connect(sys.argv[1]); db.execute("PRAGMA busy_timeout=10000")
rows = ((str(uuid.uuid4()), sys.argv[2], "seed", "2026-01-01T00:00:00Z", "claude", 1, 1, 0, 0, 0.000001, "2026-01-01T00:00:00+00:00") for _ in range(1000))
db.executemany("INSERT INTO ua_events (id, user_id, session_id, timestamp, model, input_tokens, output_tokens,"
               " cache_read_tokens, cache_write_tokens, cost_usd, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
db.commit()
PY
  fi
}

# svc push devices straight into the table (each active, half iOS).
bench_seed_devices() { # backend count
  if [ "$1" = postgres ]; then
    bench_sql postgres "INSERT INTO svc_push_devices (push_token, device_type, app_version, locale, timezone, active, app_id, registered_at, updated_at)
      SELECT 'ExponentPushToken[bench' || lpad(i::text, 7, '0') || ']', CASE WHEN i % 2 = 0 THEN 'ios' ELSE 'android' END,
             '1.0.0', 'en-US', 'UTC', true, 'seed', now(), now() FROM generate_series(1, $2) i"
  else
    python3 - "$BENCH_DIR/keel.db" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.execute("PRAGMA busy_timeout=10000")
now = "2026-01-01T00:00:00+00:00"
rows = ((f"ExponentPushToken[bench{i:07d}]", "ios" if i % 2 == 0 else "android", "1.0.0", "en-US", "UTC", 1, "seed", now, now)
        for i in range(1, int(sys.argv[2]) + 1))
db.executemany("INSERT INTO svc_push_devices (push_token, device_type, app_version, locale, timezone, active, app_id,"
               " registered_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)", rows)
db.commit()
PY
  fi
}

# Sends to every device and waits until keel has handed all to Expo and
# says so; prints "seconds messages/s exact" (exact: every device exactly
# once). While the messages go out it watches the fake Expo's count
# (GET /_fake/notifications), not keel's GET /send/{id}: that counts every
# message of the send, a pass over 100,000 rows each time, which asked ten
# times a second competed with the send it measured. Then it asks keel
# until the send is `sent`.
bench_push_send() { # auth
  local start id status end stats
  start=$(date +%s.%N)
  id=$(curl -fsS -u "$1" -H 'Content-Type: application/json' \
    -d '{"title":"Bench","body":"Hello from keel","data":{"bench":true}}' "$(bench_url svc /svc/v1/send)" | jq -r .id)
  echo "$id" > "$BENCH_DIR/last_send_id"
  local seen
  for _ in $(seq 1 20000); do
    seen=$(curl -fsS "http://127.0.0.1:$EXPO_PORT/_fake/notifications")
    [ "$seen" -ge "$PUSH_DEVICES" ] && break
    sleep 0.05
  done
  for _ in $(seq 1 6000); do
    status=$(curl -fsS -u "$1" "$(bench_url svc "/svc/v1/send/$id")" | jq -r .status)
    [ "$status" = sent ] && break
    sleep 0.01
  done
  end=$(date +%s.%N)
  stats=$(curl -fsS "http://127.0.0.1:$EXPO_PORT/_fake/stats")
  echo "fake Expo: $stats" >&2
  local exact
  exact=$(echo "$stats" | jq --argjson n "$PUSH_DEVICES" \
    'if .notifications == $n and .distinct_tokens == $n and .repeated_tokens == 0 and .rate_limited == 0 then "yes" else "NO" end' -r)
  awk -v s="$start" -v e="$end" -v n="$PUSH_DEVICES" -v x="$exact" 'BEGIN {printf "%.1f %.0f %s", e-s, n/(e-s), x}'
}

# 200 registered accounts users (bench1..bench200); prints the file of
# their access tokens.
bench_accounts_tokens() {
  local file="$BENCH_DIR/accounts-tokens.txt"
  [ -s "$file" ] || bench_accounts_answers "$file" /auth/register \
    "username=bench{}&email=bench{}@example.com&password=bench-Password-4-keel"
  echo "$file"
}

# POSTs BODY (form, {} the user's number) to PATH of accounts for users
# 1..200 and writes the access tokens answered to FILE.
bench_accounts_answers() { # file path body
  local dir="$1.d"
  mkdir -p "$dir"
  # One file per response: parallel writers to one pipe would interleave.
  seq 1 200 | xargs -P 8 -I{} curl -fs -o "$dir/{}.json" -X POST "$(bench_url accounts "$2")" -d "$3"
  grep -ho '"accessToken":"[^"]*"' "$dir"/*.json | cut -d'"' -f4 > "$1"
  [ "$(wc -l < "$1")" -ge 200 ] || keel_fail "accounts $2 did not answer the benchmark users"
}


# Draws the 70-scale curves (SVG and PNG): for each backend and cost, the cost per unit
# of work at each size against the first size (1.0: grows linearly with the
# work, or stays flat for one request).
bench_draw_scale() { # tsv svg
  bench_ensure_gnuplot
  local data="${1%.tsv}.dat"
  awk -F'\t' '
    { key = $1 " " $2
      if (!(key in first)) { first[key] = $4; size[key] = $3; order[++n] = key }
      if ($5 == "rps") r = first[key] / $4
      else if ($5 == "s-flat") r = $4 / first[key]
      else r = ($4 / $3) / (first[key] / size[key])
      pts[key] = pts[key] sprintf("%g %.3f\n", $3 / size[key], r) }
    END { for (i = 1; i <= n; i++) printf "\"%s\"\n%s\n\n", order[i], pts[order[i]] }' "$1" > "$data"
  local term out
  for term in svg png; do
    out="${2%.svg}.$term"
    [ "$term" = png ] && term="pngcairo"
    gnuplot <<GP 2>/dev/null || echo "warning: gnuplot could not draw the scale curves" >&2
set terminal $term size 1000,600
set output "$out"
set title "keel: cost per unit of work as the data grows (1.0: flat)"
set logscale x
set xlabel "data, times the first size"
set ylabel "cost per unit of work / at the first size"
set key outside right
plot for [i=0:*] "$data" index i using 1:2 with linespoints title columnheader(1)
GP
  done
  echo "scale curves: $2 and ${2%.svg}.png" >&2
}

# Users beyond the registered ones, straight into the table: each a copy of
# bench1 (the same password hash) under its own id, name and email.
bench_scale_seed_users() { # backend from to
  local cols="id, username, username_key, email, email_key, slug, role, password_hash, two_factor,
    totp_secret, totp_pending, totp_last_step, email_verified, is_banned, streamer_mode,
    notify_weekly_goals, weekly_mail_week, revision, created_at, updated_at"
  local copy="'scale' || s.i, 'scale' || s.i, 'scale' || s.i || '@example.com', 'scale' || s.i || '@example.com',
    'scale' || s.i, t.role, t.password_hash, t.two_factor, NULL, NULL, 0, t.email_verified, false, false,
    t.notify_weekly_goals, NULL, 0, t.created_at, t.updated_at FROM accounts_users t"
  if [ "$1" = postgres ]; then
    bench_sql postgres "INSERT INTO accounts_users ($cols) SELECT 'e' || lpad(to_hex(s.i), 23, '0'), $copy
      CROSS JOIN generate_series($2, $3) AS s(i) WHERE t.username_key = 'bench1'; ANALYZE accounts_users"
  else
    bench_sql sqlite "WITH RECURSIVE s(i) AS (SELECT $2 UNION ALL SELECT i + 1 FROM s WHERE i < $3)
      INSERT INTO accounts_users ($cols) SELECT printf('%024x', s.i + 281474976710656), $copy
      CROSS JOIN s WHERE t.username_key = 'bench1'; ANALYZE"
  fi
}
