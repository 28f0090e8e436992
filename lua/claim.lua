-- claim.lua: moves the head of ready to active under a new lease with a fresh fencing token.
-- KEYS: the queue key block (includes/job.lua).
-- ARGV: 1 nowMs (0 = Redis TIME)  2 leaseMs
-- Reply: nil when ready is empty, else {id, type, group, payload, attempts, token, leaseUntil}.
--!include includes/job.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local lease_until = now + tonumber(ARGV[2])
-- A member whose record is gone (removed meanwhile) is dropped; look a few further.
for _ = 1, 10 do
  local m = redis.call('LPOP', K.ready)
  if not m then return nil end
  local r = job_get(K, (job_parse(m)))
  if r and r.state == 'waiting' then
    r.state = 'active'
    r.token = job_token(K, now)
    job_put(K, r)
    redis.call('ZADD', K.active, lease_until, r.id)
    return { r.id, r.type, r.group, r.payload, r.attempts, r.token, lease_until }
  end
end
return nil
