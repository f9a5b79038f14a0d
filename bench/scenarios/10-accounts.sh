# accounts: GET /account and POST /goals/weekly with valid tokens of 200 users.
bench_accounts_tokens() {
  local file="$BENCH_DIR/accounts-tokens.txt" dir="$BENCH_DIR/registrations"
  if [ ! -s "$file" ]; then
    mkdir -p "$dir"
    # One file per response: parallel writers to one pipe would interleave.
    seq 1 200 | xargs -P 8 -I{} curl -fs -o "$dir/{}.json" -X POST "$(bench_url accounts /auth/register)" \
      -d "username=bench{}&email=bench{}@example.com&password=benchpassword"
    grep -ho '"accessToken":"[^"]*"' "$dir"/*.json | cut -d'"' -f4 > "$file"
    [ "$(wc -l < "$file")" -ge 200 ] || keel_fail "could not register the benchmark users"
  fi
  echo "$file"
}

bench_scenario() { # backend floor
  local tokens
  tokens=$(bench_accounts_tokens)
  bench_reset_peak
  bench_row "$1" "accounts GET /account" "$2" \
    "$(BENCH_TOKENS=$tokens BENCH_METHOD=GET BENCH_PATH=/account \
       bench_wrk account "$(bench_url accounts /account)" bench/lua/authed.lua)"
  bench_reset_peak
  bench_row "$1" "accounts POST /goals/weekly" "$2" \
    "$(BENCH_TOKENS=$tokens BENCH_METHOD=POST BENCH_PATH=/goals/weekly BENCH_BODY=title=bench \
       bench_wrk goals "$(bench_url accounts /goals/weekly)" bench/lua/authed.lua)"
}
