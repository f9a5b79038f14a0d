# accounts: GET /account and POST /goals/weekly with valid tokens of 200
# users, each beside its DB floor (the same statements straight at the
# database, rows serialized to JSON) and /healthz. On PostgreSQL, GET
# /account again with Redis (the shared session cache).
bench_accounts_tokens() {
  local file="$BENCH_DIR/accounts-tokens.txt" dir="$BENCH_DIR/registrations"
  if [ ! -s "$file" ]; then
    mkdir -p "$dir"
    # One file per response: parallel writers to one pipe would interleave.
    seq 1 200 | xargs -P 8 -I{} curl -fs -o "$dir/{}.json" -X POST "$(bench_url accounts /auth/register)" \
      -d "username=bench{}&email=bench{}@example.com&password=benchpassword"
    grep -ho '"accessToken":"[^"]*"' "$dir"/*.json | cut -d'"' -f4 > "$file"
    [ "$(wc -l < "$file")" -ge 200 ] || keel_fail "could not register the benchmark users"
  fi
  echo "$file"
}

bench_accounts_floor() { # backend account|goal -> ops/s
  if [ "$1" = postgres ]; then
    bench_sql postgres "DROP TABLE IF EXISTS bench_sessions;
      CREATE TABLE bench_sessions AS SELECT row_number() OVER (ORDER BY id) AS n, id, user_id FROM accounts_sessions;
      CREATE UNIQUE INDEX ON bench_sessions (n); ANALYZE bench_sessions"
    pgbench -n -h 127.0.0.1 -U postgres -f "bench/sql/$2.pgbench" -c 16 -j 2 -T "${DURATION%s}" "$BENCH_PG_DB" 2>/dev/null \
      | awk '/^tps/ {printf "%.0f", $3}'
  else
    python3 bench/sqlite_accounts_floor.py "$BENCH_DIR/keel.db" "${DURATION%s}" "$2"
  fi
}

bench_scenario() { # backend floor
  local tokens dbfloor row
  tokens=$(bench_accounts_tokens)
  bench_reset_peak
  row=$(BENCH_TOKENS=$tokens BENCH_METHOD=GET BENCH_PATH=/account \
       bench_wrk account "$(bench_url accounts /account)" bench/lua/authed.lua)
  bench_row "$1" "accounts GET /account" "$2" "$row"
  dbfloor=$(bench_accounts_floor "$1" account)
  echo "| $1 | accounts GET /account DB floor (session + user, no cache) | $dbfloor | - | - | (floor) | - |"
  bench_row "$1" "accounts GET /account vs its DB floor" "$dbfloor" "$row" "DB floor"
  if [ "$1" = postgres ]; then
    bench_relaunch_keel REDIS_URL=redis://127.0.0.1:6379
    bench_reset_peak
    bench_row "$1" "accounts GET /account, Redis session cache" "$2" \
      "$(BENCH_TOKENS=$tokens BENCH_METHOD=GET BENCH_PATH=/account \
         bench_wrk account-redis "$(bench_url accounts /account)" bench/lua/authed.lua)"
    bench_relaunch_keel
  fi
  bench_reset_peak
  row=$(BENCH_TOKENS=$tokens BENCH_METHOD=POST BENCH_PATH=/goals/weekly BENCH_BODY=title=bench \
       bench_wrk goals "$(bench_url accounts /goals/weekly)" bench/lua/authed.lua)
  bench_row "$1" "accounts POST /goals/weekly" "$2" "$row"
  dbfloor=$(bench_accounts_floor "$1" goal)
  echo "| $1 | accounts POST /goals/weekly DB floor | $dbfloor | - | - | (floor) | - |"
  bench_row "$1" "accounts POST /goals/weekly vs its DB floor" "$dbfloor" "$row" "DB floor"
}
