-- POST /svc/v1/submit/1 with the App Check token in $BENCH_TOKEN.
local token = os.getenv("BENCH_TOKEN")
local body = '{"fields":{"name":"Ada","email":"ada@example.com"}}'
request = function()
  return wrk.format("POST", "/svc/v1/submit/1",
    { ["Content-Type"] = "application/json", ["X-Vendor-AppCheck"] = token }, body)
end
