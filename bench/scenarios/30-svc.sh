# svc: POST /submit with a valid App Check token (RS256, keys from a local
# JWKS fetched once and cached), rate limit raised, at 64 connections;
# beside /healthz and its DB floor (the audit row and the submission, one
# transaction each).
bench_scenario() { # backend floor
  local dir="$BENCH_DIR/appcheck" token
  bench_appcheck
  token=$BENCH_APPCHECK_TOKEN
  echo '{"id": "1", "title": "Bench", "fields": [{"id": "name", "label": "Name", "type": "text", "required": true}, {"id": "email", "label": "Email", "type": "email", "required": true}]}' > "$dir/form.json"
  bench_keel_cli svc form put "$dir/form.json" >/dev/null
  bench_keel_cli svc settings set forms_allowlist 1 >/dev/null
  bench_keel_cli svc settings set submission_rate_limit 100000000 >/dev/null
  sleep 1.5
  local check
  check=$(curl -s -o /dev/null -w "%{http_code}" -X POST "$(bench_url svc /svc/v1/submit/1)" \
    -H "X-Vendor-AppCheck: $token" -H "Content-Type: application/json" \
    -d '{"fields":{"name":"Ada","email":"ada@example.com"}}')
  [ "$check" = 200 ] || echo "warning: a trial submission answered $check" >&2
  bench_reset_peak
  local row
  row=$(BENCH_TOKEN=$token bench_wrk submit "$(bench_url svc /svc/v1/submit/1)" bench/lua/submit.lua)
  bench_row "$1" "svc POST /submit (App Check verified)" "$2" "$row"
  bench_floor_rows "$1" "svc POST /submit (audit row + insert)" "$(bench_db_floor "$1" submit submit)" "$row"
  kill "$BENCH_AUX_PID" 2>/dev/null
  BENCH_AUX_PID=""
}
