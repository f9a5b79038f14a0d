-- POST /svc/v1/admin/login with a wrong password, each request as another
-- username from another address (X-Forwarded-For: keel is started with
-- 127.0.0.1 as a trusted proxy), so no per-name or per-address limit
-- stops it: every request reaches the hashing slots, as a flood from many
-- addresses would.
math.randomseed(os.time())
request = function()
  local body = '{"username":"flood' .. math.random(1, 1000000000) .. '","password":"guess"}'
  local ip = "10." .. math.random(0, 255) .. "." .. math.random(0, 255) .. "." .. math.random(1, 254)
  return wrk.format("POST", "/svc/v1/admin/login",
    { ["Content-Type"] = "application/json", ["X-Forwarded-For"] = ip }, body)
end
