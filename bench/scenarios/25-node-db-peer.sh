# The database-bound peer: usage-alerts' POST /event (200 development-mode
# users) and GET /history?offset=0 (a user with 1,000 events) on keel, then
# on the Node service a team would otherwise write (bench/node-db-peer:
# Fastify with node-postgres or better-sqlite3, the same statements, on a
# database of its own that keel migrated), each at 64 connections in the
# same run. Prints both rows and keel's multiple of the peer's throughput,
# p99 and peak memory.

bench_peer_db() { # backend -> the peer's database URL or file (migrated by keel)
  if [ "$1" = postgres ]; then
    local name="${BENCH_PG_DB}_peer"
    psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS $name" -c "CREATE DATABASE $name" >/dev/null 2>&1
    KEEL_DATA_DIR="$BENCH_DIR/peer" DATABASE_URL="postgres://postgres@127.0.0.1:5432/$name" "$KEEL_BIN" migrate >/dev/null 2>&1
    echo "postgres://postgres@127.0.0.1:5432/$name"
  else
    rm -rf "$BENCH_DIR/peer" && mkdir -p "$BENCH_DIR/peer"
    KEEL_DATA_DIR="$BENCH_DIR/peer" "$KEEL_BIN" migrate >/dev/null 2>&1
    echo "$BENCH_DIR/peer/keel.db"
  fi
}

bench_peer_ready() { # dir -> 0 when node_modules is installed (better-sqlite3 built)
  local dir=$1
  [ -f "$dir/node_modules/.keel-lock" ] && cmp -s "$dir/package-lock.json" "$dir/node_modules/.keel-lock" && return 0
  # Only better-sqlite3 needs its install script (it compiles SQLite and its
  # binding; node-gyp finds Node's headers under /usr when installed there).
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null \
    && npm_config_nodedir="${BENCH_NODEDIR:-/usr}" npm rebuild better-sqlite3 --loglevel=error >/dev/null \
    && cp package-lock.json node_modules/.keel-lock)
}

# "rps p50 p99 p99.9" -> p99 in milliseconds.
bench_ms() { awk '{v=$3; if (v ~ /us$/) {sub(/us$/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v*=1000}; print v}' <<<"$1"; }

bench_scenario() { # backend floor
  local dir=bench/node-db-peer port=$((BENCH_PORT_BASE + 41))
  if ! command -v node >/dev/null || ! bench_peer_ready "$dir"; then
    echo "| $1 | Node database peer: skipped (node, npm or the better-sqlite3 build missing) | - | - | - | - | - | - |"
    return 0
  fi
  local user; user=$(bench_dev_user peer-history)
  bench_sql "$1" "DELETE FROM ua_events WHERE user_id = '$user'"
  if [ "$1" = postgres ]; then
    bench_seed_history "postgres://postgres@127.0.0.1:5432/$BENCH_PG_DB" "$user"
  else
    bench_seed_history "$BENCH_DIR/keel.db" "$user"
  fi
  local keel_event keel_event_rss keel_hist keel_hist_rss
  bench_reset_peak
  keel_event=$(BENCH_ADJACENT=0 bench_wrk event "$(bench_url usage-alerts /event)" bench/lua/event.lua)
  keel_event_rss=$(bench_peak_rss)
  bench_reset_peak
  keel_hist=$(BENCH_ADJACENT=0 BENCH_TOKEN=peer-history BENCH_PATH=/history?offset=0 \
    bench_wrk history "$(bench_url usage-alerts /history)" bench/lua/get.lua)
  keel_hist_rss=$(bench_peak_rss)

  local db pid
  db=$(bench_peer_db "$1")
  bench_seed_history "$db" "$user"
  node "$dir/server.mjs" "$port" "$db" >"$BENCH_DIR/node-db-peer.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 50); do
    curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  local peer_event peer_event_rss peer_hist peer_hist_rss
  peer_event=$(BENCH_ADJACENT=0 bench_wrk peer-event "http://127.0.0.1:$port/event" bench/lua/event.lua)
  peer_event_rss=$(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$pid/status")
  echo 5 > "/proc/$pid/clear_refs" 2>/dev/null || true
  peer_hist=$(BENCH_ADJACENT=0 BENCH_TOKEN=peer-history BENCH_PATH=/history?offset=0 \
    bench_wrk peer-history "http://127.0.0.1:$port/history" bench/lua/get.lua)
  peer_hist_rss=$(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$pid/status")
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
  [ "$1" = postgres ] && psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS ${BENCH_PG_DB}_peer" >/dev/null 2>&1

  local peer="Node peer ($(node --version), Fastify, $([ "$1" = postgres ] && echo node-postgres || echo better-sqlite3))"
  bench_peer_rows "$1" "POST /event (200 users)" "$keel_event" "$keel_event_rss" "$peer" "$peer_event" "$peer_event_rss"
  bench_peer_rows "$1" "GET /history?offset=0 (1,000 events)" "$keel_hist" "$keel_hist_rss" "$peer" "$peer_hist" "$peer_hist_rss"
}

# Two rows: keel's and the peer's, the peer's with keel's multiples.
bench_peer_rows() { # backend label keel-row keel-rss peer-name peer-row peer-rss
  local krps kp50 kp99 kp999 prps pp50 pp99 pp999
  read -r krps kp50 kp99 kp999 <<<"$3"
  read -r prps pp50 pp99 pp999 <<<"$6"
  local vs
  vs=$(awk -v kr="$krps" -v pr="$prps" -v k99="$(bench_ms "$3")" -v p99="$(bench_ms "$6")" \
    -v km="${4% MiB}" -v pm="${7% MiB}" \
    'BEGIN {printf "keel: %.1fx its req/s, %.2fx its p99, %.2fx its memory", kr/pr, k99/p99, km/pm}')
  echo "| $1 | keel usage-alerts $2 | $krps | $kp50 | $kp99 | $kp999 | (keel) | $4 |"
  echo "| $1 | $5 $2 | $prps | $pp50 | $pp99 | $pp999 | $vs | $7 |"
}
