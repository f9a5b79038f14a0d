# accounts: GET /account, GET /goals/weekly (5 goals a user) and POST
# /goals/weekly with valid tokens of 200 users, each beside /healthz and its
# DB floor (the same statements straight at the database, rows serialized to
# JSON). On PostgreSQL, GET /account again with Redis (the shared session
# cache). Each floor is what keel runs for the request in that
# configuration: on SQLite the session is served from keel's session cache,
# on PostgreSQL without Redis it is read every time.

# pgbench's sessions in a numbered table (1..200).
bench_accounts_pg_sessions() {
  bench_sql postgres "DROP TABLE IF EXISTS bench_sessions;
    CREATE TABLE bench_sessions AS SELECT row_number() OVER (ORDER BY id) AS n, id, user_id FROM accounts_sessions;
    CREATE UNIQUE INDEX ON bench_sessions (n); ANALYZE bench_sessions"
}

# Five weekly goals for each benchmark user, straight into the table.
bench_accounts_seed_goals() { # backend
  local now="'2026-01-01T00:00:00+00:00'"
  [ "$1" = postgres ] && now="now()"
  bench_sql "$1" "INSERT INTO accounts_weekly_goals (id, user_id, title, is_completed, revision, created_at, updated_at)
    SELECT substr(u.id, 13, 12) || '00000000000' || g.k, u.id, 'goal ' || g.k, false, 0, $now, $now
    FROM accounts_users u CROSS JOIN (SELECT 1 AS k UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5) g"
}

bench_scenario() { # backend floor
  local tokens row
  tokens=$(bench_accounts_tokens)
  [ "$1" = postgres ] && bench_accounts_pg_sessions
  bench_reset_peak
  row=$(BENCH_TOKENS=$tokens BENCH_METHOD=GET BENCH_PATH=/account \
       bench_wrk account "$(bench_url accounts /account)" bench/lua/authed.lua)
  bench_row "$1" "accounts GET /account" "$2" "$row"
  bench_floor_rows "$1" "accounts GET /account (session + user, uncached)" \
    "$(bench_db_floor "$1" account account)" "$row"
  if [ "$1" = postgres ]; then
    bench_relaunch_keel REDIS_URL=redis://127.0.0.1:6379
    bench_reset_peak
    bench_row "$1" "accounts GET /account, Redis session cache" "$2" \
      "$(BENCH_TOKENS=$tokens BENCH_METHOD=GET BENCH_PATH=/account \
         bench_wrk account-redis "$(bench_url accounts /account)" bench/lua/authed.lua)"
    bench_relaunch_keel
  fi

  bench_accounts_seed_goals "$1"
  bench_reset_peak
  row=$(BENCH_TOKENS=$tokens BENCH_METHOD=GET BENCH_PATH=/goals/weekly \
       bench_wrk goals-list "$(bench_url accounts /goals/weekly)" bench/lua/authed.lua)
  bench_row "$1" "accounts GET /goals/weekly (5 goals)" "$2" "$row"
  bench_floor_rows "$1" "accounts GET /goals/weekly" "$(bench_db_floor "$1" goals goals)" "$row"

  bench_reset_peak
  row=$(BENCH_TOKENS=$tokens BENCH_METHOD=POST BENCH_PATH=/goals/weekly BENCH_BODY=title=bench \
       bench_wrk goals "$(bench_url accounts /goals/weekly)" bench/lua/authed.lua)
  bench_row "$1" "accounts POST /goals/weekly" "$2" "$row"
  bench_floor_rows "$1" "accounts POST /goals/weekly" "$(bench_db_floor "$1" goal goal)" "$row"
}
