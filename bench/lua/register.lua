-- POST /svc/v1/register with the App Check token in $BENCH_TOKEN; every
-- request registers a new device (a token of its own per thread and count).
local token = os.getenv("BENCH_TOKEN")
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local n = 0
request = function()
  n = n + 1
  local body = string.format(
    '{"push_token":"ExponentPushToken[wrk%d-%d]","device_type":"ios","app_version":"2.0.0","locale":"en-US","timezone":"Europe/Berlin"}',
    tid, n)
  return wrk.format("POST", "/svc/v1/register",
    { ["Content-Type"] = "application/json", ["X-Vendor-AppCheck"] = token }, body)
end
