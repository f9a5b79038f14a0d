# What replicating the embedded database costs (SQLite only): POST /event
# (one write each) and POST /auth/login (a password check and a session
# written) with the database not replicated ("off"), replicated by keel
# (KEEL_REPLICA_URL: keel runs Litestream), and replicated by Litestream
# started by hand beside a keel that does not know (the same program and
# configuration, as a sidecar would run it). The replica is a directory on
# this machine, so the rows measure Litestream's work, not a network's.
# Run as ABC CBA after one unrecorded round; each figure the mean of its
# two runs. Beside req/s and latency: CPU milliseconds per request of keel
# and Litestream together (from /proc, over the run) and their peak memory.
# Then: the restore time of a database of BENCH_RESTORE_MIB (1024) MiB,
# replicated by keel, with `keel restore` (integrity check included).

BENCH_REPLICA_DIR=""

bench_stop_by_hand() {
  pkill -f "litestream replicate -config $BENCH_DIR/by-hand.yml" 2>/dev/null || true
  local _
  for _ in $(seq 1 300); do
    pgrep -f "litestream replicate" >/dev/null || return 0
    sleep 0.1
  done
}

bench_replica_keel() { # variant
  bench_stop_by_hand
  bench_term_keel
  bench_stop_by_hand
  # Each variant starts from an empty replica and no Litestream state.
  rm -rf "$BENCH_REPLICA_DIR" "$BENCH_DIR/.keel.db-litestream" && mkdir -p "$BENCH_REPLICA_DIR"
  case "$1" in
    off) bench_launch_keel ;;
    keel) bench_launch_keel KEEL_REPLICA_URL="file://$BENCH_REPLICA_DIR" KEEL_LITESTREAM_BIN="$LITESTREAM_BIN" ;;
    by-hand)
      bench_launch_keel
      cat > "$BENCH_DIR/by-hand.yml" <<EOF
snapshot:
  interval: 3600s
  retention: 86400s
l0-retention: 300s
dbs:
  - path: "$BENCH_DIR/keel.db"
    replica:
      type: file
      path: "$BENCH_REPLICA_DIR"
      sync-interval: 1s
EOF
      env -i PATH="$PATH" "$LITESTREAM_BIN" replicate -config "$BENCH_DIR/by-hand.yml" \
        >>"$BENCH_DIR/litestream.log" 2>&1 &
      ;;
  esac
  # Litestream's first sync (a snapshot of the whole file) before the load.
  local _
  for _ in $(seq 1 100); do
    [ "$1" = off ] && break
    [ -n "$(find "$BENCH_REPLICA_DIR" -type f 2>/dev/null | head -n1)" ] && break
    sleep 0.1
  done
}

bench_litestream_pid() { pgrep -f "litestream replicate" | head -n1; }

# The sum over keel and Litestream of what AWK reads from /proc/PID/FILE.
bench_replica_sum() { # file awk
  local pid total=0
  for pid in $(bench_keel_pid) $(bench_litestream_pid); do
    total=$(( total + $(awk "$2" "/proc/$pid/$1" 2>/dev/null || echo 0) ))
  done
  echo "$total"
}
# CPU ticks (user + system) so far; peak resident kB.
bench_replica_ticks() { bench_replica_sum stat '{print $14 + $15}'; }
bench_replica_peak() { bench_replica_sum status '/VmHWM/ {print $2}'; }

bench_scenario() { # backend floor
  [ "$1" = sqlite ] || return 0
  LITESTREAM_BIN="${CARGO_TARGET_DIR:-target}/tools/replication/bin/litestream"
  [ -x "$LITESTREAM_BIN" ] || keel_fail "missing $LITESTREAM_BIN (keel_ensure_python_packages)"
  BENCH_REPLICA_DIR="$BENCH_DIR/replica"
  local tokens hz
  tokens=$(bench_accounts_tokens)
  hz=$(getconf CLK_TCK)
  declare -A rps p50 p99 cpu peak runs
  bench_replica_keel off
  BENCH_ADJACENT=0 bench_wrk replica-warm-event "$(bench_url usage-alerts /event)" bench/lua/event.lua >/dev/null
  for variant in off keel by-hand by-hand keel off; do
    bench_replica_keel "$variant"
    for endpoint in event login; do
      local row r a b c d t0 t1
      bench_reset_peak
      for pid in $(bench_litestream_pid); do echo 5 > "/proc/$pid/clear_refs" 2>/dev/null || true; done
      t0=$(bench_replica_ticks)
      if [ "$endpoint" = event ]; then
        row=$(BENCH_ADJACENT=0 bench_wrk "replica-$variant-event" \
          "$(bench_url usage-alerts /event)" bench/lua/event.lua)
      else
        row=$(BENCH_ADJACENT=0 bench_wrk "replica-$variant-login" \
          "$(bench_url accounts /auth/login)" bench/lua/login.lua)
      fi
      t1=$(bench_replica_ticks)
      read -r a b c d <<<"$row"
      r="$variant-$endpoint"
      rps[$r]=$(( ${rps[$r]:-0} + a ))
      p50[$r]="${p50[$r]:-}${p50[$r]:+/}$b"
      p99[$r]="${p99[$r]:-}${p99[$r]:+/}$c"
      # CPU ms per request over this run.
      cpu[$r]="${cpu[$r]:-}${cpu[$r]:+ }$(awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$a" -v s="${DURATION%s}" \
        'BEGIN {printf "%.3f", (n > 0 ? 1000 * t / hz / (n * s) : 0)}')"
      peak[$r]="${peak[$r]:-}${peak[$r]:+ }$(bench_replica_peak)"
      runs[$r]=$(( ${runs[$r]:-0} + 1 ))
    done
  done
  bench_stop_by_hand
  bench_relaunch_keel
  for endpoint in event login; do
    local label base
    [ "$endpoint" = event ] && label="usage-alerts POST /event" || label="accounts POST /auth/login"
    base=$(( ${rps[off-$endpoint]} / ${runs[off-$endpoint]} ))
    for variant in off keel by-hand; do
      local r="$variant-$endpoint" mean ratio name cpu_mean peak_max
      mean=$(( ${rps[$r]} / ${runs[$r]} ))
      ratio=$(awk -v a="$mean" -v b="$base" 'BEGIN {printf "%.1f%%", 100*a/b}')
      cpu_mean=$(echo "${cpu[$r]}" | awk '{s=0; for (i=1;i<=NF;i++) s+=$i; printf "%.3f", (NF > 0 ? s/NF : 0)}')
      peak_max=$(echo "${peak[$r]}" | awk '{m=0; for (i=1;i<=NF;i++) if ($i>m) m=$i; printf "%.1f MiB", m/1024}')
      case "$variant" in
        off) name="not replicated" ;;
        keel) name="replicated by keel (KEEL_REPLICA_URL)" ;;
        by-hand) name="Litestream by hand beside keel" ;;
      esac
      echo "| sqlite | $label, $name | $mean | ${p50[$r]} | ${p99[$r]} | - | $ratio of not replicated; ${cpu_mean} ms CPU a request | $peak_max |"
    done
  done
  bench_replica_restore
}

