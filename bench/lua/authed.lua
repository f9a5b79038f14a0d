-- Requests with a bearer token taken in turn from $BENCH_TOKENS (one per line).
-- $BENCH_METHOD, $BENCH_PATH, $BENCH_BODY (form-urlencoded) choose the request.
local tokens = {}
for line in io.lines(os.getenv("BENCH_TOKENS")) do
  if #line > 0 then tokens[#tokens + 1] = line end
end
local method = os.getenv("BENCH_METHOD") or "GET"
local path = os.getenv("BENCH_PATH") or "/"
local body = os.getenv("BENCH_BODY")
local i = 0

request = function()
  i = i + 1
  local headers = { ["Authorization"] = "Bearer " .. tokens[(i % #tokens) + 1] }
  if body then headers["Content-Type"] = "application/x-www-form-urlencoded" end
  return wrk.format(method, path, headers, body)
end
