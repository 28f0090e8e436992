-- dead-letters.lua: retry or remove one dead job (list-dead.lua lists them).
--   retry:  due now, attempts/stalls/snoozes reset.   remove: record and idempotency key deleted.
-- @keys queue
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg op 'retry' | 'remove'
-- @arg id string
-- @reply bool done; false when the job is not dead
--!include includes/job.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local op = ARGV[2]
local id = ARGV[3]
if redis.call('ZREM', K.dead, id) == 0 then return 0 end
local r = job_get(K, id)
if not r then return 0 end
if op == 'remove' then
  job_forget(K, r)
  return 1
end
r.state = 'waiting'; r.attempts = 0; r.stalls = 0; r.snoozes = 0
r.error = nil; r.finishedAt = nil; r.runAt = now
job_put(K, r)
redis.call('ZADD', K.delayed, now, job_member(r))
job_since_add(K, r.id, r.group, now)
job_backlog_add(K, r.group)
job_keep(K, now, now, { K.delayed, K.backlog, K.jobs, K.since, K.gsince })
return 1