# A database of BENCH_RESTORE_MIB MiB (usage events), replicated by keel
# to a directory, keel stopped (Litestream syncs on the way out), then
# `keel restore` timed into a new file.
bench_replica_restore() {
  local mib="${BENCH_RESTORE_MIB:-1024}" dir="$BENCH_DIR/restore" replica="$BENCH_DIR/restore-replica"
  rm -rf "$dir" "$replica" && mkdir -p "$dir" "$replica"
  env -i PATH="$PATH" KEEL_DATA_DIR="$dir" RUST_LOG=error "$KEEL_BIN" migrate >/dev/null
  python3 - "$dir/keel.db" "$mib" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
target = int(sys.argv[2]) * 1024 * 1024
step = 200000
i = 0
while True:
    db.execute("""
    WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
    INSERT INTO ua_events (seq, id, user_id, session_id, timestamp, model, input_tokens,
      output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, created_at)
    SELECT i, printf('%032x', i), 'dev-' || printf('%032x', i % 1000), 'session-' || (i / 50),
      '2026-11-27T10:00:00.000Z', 'claude-sonnet-4', i % 5000, i % 700, i % 90000, i % 3000,
      (i % 1000) / 1000.0, strftime('%Y-%m-%dT%H:%M:%f+00:00', 1795000000 + i / 100.0, 'unixepoch')
    FROM n""", (i + 1, i + step))
    db.commit()
    i += step
    size = db.execute("PRAGMA page_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]
    if size >= target:
        break
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
PY
  local size
  size=$(stat -c %s "$dir/keel.db")
  env -i PATH="$PATH" KEEL_DATA_DIR="$dir" RUST_LOG=warn \
    KEEL_USAGE_ALERTS_ADDR="127.0.0.1:$((BENCH_PORT_BASE + 12))" \
    KEEL_REPLICA_URL="file://$replica" KEEL_LITESTREAM_BIN="$LITESTREAM_BIN" \
    "$KEEL_BIN" serve usage-alerts >>"$BENCH_DIR/restore-serve.log" 2>&1 &
  local pid=$! started _
  started=$(date +%s%N)
  # Replicated once the first snapshot is in the replica: Litestream's
  # control socket says it synced.
  for _ in $(seq 1 3000); do
    curl -s --unix-socket "$dir/litestream.sock" http://l/list 2>/dev/null | grep -q last_sync_at && break
    sleep 0.1
  done
  local first_ms=$(( ($(date +%s%N) - started) / 1000000 ))
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
  local tv="$BENCH_DIR/restore.time" log="$BENCH_DIR/restore.log"
  started=$(date +%s%N)
  env -i PATH="$PATH" KEEL_DATA_DIR="$dir" RUST_LOG=warn KEEL_LITESTREAM_BIN="$LITESTREAM_BIN" \
    /usr/bin/time -v -o "$tv" "$KEEL_BIN" restore --from "file://$replica" --to "$dir/restored.db" \
    >"$log" 2>&1 || { cat "$log" >&2; keel_fail "keel restore failed"; }
  local ms=$(( ($(date +%s%N) - started) / 1000000 ))
  grep -q "integrity check ok" "$log" || keel_fail "keel restore did not check: $(cat "$log")"
  local rsize replica_size
  rsize=$(stat -c %s "$dir/restored.db")
  replica_size=$(du -sb "$replica" | cut -f1)
  echo "| sqlite | restore of a $((size / 1024 / 1024)) MiB database (replica $((replica_size / 1024 / 1024)) MiB, first replication $((first_ms / 1000)) s): keel restore, integrity check included | - | - | - | - | $(awk -v ms="$ms" 'BEGIN {printf "%.1f s", ms / 1000}') ($((rsize / 1024 / 1024)) MiB restored) | $(awk '/Maximum resident/ {printf "%.1f MiB", $NF/1024}' "$tv") (the larger of keel and Litestream) |"
  rm -rf "$dir" "$replica"
}
