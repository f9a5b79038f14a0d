# Sign-ins under another service's flood: accounts POST /auth/login from two
# connections alone, then again while 64 connections flood svc's admin
# login with wrong passwords (each a new username from a new address, so
# no limit of the guard stops them: every one is hashed). The hashing slots
# are shared between services in turns (platform's guard::slots): the
# accounts sign-ins' p99 under the flood should stay within a few hashes of
# their p99 alone, not grow with the flood's queue.

# The sign-ins go to 10,000 users (copies of bench1), so that none nears
# the guard's 10 attempts a minute for one login name.
bench_scenario() { # backend floor
  local row flood_pid
  bench_accounts_tokens >/dev/null
  bench_scale_seed_users "$1" 1 10000
  export BENCH_LOGIN_USERS=10000
  bench_relaunch_keel KEEL_TRUSTED_PROXIES=127.0.0.1
  bench_reset_peak
  row=$(CONNECTIONS=2 BENCH_ADJACENT=0 bench_wrk login-alone "$(bench_url accounts /auth/login)" bench/lua/login.lua)
  bench_row "$1" "accounts POST /auth/login (2 connections), alone" "" "$row"
  # The flood runs a second longer on each side of the measured sign-ins.
  BENCH_LUA=bench/lua/svc-login-flood.lua wrk -t1 -c64 -d"$((${DURATION%s} + 2))s" --latency \
    -s bench/lua/percentiles.lua "$(bench_url svc /svc/v1/admin/login)" \
    > "$BENCH_DIR/flood.txt" 2>&1 &
  flood_pid=$!
  sleep 1
  bench_reset_peak
  row=$(CONNECTIONS=2 BENCH_ADJACENT=0 bench_wrk login-flooded "$(bench_url accounts /auth/login)" bench/lua/login.lua)
  bench_row "$1" "accounts POST /auth/login (2 connections), svc login flooded (64 connections)" "" "$row"
  wait "$flood_pid" || true
  unset BENCH_LOGIN_USERS
  # 70-scale seeds the same names: these go (their sessions with them).
  local seeded="SELECT id FROM accounts_users WHERE username LIKE 'scale%'"
  bench_sql "$1" "DELETE FROM accounts_refresh_tokens WHERE session_id IN
      (SELECT id FROM accounts_sessions WHERE user_id IN ($seeded));
    DELETE FROM accounts_sessions WHERE user_id IN ($seeded);
    DELETE FROM accounts_users WHERE username LIKE 'scale%'"
  awk -v b="$1" '/Requests\/sec/ {rps=$2} $1=="99%" {p99=$2}
    END {printf "| %s | svc POST /admin/login flood (64 connections, every attempt hashed) | %.0f | - | %s | - | (the flood) | - |\n", b, rps, p99}' \
    "$BENCH_DIR/flood.txt"
  bench_relaunch_keel
}
