# Ten times the data: each cost measured at 1x and again at 10x (or more)
# in the same run, so the table shows how it grows with the data.
#
# - svc push: a send to BENCH_SCALE_PUSH devices (default 100,000), then to
#   ten times as many, through the fake Expo without a rate limit: time,
#   every device exactly once, keel's peak resident memory, PostgreSQL's
#   (the sum of its processes' proportional set size, sampled), and one
#   GET /send/{id} of the finished send.
# - accounts: sign-in, GET /account and POST /goals/weekly of the
#   benchmark's 200 users with 1,000 users stored, then with
#   BENCH_SCALE_USERS (default 1,000,000).
# - usage-alerts: POST /event and GET /history?offset=0 of a user with
#   1,000 events while the table holds BENCH_SCALE_EVENTS / 10 events, then
#   BENCH_SCALE_EVENTS (default 10,000,000), and of the user who holds them.
# BENCH_SCALE_PARTS names the curves to draw (default "push accounts events").
#
# Each 10x row's last-but-one column is its cost per unit of work against
# the 1x row (1.00: flat); the points are kept in bench/results/<run>-scale.tsv
# and drawn in <run>-scale.svg.

SCALE_PUSH="${BENCH_SCALE_PUSH:-100000}"
SCALE_USERS="${BENCH_SCALE_USERS:-1000000}"
SCALE_EVENTS="${BENCH_SCALE_EVENTS:-10000000}"
# Which curves: any of push, accounts, events.
SCALE_PARTS="${BENCH_SCALE_PARTS:-push accounts events}"

# A point of a curve: backend metric size value unit (per unit of work:
# "s" for a whole send, "rps" for a rate).
bench_scale_point() {
  [ -n "${BENCH_SCALE_TSV:-}" ] && printf '%s\t%s\t%s\t%s\t%s\n' "$@" >> "$BENCH_SCALE_TSV"
  return 0
}

# "x.xx of 1x": the cost per unit of work at this size against the first
# point of the same curve. For a rate, cost is 1/rate; for a send, seconds
# per device.
bench_scale_ratio() { # backend metric size value unit
  [ -n "${BENCH_SCALE_TSV:-}" ] || { echo "-"; return; }
  awk -F'\t' -v b="$1" -v m="$2" -v n="$3" -v v="$4" -v u="$5" '
    $1 == b && $2 == m && first == "" {first = $4; size = $3}
    END {
      if (first == "" || n == size) {print "(1x)"; exit}
      if (v == 0) {print "-"; exit}
      if (u == "rps") r = first / v
      else if (u == "s-flat") r = v / first
      else r = (v / n) / (first / size)
      printf "%.2f of 1x", r
    }' "$BENCH_SCALE_TSV"
}

# PostgreSQL's memory: the proportional set size of all its processes (its
# shared buffers are counted once, not once per backend), in MiB.
bench_pg_pss() {
  local pid total=0 kb
  for pid in $(pgrep -x postgres); do
    kb=$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null)
    total=$((total + ${kb:-0}))
  done
  echo $((total / 1024))
}

# Samples PostgreSQL's memory every 0.2 s into FILE (the highest) until
# the file STOP exists.
bench_pg_peak_sampler() { # file stop
  local peak=0 now
  while [ ! -e "$2" ]; do
    now=$(bench_pg_pss)
    [ "$now" -gt "$peak" ] && peak=$now && echo "$peak" > "$1"
    sleep 0.2
  done
}

