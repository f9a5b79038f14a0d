-- POST /event as one user ($BENCH_TOKEN).
local token = os.getenv("BENCH_TOKEN")
local body = '{"sessionId":"big","timestamp":"2026-11-22T10:00:00Z","model":"claude",'
  .. '"inputTokens":120,"outputTokens":80,"cacheReadTokens":10,"cacheWriteTokens":5,"costUSD":0.0021}'
request = function()
  return wrk.format("POST", "/event",
    { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" }, body)
end
