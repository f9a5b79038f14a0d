# usage-alerts: POST /event at 64 connections (200 development-mode users)
# against the same insert-and-aggregate transaction driven straight at the
# database; GET /preferences of 200 users; then POST /event and GET
# /history?offset=0 for a user with 1,000,000 stored events against one with
# 1,000. Reads and writes each beside /healthz and their DB floor.

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

# Thresholds for 200 development-mode users (tokens pref-1..pref-200);
# prints the tokens file. PostgreSQL's pgbench finds them in bench_pref_users.
bench_seed_preferences() { # backend
  local file="$BENCH_DIR/pref-tokens.txt" values="" i user
  : > "$file"
  for i in $(seq 1 200); do
    echo "pref-$i" >> "$file"
    user=$(bench_dev_user "pref-$i")
    values="$values${values:+,}($i, '$user')"
  done
  local thresholds='[{"id":"daily","type":"daily_cost","value":5.0,"isEnabled":true},{"id":"tokens","type":"token_count","value":100000.0,"isEnabled":false}]'
  local now="'2026-01-01T00:00:00+00:00'"
  [ "$1" = postgres ] && now="now()"
  bench_sql "$1" "CREATE TABLE bench_pref_users (n integer PRIMARY KEY, user_id text NOT NULL);
    INSERT INTO bench_pref_users VALUES $values;
    INSERT INTO ua_preferences (user_id, thresholds, updated_at) SELECT user_id, '$thresholds', $now FROM bench_pref_users"
  echo "$file"
}

bench_scenario() { # backend floor
  bench_reset_peak
  local post
  post=$(bench_wrk event "$(bench_url usage-alerts /event)" bench/lua/event.lua)
  bench_row "$1" "usage-alerts POST /event" "$2" "$post"
  bench_floor_rows "$1" "usage-alerts POST /event (the same transaction)" \
    "$(bench_db_floor "$1" event event)" "$post"

  local prefs row
  prefs=$(bench_seed_preferences "$1")
  bench_reset_peak
  row=$(BENCH_TOKENS=$prefs BENCH_METHOD=GET BENCH_PATH=/preferences \
       bench_wrk preferences "$(bench_url usage-alerts /preferences)" bench/lua/authed.lua)
  bench_row "$1" "usage-alerts GET /preferences (200 users)" "$2" "$row"
  bench_floor_rows "$1" "usage-alerts GET /preferences" "$(bench_db_floor "$1" preferences preferences)" "$row"

  local small big
  small=$(bench_dev_user small-user)
  big=$(bench_dev_user big-user)
  bench_seed_events "$1" "$small" 1000
  bench_seed_events "$1" "$big" 1000000
  for who in small big; do
    local token="$who-user" label user floor
    [ "$who" = big ] && label="1,000,000" || label="1,000"
    [ "$who" = big ] && user=$big || user=$small
    bench_reset_peak
    bench_row "$1" "POST /event, user with $label events" "$2" \
      "$(BENCH_TOKEN=$token bench_wrk "event-$who" "$(bench_url usage-alerts /event)" bench/lua/post-one.lua)"
    bench_reset_peak
    row=$(BENCH_TOKEN=$token BENCH_PATH=/history?offset=0 bench_wrk "history-$who" "$(bench_url usage-alerts /history)" bench/lua/get.lua)
    bench_row "$1" "GET /history?offset=0, user with $label events" "$2" "$row"
    if [ "$1" = postgres ]; then
      floor=$(bench_pgbench history -D user="'$user'")
    else
      floor=$(bench_sqlite_floor history "$user")
    fi
    bench_floor_rows "$1" "GET /history?offset=0 (page of 50), $label events" "$floor" "$row"
  done
}