bench_scale_push() { # backend auth size
  local backend=$1 auth=$2 size=$3 secs rate exact db_peak="in keel's" t
  PUSH_DEVICES=$size
  bench_fake_expo 0
  bench_reset_peak
  local stop="$BENCH_DIR/pg-sampler-stop" peakf="$BENCH_DIR/pg-peak"
  rm -f "$stop" "$peakf"
  local sampler=""
  if [ "$backend" = postgres ]; then
    bench_pg_peak_sampler "$peakf" "$stop" &
    sampler=$!
  fi
  read -r secs rate exact <<<"$(bench_push_send "$auth")"
  touch "$stop"
  if [ -n "$sampler" ]; then
    wait "$sampler"
    db_peak="PostgreSQL $(cat "$peakf" 2>/dev/null || echo '?') MiB"
  fi
  # The finished send's progress, as a client polls it: the median of 5.
  t=$(for _ in 1 2 3 4 5; do
        curl -fsS -o /dev/null -w '%{time_total}\n' -u "$auth" "$(bench_url svc "/svc/v1/send/$(cat "$BENCH_DIR/last_send_id")")"
      done | sort -n | sed -n 3p)
  bench_scale_point "$backend" push "$size" "$secs" s
  bench_scale_point "$backend" send-progress "$size" "$t" s-flat
  echo "| $backend | scale: push to $size devices, no limit: ${secs}s, each exactly once: $exact; GET /send/{id} $(awk -v t="$t" 'BEGIN {printf "%.1f ms", t*1000}') | $rate msg/s | - | - | - | $(bench_scale_ratio "$backend" push "$size" "$secs" s) | $(bench_peak_rss); $db_peak |"
  kill "$EXPO_PID" 2>/dev/null; EXPO_PID=""
}

bench_scale_accounts() { # backend label tokens size
  local backend=$1 tokens=$3 size=$4 row rps
  bench_reset_peak
  row=$(CONNECTIONS=8 BENCH_ADJACENT=0 bench_wrk "login-$size" "$(bench_url accounts /auth/login)" bench/lua/login.lua)
  read -r rps _ <<<"$row"
  bench_scale_point "$backend" sign-in "$size" "$rps" rps
  bench_row "$backend" "scale: POST /auth/login (8 connections), $2 users" "" "$row" | bench_scale_vs "$backend" sign-in "$size" "$rps"
  local what path method body
  for what in account goal; do
    if [ "$what" = account ]; then
      method=GET path=/account body=""
    else
      # Room under the 1,000 goals a user may have.
      method=POST path=/goals/weekly body=title=scale
      bench_sql "$backend" "DELETE FROM accounts_weekly_goals"
    fi
    bench_reset_peak
    row=$(BENCH_TOKENS=$tokens BENCH_METHOD=$method BENCH_PATH=$path BENCH_BODY=$body BENCH_ADJACENT=0 \
      bench_wrk "scale-$what-$size" "$(bench_url accounts $path)" bench/lua/authed.lua)
    read -r rps _ <<<"$row"
    bench_scale_point "$backend" "$method $path" "$size" "$rps" rps
    bench_row "$backend" "scale: $method $path, $2 users" "" "$row" | bench_scale_vs "$backend" "$method $path" "$size" "$rps"
  done
}

# Fresh access tokens of bench1..bench200 (those registered earlier in the
# run may have expired by now); prints the file.
bench_scale_tokens() {
  local file="$BENCH_DIR/scale-tokens.txt"
  bench_accounts_answers "$file" /auth/login "login=bench{}&password=bench-Password-4-keel"
  echo "$file"
}

# Puts the curve's ratio in a bench_row line's "vs" column.
bench_scale_vs() { # backend metric size rps
  local ratio
  ratio=$(bench_scale_ratio "$1" "$2" "$3" "$4" rps)
  awk -F'|' -v r=" $ratio " 'BEGIN {OFS="|"} {$8 = r; print}'
}

# Events FROM..TO of USER straight into the table, with ids that sort by
# time as keel's own (UUIDv7) do.
bench_scale_seed_events() { # backend user from to
  local cols="id, user_id, session_id, timestamp, model, input_tokens, output_tokens, cache_read_tokens,
    cache_write_tokens, cost_usd, created_at"
  if [ "$1" = postgres ]; then
    bench_sql postgres "INSERT INTO ua_events ($cols)
      SELECT '00000000-0000-7000-8000-' || lpad(to_hex(i), 12, '0'), '$2', 'seed', '2026-01-01T00:00:00Z', 'claude',
             1, 1, 0, 0, 0.000001, now() - interval '1 day' FROM generate_series($3, $4) i; ANALYZE ua_events"
  else
    bench_sql sqlite "PRAGMA cache_size = -262144;
      WITH RECURSIVE s(i) AS (SELECT $3 UNION ALL SELECT i + 1 FROM s WHERE i < $4)
      INSERT INTO ua_events ($cols) SELECT printf('00000000-0000-7000-8000-%012x', i), '$2', 'seed',
             '2026-01-01T00:00:00Z', 'claude', 1, 1, 0, 0, 0.000001, '2026-01-01T00:00:00+00:00' FROM s; ANALYZE"
  fi
}

