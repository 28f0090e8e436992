-- group-counts.lua: how many jobs one group has waiting (delayed, pending, held or ready) and running, and how
-- long its oldest due job not yet started has waited (the first of its lex range in gsince: O(log n)).
-- active scans the leases (bounded by the workers' total concurrency).
-- @keys queue
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg group string
-- @reply [waiting: int, active: int, oldestWaitingMs: int] oldestWaitingMs 0 when none of its jobs is due
--!include includes/job.lua
local K = job_keys()
local group = ARGV[2]
local active = 0
for _, m in ipairs(redis.call('ZRANGE', K.active, 0, -1)) do
  -- "<id> <seq>:<ms> <group>" (includes/job.lua)
  if string.match(m, '^%S+ %S+ (.*)$') == group then active = active + 1 end
end
local total = tonumber(redis.call('HGET', K.backlog, group) or '0')
local prefix = job_held_prefix(group)
local first = redis.call('ZRANGEBYLEX', K.gsince, '[' .. prefix, '(' .. prefix .. '\255', 'LIMIT', 0, 1)[1]
local oldest = 0
if first then
  local now = job_now_ms(ARGV[1])
  local since = tonumber(string.sub(first, #prefix + 1, #prefix + 15))
  if since < now then oldest = now - since end
end
return { math.max(0, total - active), active, oldest }
