# channel: the two public queries every viewer's page makes, stream.isLive
# (polled every 10 s by each viewer, served from a snapshot at most 0.5 s
# old) and channel.getInfo, at 64 connections; stream.isLive again as
# @trpc/client's httpBatchStreamLink asks (a batch of one, streamed as JSON
# Lines); then the channel page itself
# (GET / on channel-web: server-rendered from a snapshot at most 1 s old).
bench_scenario() { # backend floor
  local check
  bench_keel_cli channel owner set --email bench@example.com >/dev/null
  check=$(curl -s -o /dev/null -w "%{http_code}" "$(bench_url channel-api /api/trpc/stream.isLive)")
  [ "$check" = 200 ] || echo "warning: a trial stream.isLive answered $check" >&2
  check=$(curl -s -o /dev/null -w "%{http_code}" "$(bench_url channel-web /)")
  [ "$check" = 200 ] || echo "warning: a trial GET / answered $check" >&2
  bench_reset_peak
  bench_row "$1" "channel-api GET stream.isLive" "$2" \
    "$(bench_wrk islive "$(bench_url channel-api /api/trpc/stream.isLive)")"
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
}
