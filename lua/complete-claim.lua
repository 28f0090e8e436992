-- complete-claim.lua: complete.lua then claim.lua in one call, so a worker acknowledges a finished job and
-- takes the next one in a single round trip. The claim happens whether or not the completion was stale.
-- KEYS: the queue key block (includes/job.lua).
-- ARGV: 1 nowMs (0 = Redis TIME)  2 id  3 token  4 hasResult (0/1)  5 result (JSON text)  6 keepMs
--       7 trimPage  8 leaseMs  9 max (jobs to claim, 1..1000)
-- Reply: {completed (1 | 0 stale), {claimed jobs as in claim.lua}}
--!include includes/job.lua
--!include includes/lease.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local completed = job_complete(K, now, ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7]))
return { completed, job_claim(K, now, now + tonumber(ARGV[8]), tonumber(ARGV[9])) }
