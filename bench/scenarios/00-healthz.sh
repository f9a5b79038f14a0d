# The floor: GET /healthz, no database, no auth.
bench_scenario() { # backend floor
  bench_reset_peak
  bench_row "$1" "GET /healthz" "$2" "$(BENCH_ADJACENT=0 bench_wrk healthz "$(bench_url accounts /healthz)")"
}
