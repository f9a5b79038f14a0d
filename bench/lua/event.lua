-- POST /event as 200 development-mode users (the token names the user).
local users = tonumber(os.getenv("BENCH_USERS") or "200")
local body = '{"sessionId":"s%d","timestamp":"2026-11-22T10:00:00Z","model":"claude",'
  .. '"inputTokens":120,"outputTokens":80,"cacheReadTokens":10,"cacheWriteTokens":5,"costUSD":0.0021}'
local i = 0

request = function()
  i = i + 1
  local u = i % users
  return wrk.format("POST", "/event",
    { ["Authorization"] = "Bearer bench-user-" .. u, ["Content-Type"] = "application/json" },
    string.format(body, i % 7))
end