bench_scale_history() { # backend events
  local backend=$1 events=$2 who token row rps label
  for who in small big; do
    token="scale-$who"
    [ "$who" = big ] && label="the user holding them" || label="a user with 1,000"
    bench_reset_peak
    row=$(BENCH_TOKEN=$token BENCH_ADJACENT=0 bench_wrk "scale-event-$who" "$(bench_url usage-alerts /event)" bench/lua/post-one.lua)
    read -r rps _ <<<"$row"
    bench_scale_point "$backend" "POST /event ($who)" "$events" "$rps" rps
    bench_row "$backend" "scale: POST /event, $events events stored, $label" "" "$row" \
      | bench_scale_vs "$backend" "POST /event ($who)" "$events" "$rps"
    bench_reset_peak
    row=$(BENCH_TOKEN=$token BENCH_PATH=/history?offset=0 BENCH_ADJACENT=0 bench_wrk "scale-history-$who" "$(bench_url usage-alerts /history)" bench/lua/get.lua)
    read -r rps _ <<<"$row"
    bench_scale_point "$backend" "GET /history ($who)" "$events" "$rps" rps
    bench_row "$backend" "scale: GET /history?offset=0, $events events stored, $label" "" "$row" \
      | bench_scale_vs "$backend" "GET /history ($who)" "$events" "$rps"
  done
}

bench_scenario() { # backend floor
  local backend=$1
  case " $SCALE_PARTS " in *" push "*) bench_scale_push_curve "$backend" ;; esac
  case " $SCALE_PARTS " in *" accounts "*) bench_scale_accounts_curve "$backend" ;; esac
  case " $SCALE_PARTS " in *" events "*) bench_scale_events_curve "$backend" ;; esac
}

bench_scale_push_curve() { # backend
  local backend=$1
  bench_keel_cli svc admin add scale >/dev/null
  local pw auth
  pw=$(bench_keel_cli svc app-password add scale scale | awk -F': ' '{print $NF}' | tr -d ' ')
  auth="scale:$pw"
  bench_relaunch_keel KEEL_EXPO_RATE_PER_SECOND=0
  bench_sql "$backend" "DELETE FROM svc_push_devices"
  bench_seed_devices "$backend" "$SCALE_PUSH"
  bench_scale_push "$backend" "$auth" "$SCALE_PUSH"
  bench_sql "$backend" "DELETE FROM svc_push_devices"
  bench_seed_devices "$backend" "$((SCALE_PUSH * 10))"
  bench_scale_push "$backend" "$auth" "$((SCALE_PUSH * 10))"
}

bench_scale_accounts_curve() { # backend
  local backend=$1
  local tokens
  bench_accounts_tokens >/dev/null
  tokens=$(bench_scale_tokens)
  bench_scale_seed_users "$backend" 1 800
  BENCH_LOGIN_USERS=800 bench_scale_accounts "$backend" "1,000" "$tokens" 1000
  bench_scale_seed_users "$backend" 801 "$((SCALE_USERS - 200))"
  BENCH_LOGIN_USERS=$((SCALE_USERS - 200)) \
  bench_scale_accounts "$backend" "$SCALE_USERS" "$tokens" "$SCALE_USERS"
}

bench_scale_events_curve() { # backend
  local backend=$1
  local tenth=$((SCALE_EVENTS / 10))
  bench_scale_seed_events "$backend" "$(bench_dev_user scale-small)" 1 1000
  bench_scale_seed_events "$backend" "$(bench_dev_user scale-big)" 1001 "$tenth"
  bench_scale_history "$backend" "$tenth"
  bench_scale_seed_events "$backend" "$(bench_dev_user scale-big)" "$((tenth + 1))" "$SCALE_EVENTS"
  bench_scale_history "$backend" "$SCALE_EVENTS"
}
