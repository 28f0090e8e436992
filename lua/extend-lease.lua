-- extend-lease.lua: renews the lease of a running job for its current holder.
-- KEYS: the queue key block (includes/job.lua).
-- ARGV: 1 nowMs (0 = Redis TIME)  2 id  3 token  4 leaseMs
-- Reply: 1 renewed, 0 stale (another claim holds the job, or it is no longer active).
--!include includes/job.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local r = job_get(K, ARGV[2])
if not r or r.state ~= 'active' or r.token ~= ARGV[3] then return 0 end
redis.call('ZADD', K.active, now + tonumber(ARGV[4]), r.id)
return 1
