-- GET /svc/v1/register/status?push_token=... for the seeded devices
-- (ExponentPushToken[benchNNNNNNN], 1..$BENCH_DEVICES), taken in turn.
local devices = tonumber(os.getenv("BENCH_DEVICES") or "100000")
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local n = 0
request = function()
  n = n + 1
  local i = ((n * 7919 + tid * 104729) % devices) + 1
  return wrk.format("GET", string.format("/svc/v1/register/status?push_token=ExponentPushToken%%5Bbench%07d%%5D", i))
end
