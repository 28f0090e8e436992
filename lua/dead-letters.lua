-- dead-letters.lua: list, retry or remove dead jobs.
-- KEYS: the queue key block (includes/job.lua).
-- ARGV: 1 nowMs (0 = Redis TIME)  2 op ('list' | 'retry' | 'remove')
--       list:   3 offset  4 count (≤ 1000) → array of record JSON, newest death first
--       retry:  3 id                   → 1, or 0 when not dead. Due now, attempts/stalls/snoozes reset.
--       remove: 3 id                   → 1, or 0 when not dead. Record and idempotency key deleted.
--!include includes/job.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local op = ARGV[2]
if op == 'list' then
  local offset, count = math.max(0, math.floor(tonumber(ARGV[3]))), math.min(math.floor(tonumber(ARGV[4])), 1000)
  if count <= 0 then return {} end
  local ids = redis.call('ZREVRANGE', K.dead, offset, offset + count - 1)
  if #ids == 0 then return {} end
  local raws = redis.call('HMGET', K.jobs, unpack(ids))
  local out = {}
  for i = 1, #ids do
    if raws[i] then out[#out + 1] = raws[i] end
  end
  return out
end
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
