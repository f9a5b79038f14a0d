# soak: BENCH_SOAK_SECS (default 600) of steady mixed traffic on every
# service at BENCH_SOAK_RATE requests a second (default 300), with data that
# grows (users and goals, events, devices, submissions, a push send to
# every device each minute) and error answers among them, Redis on, while
# keel's resident memory, open descriptors, database and Redis connections
# are sampled every 5 s (bench/soak.py); the pool closes idle connections
# after 30 s here, so the descriptors can be seen coming back. The curves are drawn to an SVG
# beside the results. Runs only when named: BENCH_ONLY=soak bench/run.
bench_scenario() { # backend floor
  local backend=$1 secs="${BENCH_SOAK_SECS:-600}" out="$BENCH_DIR/soak"
  mkdir -p "$out"
  bench_ensure_gnuplot
  bench_fake_expo 0
  bench_relaunch_keel REDIS_URL=redis://127.0.0.1:6379 "KEEL_REDIS_PREFIX=bench-soak-$$:" KEEL_EXPO_RATE_PER_SECOND=0 \
    KEEL_DB_IDLE_SECS=30
  bench_keel_cli svc admin add soak >/dev/null
  local pw
  pw=$(bench_keel_cli svc app-password add soak soak | awk -F': ' '{print $NF}' | tr -d ' ')
  echo '{"id": "1", "title": "Soak", "fields": [{"id": "name", "label": "Name", "type": "text", "required": true}, {"id": "email", "label": "Email", "type": "email", "required": true}]}' > "$out/form.json"
  bench_keel_cli svc form put "$out/form.json" >/dev/null
  local kv
  for kv in "push_enabled true" "appcheck_project_number 123456789" \
    "appcheck_debug_tokens soak-debug-token" "forms_allowlist 1" "submission_rate_limit 100000000"; do
    # shellcheck disable=SC2086
    bench_keel_cli svc settings set $kv >/dev/null
  done
  local summary stamp
  summary=$(ACCOUNTS=$(bench_url accounts '') USAGE_ALERTS=$(bench_url usage-alerts '') \
    SVC=$(bench_url svc '') CHANNEL_API=$(bench_url channel-api '') APPCHECK=soak-debug-token \
    ADMIN_BASIC="soak:$pw" PG_DB="${BENCH_PG_DB:-}" \
    python3 bench/soak.py "$secs" "$(bench_keel_pid)" "$backend" "$out" | tail -n1)
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  cp "$out/soak.csv" "bench/results/$stamp-soak-$backend.csv"
  cp "$out/soak.json" "bench/results/$stamp-soak-$backend.json"
  gnuplot <<GP 2>/dev/null || echo "warning: gnuplot could not draw the soak" >&2
set terminal svg size 900,600 dynamic
set output "bench/results/$stamp-soak-$backend.svg"
set datafile separator ","
set key autotitle columnhead
set multiplot layout 2,1 title "keel soak on $backend: ${secs}s of mixed traffic"
set xlabel "seconds"
set ylabel "RSS (MiB)"
plot "$out/soak.csv" using 1:2 with linespoints title "resident memory"
set ylabel "count"
plot "$out/soak.csv" using 1:3 with lines title "open descriptors", \
     "$out/soak.csv" using 1:6 with lines title "sockets", \
     "$out/soak.csv" using 1:(\$4 eq "" ? NaN : \$4) with lines title "database connections", \
     "$out/soak.csv" using 1:5 with lines title "Redis clients"
unset multiplot
GP
  echo "soak $backend: $summary (curves: bench/results/$stamp-soak-$backend.svg)" >&2
  echo "$summary" | python3 bench/soak_row.py "$backend"
  kill "$EXPO_PID" 2>/dev/null || true
  EXPO_PID=""
}
