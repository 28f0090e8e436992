-- extend-lease.lua: renews the lease of a running job for its current holder.
-- @keys queue
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg id string
-- @arg token string
-- @arg leaseMs int
-- @reply bool renewed; false: stale (another claim holds the job, or it is no longer active)
--!include includes/job.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local member = job_lease_member(ARGV[2], ARGV[3])
if not member or not redis.call('ZSCORE', K.active, member) then return 0 end
redis.call('ZADD', K.active, now + tonumber(ARGV[4]), member)
return 1
