-- Wraps every wrk run (bench_wrk): runs the scenario's own script, named by
-- BENCH_LUA (none: plain GETs of the URL), and adds the p99.9 latency to
-- the report, which wrk's --latency stops at p99.
local inner = os.getenv("BENCH_LUA")
if inner and inner ~= "" then
  dofile(inner)
end

function done(summary, latency, requests)
  io.write(string.format("p99.9 %.2fms\n", latency:percentile(99.9) / 1000))
end
