-- POST /auth/login as a user picked at random: scale1..scale$BENCH_LOGIN_USERS
-- (seeded copies of bench1, the same password), or bench1..bench200 when
-- it is unset.
local count = tonumber(os.getenv("BENCH_LOGIN_USERS") or "0")
local prefix = count > 0 and "scale" or "bench"
if count == 0 then count = 200 end
math.randomseed(os.time())
request = function()
  local body = "login=" .. prefix .. math.random(1, count) .. "&password=bench-Password-4-keel"
  return wrk.format("POST", "/auth/login",
    { ["Content-Type"] = "application/x-www-form-urlencoded" }, body)
end
