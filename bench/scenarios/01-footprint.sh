# Footprint: the shipped binary's size (`--profile dist`), the first start
# (fresh database, migrations included) and a restart until all five
# listeners answer /healthz, and the resident memory of an idle `keel serve`
# (5 s after start, and settled at 15 s).
bench_scenario() { # backend floor
  local size first idle restart
  size=$(awk -v b="$(stat -c %s "$KEEL_BIN")" 'BEGIN {printf "%.1f MB", b/1e6}')
  first=$(cat "$BENCH_DIR/first_start_ms")
  idle=$(cat "$BENCH_DIR/idle_rss")
  bench_relaunch_keel
  restart=$(cat "$BENCH_DIR/last_start_ms")
  sleep 5
  local after5; after5=$(bench_rss)
  sleep 10
  echo "| $1 | start, fresh database, to 5 listeners healthy | - | ${first} ms | - | - | - | idle $idle |"
  echo "| $1 | restart to 5 listeners healthy | - | ${restart} ms | - | - | - | idle $after5, settled (15 s) $(bench_rss) |"
  echo "| $1 | shipped binary (dist: fat LTO, no debug info) | - | - | - | - | - | $size |"
}
