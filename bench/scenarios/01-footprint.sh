# Footprint: the release binary's size, the first start (fresh database,
# migrations included) and a restart until all five listeners answer
# /healthz, and the resident memory of an idle `keel serve`.
bench_scenario() { # backend floor
  local size first idle restart
  size=$(awk -v b="$(stat -c %s "$KEEL_BIN")" 'BEGIN {printf "%.1f MB", b/1e6}')
  # What is shipped (`--profile dist`) carries no debug info.
  strip --strip-debug -o "$BENCH_DIR/keel.stripped" "$KEEL_BIN"
  local shipped
  shipped=$(awk -v b="$(stat -c %s "$BENCH_DIR/keel.stripped")" 'BEGIN {printf "%.1f MB", b/1e6}')
  first=$(cat "$BENCH_DIR/first_start_ms")
  idle=$(cat "$BENCH_DIR/idle_rss")
  bench_relaunch_keel
  restart=$(cat "$BENCH_DIR/last_start_ms")
  sleep 5
  echo "| $1 | start, fresh database, to 5 listeners healthy | - | ${first} ms | - | - | idle $idle |"
  echo "| $1 | restart to 5 listeners healthy | - | ${restart} ms | - | - | idle $(bench_rss) |"
  echo "| $1 | binary: release (line tables) / without debug info (dist) | - | - | - | - | $size / $shipped |"
}
