# channel: the two public queries every viewer's page makes, stream.isLive
# (polled every 10 s by each viewer, served from a snapshot at most 0.5 s
# old) and channel.getInfo, at 64 connections; stream.isLive again as
# @trpc/client's httpBatchStreamLink asks (a batch of one, streamed as JSON
# Lines); then the channel page itself
# (GET / on channel-web: server-rendered from a snapshot at most 1 s old).
# Last, the Node peer: a tRPC v11 standalone server (bench/node-peer,
# @trpc/server pinned with a lock file) answering stream.isLive from memory,
# measured the same way, with keel's ratio to it (skipped with a note when
# node or npm is missing).
bench_scenario() { # backend floor
  local check
  bench_keel_cli channel owner set --email bench@example.com >/dev/null
  check=$(curl -s -o /dev/null -w "%{http_code}" "$(bench_url channel-api /api/trpc/stream.isLive)")
  [ "$check" = 200 ] || echo "warning: a trial stream.isLive answered $check" >&2
  check=$(curl -s -o /dev/null -w "%{http_code}" "$(bench_url channel-web /)")
  [ "$check" = 200 ] || echo "warning: a trial GET / answered $check" >&2
  bench_reset_peak
  local islive
  islive=$(bench_wrk islive "$(bench_url channel-api /api/trpc/stream.isLive)")
  bench_row "$1" "channel-api GET stream.isLive" "$2" "$islive"
  bench_reset_peak
  bench_row "$1" "channel-api GET stream.isLive (JSONL batch)" "$2" \
    "$(bench_wrk islive-jsonl \
      "$(bench_url channel-api '/api/trpc/stream.isLive?batch=1&input=%7B%7D')" bench/lua/jsonl.lua)"
  bench_reset_peak
  bench_row "$1" "channel-api GET channel.getInfo" "$2" \
    "$(bench_wrk getinfo "$(bench_url channel-api /api/trpc/channel.getInfo)")"
  bench_reset_peak
  bench_row "$1" "channel-web GET / (channel page)" "$2" \
    "$(bench_wrk page "$(bench_url channel-web /)")"
  bench_node_peer "$1" "$islive"
}

# The Node peer's row: its requests/s, latencies and peak RSS, and keel's
# stream.isLive requests/s as a multiple of its.
bench_node_peer() { # backend "keel's isLive row"
  local port=$((BENCH_PORT_BASE + 40)) pid row rps p50 p99 p999 keel_rps rss
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "| $1 | Node tRPC peer: skipped (node or npm missing) | - | - | - | - | - | - |"
    return 0
  fi
  if [ ! -d bench/node-peer/node_modules ]; then
    (cd bench/node-peer && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) || {
      echo "| $1 | Node tRPC peer: skipped (npm ci failed in bench/node-peer) | - | - | - | - | - | - |"
      return 0
    }
  fi
  node bench/node-peer/server.mjs "$port" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 50); do
    curl -fs "http://127.0.0.1:$port/stream.isLive" >/dev/null 2>&1 && break
    sleep 0.1
  done
  row=$(BENCH_ADJACENT=0 bench_wrk node-peer "http://127.0.0.1:$port/stream.isLive")
  rss=$(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$pid/status")
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
  read -r rps p50 p99 p999 <<<"$row"
  read -r keel_rps _ <<<"$2"
  echo "| $1 | Node peer: tRPC v11 standalone, stream.isLive from memory ($(node --version)) | $rps | $p50 | $p99 | $p999 | keel's stream.isLive: $(awk -v k="$keel_rps" -v n="$rps" 'BEGIN {printf "%.1f", k/n}')x its rate | $rss |"
}
