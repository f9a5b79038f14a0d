# usage-alerts: POST /event at 64 connections (200 development-mode users)
# against the same insert-and-aggregate transaction driven straight at the
# database; then POST /event and GET /history?offset=0 for a user with
# 1,000,000 stored events against one with 1,000.

bench_event_floor() { # backend -> tx/s
  if [ "$1" = postgres ]; then
    pgbench -n -h 127.0.0.1 -U postgres -f bench/sql/event.pgbench -c 16 -j 2 -T "${DURATION%s}" "$BENCH_PG_DB" 2>/dev/null \
      | awk '/^tps/ {printf "%.0f", $3}'
  else
    python3 bench/sqlite_event_floor.py "$BENCH_DIR/keel.db" "${DURATION%s}"
  fi
}

bench_history_floor() { # backend user -> pages/s
  if [ "$1" = postgres ]; then
    pgbench -n -h 127.0.0.1 -U postgres -D user="'$2'" -f bench/sql/history.pgbench -c 16 -j 2 -T "${DURATION%s}" "$BENCH_PG_DB" 2>/dev/null \
      | awk '/^tps/ {printf "%.0f", $3}'
  else
    python3 bench/sqlite_history_floor.py "$BENCH_DIR/keel.db" "${DURATION%s}" "$2"
  fi
}

bench_seed_events() { # backend user count
  if [ "$1" = postgres ]; then
    bench_sql postgres "INSERT INTO ua_events (id, user_id, session_id, timestamp, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at)
      SELECT gen_random_uuid()::text, '$2', 'seed', '2026-01-01T00:00:00Z', 'claude', 1, 1, 0, 0, 0.000001, now() - interval '1 day' FROM generate_series(1, $3)"
  else
    python3 - "$BENCH_DIR/keel.db" "$2" "$3" <<'PY'
import sqlite3, sys, uuid
db = sqlite3.connect(sys.argv[1]); db.execute("PRAGMA busy_timeout=10000")
user, n = sys.argv[2], int(sys.argv[3])
rows = ((str(uuid.uuid4()), user, "seed", "2026-01-01T00:00:00Z", "claude", 1, 1, 0, 0, 0.000001, "2026-01-01T00:00:00+00:00") for _ in range(n))
db.executemany("INSERT INTO ua_events (id, user_id, session_id, timestamp, model, input_tokens, output_tokens,"
               " cache_read_tokens, cache_write_tokens, cost_usd, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
db.commit()
PY
  fi
}

bench_scenario() { # backend floor
  bench_reset_peak
  local post floor
  post=$(bench_wrk event "$(bench_url usage-alerts /event)" bench/lua/event.lua)
  local peak; peak=$(bench_peak_rss)
  floor=$(bench_event_floor "$1")
  echo "| $1 | usage-alerts DB floor: the same transaction straight at the database | $floor | - | - | (floor) | - |"
  bench_row "$1" "usage-alerts POST /event" "$floor" "$post" "DB floor"

  local small big
  small=$(bench_dev_user small-user)
  big=$(bench_dev_user big-user)
  bench_seed_events "$1" "$small" 1000
  bench_seed_events "$1" "$big" 1000000
  for who in small big; do
    local token="$who-user" label
    [ "$who" = big ] && label="1,000,000" || label="1,000"
    bench_reset_peak
    bench_row "$1" "POST /event, user with $label events" "$2" \
      "$(BENCH_TOKEN=$token bench_wrk "event-$who" "$(bench_url usage-alerts /event)" bench/lua/post-one.lua)"
    bench_reset_peak
    local row hfloor user
    row=$(BENCH_TOKEN=$token BENCH_PATH=/history?offset=0 bench_wrk "history-$who" "$(bench_url usage-alerts /history)" bench/lua/get.lua)
    bench_row "$1" "GET /history?offset=0, user with $label events" "$2" "$row"
    [ "$who" = big ] && user=$big || user=$small
    hfloor=$(bench_history_floor "$1" "$user")
    echo "| $1 | GET /history DB floor (page of 50 as JSON), $label events | $hfloor | - | - | (floor) | - |"
    bench_row "$1" "GET /history?offset=0 vs its DB floor, $label events" "$hfloor" "$row" "DB floor"
  done
  : "$peak"
}
