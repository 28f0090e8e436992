-- complete-claim.lua: complete.lua then claim.lua in one call, so a worker acknowledges a finished job and
-- starts the next one in a single round trip. The claim happens whether or not the completion was stale.
-- KEYS: the queue key block (includes/job.lua).
-- ARGV: 1 nowMs (0 = Redis TIME)  2 the fair-share config block  3 id  4 token  5 hasResult (0/1)
--       6 result (JSON text)  7 keepMs  8 trimPage  9 leaseMs  10 max (jobs to claim, 1..1000)
-- Reply: {completed (1 | 0 stale), {claimed jobs as in claim.lua}, wakeMs as in claim.lua}
--!include includes/fair-share.lua
--!include includes/job.lua
--!include includes/lease.lua
--!include includes/claim.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local completed = job_complete(K, now, ARGV[3], ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7]), tonumber(ARGV[8]))
local claimed, wake = {}, -1
-- Nothing ready: no budget to open (the common end of a drain).
if redis.call('LLEN', K.ready) > 0 then
  local fs = fs_open(K.groups, K.seen, fs_config(ARGV[2]), now * 1000)
  claimed, wake = job_claim(K, fs, tonumber(ARGV[9]), tonumber(ARGV[10]))
  fs_close(fs)
end
job_keep(K, now, now + tonumber(ARGV[7]), job_written_by_flight(K, K.completed, K.jobs, K.active, K.counters))
return { completed, claimed, wake }
