# keel db copy, both directions, on a database whose largest table holds
# BENCH_COPY_EVENTS usage events (default: 1,000,000 and 10,000,000, so the
# line is visible), beside PostgreSQL's own COPY FROM of the same rows into
# the same freshly migrated schema (the floor). Each row: rows/s of the
# whole command (every table, the read-back and the comparison included)
# and of the events table alone (its own progress line), the ratio of the
# latter to the floor, and keel's peak memory (from /usr/bin/time) beside
# its idle start. Runs once, in the PostgreSQL pass (it needs both).
bench_scenario() { # backend floor
  [ "$1" = postgres ] || return 0
  local n
  for n in ${BENCH_COPY_EVENTS:-1000000 10000000}; do
    bench_copy_rows "$n"
  done
}

# A migrated SQLite file with N usage events of 1,000 users (as the API
# writes them), in one statement.
bench_copy_source() { # dir n
  env -i PATH="$PATH" KEEL_DATA_DIR="$1" RUST_LOG=error "$KEEL_BIN" migrate >/dev/null
  python3 - "$1/keel.db" "$2" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("""
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
INSERT INTO ua_events (seq, id, user_id, session_id, timestamp, model, input_tokens,
  output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at)
SELECT i, printf('%032x', i), 'dev-' || printf('%032x', i % 1000), 'session-' || (i / 50),
  '2026-11-27T10:00:00.000Z', 'claude-sonnet-4', i % 5000, i % 700, i % 90000, i % 3000,
  (i % 1000) / 1000.0, strftime('%Y-%m-%dT%H:%M:%f+00:00', 1795000000 + i / 100.0, 'unixepoch')
FROM n""", (int(sys.argv[2]),))
db.commit()
PY
}

# A fresh database on the local server, migrated by keel: its URL.
bench_copy_pg() { # name
  psql -q -h 127.0.0.1 -U postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" >/dev/null
  local url="postgres://postgres@127.0.0.1:5432/$1?sslmode=disable"
  env -i PATH="$PATH" DATABASE_URL="$url" KEEL_DATA_DIR="$BENCH_DIR" RUST_LOG=error "$KEEL_BIN" migrate >/dev/null
  echo "$url"
}

# Runs keel db copy under /usr/bin/time: "seconds peak-MiB events-rows/s".
bench_copy_run() { # data-dir from to
  local log="$BENCH_DIR/copy.log" tv="$BENCH_DIR/copy.time"
  env -i PATH="$PATH" KEEL_DATA_DIR="$1" RUST_LOG=warn /usr/bin/time -v -o "$tv" \
    "$KEEL_BIN" db copy --from "$2" --to "$3" >"$log" 2>&1 \
    || { cat "$log" >&2; keel_fail "keel db copy failed"; }
  grep -q "every table holds the same rows" "$log" || keel_fail "keel db copy did not verify"
  local secs rss rate
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$tv")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2/1024}' "$tv")
  rate=$(sed -n 's/^ua_events: [0-9]* rows in .* (\([0-9]*\) rows\/s)$/\1/p' "$log" | tail -n1)
  echo "$secs $rss $rate"
}

bench_copy_rows() { # n
  local n=$1 dir="$BENCH_DIR/copy-$1" floor_file="$BENCH_DIR/copy-$1.tsv"
  command -v /usr/bin/time >/dev/null || keel_fail "/usr/bin/time is missing (Debian's time package)"
  rm -rf "$dir" && mkdir -p "$dir"
  bench_copy_source "$dir" "$n"
  local all; all=$(python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(sum(c.execute(f"SELECT COUNT(*) FROM \"{t}\"").fetchone()[0] for (t,) in c.execute("SELECT name FROM sqlite_master WHERE type=\x27table\x27 AND name NOT LIKE \x27sqlite_%\x27")))' "$dir/keel.db")
  local idle; idle=$(env -i PATH="$PATH" /usr/bin/time -f %M "$KEEL_BIN" --version 2>&1 >/dev/null | awk '{printf "%.1f", $1/1024}')

  # SQLite -> PostgreSQL.
  local to; to=$(bench_copy_pg keel_bench_copy_to)
  local secs rss rate
  read -r secs rss rate <<<"$(bench_copy_run "$dir" "sqlite://$dir/keel.db" "$to")"
  # The floor: the same rows, dumped from the copy, loaded by COPY FROM
  # into a fresh schema (indexes and all).
  psql -q -h 127.0.0.1 -U postgres -d keel_bench_copy_to -c "\\copy ua_events TO '$floor_file'"
  local fl; fl=$(bench_copy_pg keel_bench_copy_floor)
  local t0 t1 floor
  t0=$(date +%s.%N)
  psql -q -h 127.0.0.1 -U postgres -d keel_bench_copy_floor -c "\\copy ua_events FROM '$floor_file'"
  t1=$(date +%s.%N)
  floor=$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", n/(b-a)}')
  echo "| postgres | db copy floor: PostgreSQL COPY FROM, $n events | $floor rows/s | - | - | - | (floor) | - |"
  echo "| postgres | db copy SQLite -> PostgreSQL, $n events ($all rows) | $(awk -v a="$all" -v s="$secs" 'BEGIN {printf "%.0f", a/s}') rows/s whole, $rate events/s | ${secs} s | - | - | $(awk -v r="$rate" -v f="$floor" 'BEGIN {printf "%.0f%% of COPY FROM", 100*r/f}') | $rss MiB (idle $idle) |"

  # PostgreSQL -> SQLite.
  local back="$BENCH_DIR/copy-$n-back"
  rm -rf "$back" && mkdir -p "$back"
  read -r secs rss rate <<<"$(bench_copy_run "$back" "$to" "sqlite://$back/keel.db")"
  echo "| postgres | db copy PostgreSQL -> SQLite, $n events ($all rows) | $(awk -v a="$all" -v s="$secs" 'BEGIN {printf "%.0f", a/s}') rows/s whole, $rate events/s | ${secs} s | - | - | $(awk -v r="$rate" -v f="$floor" 'BEGIN {printf "%.0f%% of COPY FROM", 100*r/f}') | $rss MiB (idle $idle) |"
  rm -rf "$dir" "$back" "$floor_file"
  psql -q -h 127.0.0.1 -U postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS keel_bench_copy_to" -c "DROP DATABASE IF EXISTS keel_bench_copy_floor" >/dev/null
}
