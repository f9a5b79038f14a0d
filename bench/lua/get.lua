-- GET $BENCH_PATH with the bearer token $BENCH_TOKEN.
local path = os.getenv("BENCH_PATH")
local token = os.getenv("BENCH_TOKEN")
request = function()
  return wrk.format("GET", path, { ["Authorization"] = "Bearer " .. token })
end
