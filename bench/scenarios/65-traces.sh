# What traces cost: GET /account (200 users) and POST /event with keel
# built without traces (the `traces` feature off: every trace check a
# constant), as shipped with traces off (no OTEL_* variable), and with
# traces on at 100 % sampling, exported to a collector on this machine
# that reads each export and discards it (the tests' OTLP receiver in
# --discard mode; it takes CPU from keel and wrk on these two cores, so
# the "on" rows include the collector's share); and on, with a collector
# that takes the connection and never answers (every export times out,
# the queue fills and spans are dropped: what a request pays for that).
# Run as ABCD DCBA after one unrecorded round of both endpoints (the
# first POST /event run writes into an empty table and was 30 % faster
# than any later one), each figure the mean of its two runs, so a drift
# of the machine's speed over the scenario cancels. Ratios are to the
# build without traces.

BENCH_TRACES_PORT=$((BENCH_PORT_BASE + 40))
BENCH_TRACES_HOLE=$((BENCH_PORT_BASE + 41))

bench_traces_keel() { # variant
  case "$1" in
    without) KEEL_BIN="$KEEL_NO_TRACES_BIN" bench_relaunch_keel ;;
    off) bench_relaunch_keel ;;
    on) bench_relaunch_keel OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$BENCH_TRACES_PORT" ;;
    hole) bench_relaunch_keel OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$BENCH_TRACES_HOLE" ;;
  esac
}

bench_scenario() { # backend floor
  [ -x "$KEEL_NO_TRACES_BIN" ] || keel_fail "missing $KEEL_NO_TRACES_BIN"
  local tokens receiver hole variant endpoint
  tokens=$(bench_accounts_tokens)
  "$CHECKERS_PYTHON" crates/testkit/checkers/otlp_receiver.py --discard --port "$BENCH_TRACES_PORT" >/dev/null &
  receiver=$!
  # Accepts connections and never reads or answers them.
  python3 -c 'import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", '"$BENCH_TRACES_HOLE"')); s.listen(1024); held = []
while True: held.append(s.accept()[0])' &
  hole=$!
  declare -A rps p50 p99 p999 runs
  BENCH_ADJACENT=0 BENCH_TOKENS=$tokens BENCH_METHOD=GET BENCH_PATH=/account \
    bench_wrk traces-warm-account "$(bench_url accounts /account)" bench/lua/authed.lua >/dev/null
  BENCH_ADJACENT=0 bench_wrk traces-warm-event "$(bench_url usage-alerts /event)" bench/lua/event.lua >/dev/null
  for variant in without off on hole hole on off without; do
    bench_traces_keel "$variant"
    for endpoint in account event; do
      local row r a b c d
      if [ "$endpoint" = account ]; then
        row=$(BENCH_ADJACENT=0 BENCH_TOKENS=$tokens BENCH_METHOD=GET BENCH_PATH=/account \
          bench_wrk "traces-$variant-account" "$(bench_url accounts /account)" bench/lua/authed.lua)
      else
        row=$(BENCH_ADJACENT=0 bench_wrk "traces-$variant-event" \
          "$(bench_url usage-alerts /event)" bench/lua/event.lua)
      fi
      read -r a b c d <<<"$row"
      r="$variant-$endpoint"
      rps[$r]=$(( ${rps[$r]:-0} + a ))
      p50[$r]="${p50[$r]:-}${p50[$r]:+/}$b"
      p99[$r]="${p99[$r]:-}${p99[$r]:+/}$c"
      p999[$r]="${p999[$r]:-}${p999[$r]:+/}$d"
      runs[$r]=$(( ${runs[$r]:-0} + 1 ))
    done
  done
  local received
  received=$(curl -fs "http://127.0.0.1:$BENCH_TRACES_PORT/received" || echo '{}')
  kill "$receiver" "$hole" 2>/dev/null
  bench_relaunch_keel
  for endpoint in account event; do
    local label base
    [ "$endpoint" = account ] && label="accounts GET /account" || label="usage-alerts POST /event"
    base=$(( ${rps[without-$endpoint]} / ${runs[without-$endpoint]} ))
    for variant in without off on hole; do
      local r="$variant-$endpoint" mean ratio name
      mean=$(( ${rps[$r]} / ${runs[$r]} ))
      ratio=$(awk -v a="$mean" -v b="$base" 'BEGIN {printf "%.1f%%", 100*a/b}')
      case "$variant" in
        without) name="built without traces" ;;
        off) name="traces off (as shipped)" ;;
        on) name="traces on, 100 % sampled" ;;
        hole) name="traces on, collector never answers" ;;
      esac
      echo "| $1 | $label, $name | $mean | ${p50[$r]} | ${p99[$r]} | ${p999[$r]} | $ratio of the build without | - |"
    done
  done
  echo "collector received: $received" >&2
}
