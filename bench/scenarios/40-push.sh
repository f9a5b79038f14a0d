# svc push: a send to BENCH_PUSH_DEVICES (default 100,000) active devices
# through the fake Expo, first under Expo's 600/s limit, then with the limit
# lifted (keel's own ceiling, compared to the fake driven directly by wrk
# with 6 connections and 100 notifications a request); the fake's count
# shows every device got exactly one. Then the CSV export of those devices
# (time, peak RSS), GET /register/status of the seeded devices and POST
# /register at 64 connections, each beside its DB floor.

PUSH_DEVICES="${BENCH_PUSH_DEVICES:-100000}"

bench_scenario() { # backend floor
  local backend=$1 healthz=$2
  bench_seed_devices "$backend" "$PUSH_DEVICES"
  bench_keel_cli svc admin add bench >/dev/null
  local pw auth
  pw=$(bench_keel_cli svc app-password add bench bench | awk -F': ' '{print $NF}' | tr -d ' ')
  auth="bench:$pw"

  # The floor: the fake Expo driven directly.
  bench_fake_expo 0
  local floor_row floor_rps floor_msgs
  floor_row=$(BENCH_ADJACENT=0 CONNECTIONS=6 bench_wrk expo-floor "http://127.0.0.1:$EXPO_PORT/--/api/v2/push/send" bench/lua/expo-batch.lua)
  read -r floor_rps _ _ <<<"$floor_row"
  floor_msgs=$((floor_rps * 100))
  echo "| $backend | fake Expo driven directly (6 connections, 100 a request) | $floor_msgs msg/s | - | - | - | (floor) | - |"

  local secs rate exact
  bench_fake_expo 600
  bench_reset_peak
  read -r secs rate exact <<<"$(bench_push_send "$auth")"
  echo "| $backend | push send to $PUSH_DEVICES devices, Expo limit 600/s: ${secs}s, each exactly once: $exact | $rate msg/s | - | - | - | $(awk -v r="$rate" 'BEGIN {printf "%.0f%%", 100*r/600}') of 600/s | $(bench_peak_rss) |"

  bench_relaunch_keel KEEL_EXPO_RATE_PER_SECOND=0
  bench_fake_expo 0
  bench_reset_peak
  read -r secs rate exact <<<"$(bench_push_send "$auth")"
  echo "| $backend | push send to $PUSH_DEVICES devices, no limit: ${secs}s, each exactly once: $exact | $rate msg/s | - | - | - | $(awk -v r="$rate" -v f="$floor_msgs" 'BEGIN {printf "%.0f%%", 100*r/f}') of the fake's floor | $(bench_peak_rss) |"
  kill "$EXPO_PID" 2>/dev/null; EXPO_PID=""

  bench_reset_peak
  local t0 t1 lines
  t0=$(date +%s.%N)
  lines=$(curl -fsS -u "$auth" "$(bench_url svc /svc/v1/devices/export)" | wc -l)
  t1=$(date +%s.%N)
  echo "| $backend | GET /devices/export: $((lines - 1)) devices in $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2fs", b-a}') | - | - | - | - | - | $(bench_peak_rss) |"

  local row
  bench_reset_peak
  row=$(BENCH_DEVICES=$PUSH_DEVICES bench_wrk register-status "$(bench_url svc /svc/v1/register/status)" bench/lua/register-status.lua)
  bench_row "$backend" "svc GET /register/status (one of $PUSH_DEVICES devices)" "$healthz" "$row"
  local floor
  if [ "$backend" = postgres ]; then
    floor=$(bench_pgbench register-status -D devices="$PUSH_DEVICES")
  else
    floor=$(bench_sqlite_floor register-status)
  fi
  bench_floor_rows "$backend" "svc GET /register/status" "$floor" "$row"

  bench_appcheck
  sleep 1.5
  bench_reset_peak
  row=$(BENCH_TOKEN=$BENCH_APPCHECK_TOKEN bench_wrk register "$(bench_url svc /svc/v1/register)" bench/lua/register.lua)
  bench_row "$backend" "svc POST /register (new device each request)" "$healthz" "$row"
  bench_floor_rows "$backend" "svc POST /register (the upsert)" "$(bench_db_floor "$backend" register register)" "$row"
  kill "$BENCH_AUX_PID" 2>/dev/null
  BENCH_AUX_PID=""
}
