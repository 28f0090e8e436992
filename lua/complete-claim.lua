-- complete-claim.lua: complete.lua then claim.lua in one call, so a worker acknowledges a finished job and
-- starts the next one in a single round trip. The claim happens whether or not the completion was stale.
-- @keys queue
-- @key overrides HASH group -> its override (includes/overrides.lua), read by the claim
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg config string the fair-share config block (fs_config)
-- @arg plans string JSON {plan: its rules' JSON array} for the plans whose rules differ from config's ('' = none)
-- @arg ack Ack the finished job, then the claim (includes/lease.lua)
-- @reply [completed: bool, claimed: LeasedJob[], wakeMs: int] completed false: stale; the claim as claim.lua's
--!include includes/fair-share.lua
--!include includes/job.lua
--!include includes/lease.lua
--!include includes/settle.lua
--!include includes/overrides.lua
--!include includes/claim.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local completed = job_complete(K, now, ARGV[4], ARGV[5], ARGV[6], ARGV[7], tonumber(ARGV[8]), tonumber(ARGV[9]))
local claimed, wake = {}, -1
-- Nothing ready: no budget to open (the common end of a drain).
if redis.call('LLEN', K.ready) > 0 then
  local fs = fs_open(K.groups, K.seen, fs_config(ARGV[2]), now * 1000)
  claimed, wake = job_claim(K, fs, tonumber(ARGV[10]), tonumber(ARGV[11]), nil, claim_plans(ARGV[3]), false, KEYS[20])
  fs_close(fs)
end
job_keep(K, now, now + tonumber(ARGV[8]), job_written_by_flight(K, K.completed, K.jobs, K.active, K.counters))
return { completed, claimed, wake }
