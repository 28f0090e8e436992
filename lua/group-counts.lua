-- group-counts.lua: how many jobs one group has waiting (delayed, pending, held or ready) and running.
-- KEYS: the queue key block (includes/job.lua).
-- ARGV: 1 nowMs (0 = Redis TIME)  2 group
-- Reply: {waiting, active}. active scans the leases (bounded by the workers' total concurrency).
--!include includes/job.lua
local K = job_keys()
local group = ARGV[2]
local active = 0
for _, m in ipairs(redis.call('ZRANGE', K.active, 0, -1)) do
  -- "<id> <seq>:<ms> <group>" (includes/job.lua)
  if string.match(m, '^%S+ %S+ (.*)$') == group then active = active + 1 end
end
local total = tonumber(redis.call('HGET', K.backlog, group) or '0')
return { math.max(0, total - active), active }
