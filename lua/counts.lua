-- counts.lua: how many jobs are in each state, in one consistent snapshot (expired completed trimmed first),
-- and how long the oldest waiting job has waited: due (its since time ≤ now) but not started, whichever set
-- it is in (includes/job.lua, since). One ZRANGE of the first member: O(log n).
-- @keys queue
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg trimPage int
-- @reply [delayed: int, pending: int, ready: int, active: int, completed: int, dead: int, oldestWaitingMs: int]
--   pending includes the held jobs (waiting for a group concurrency slot); oldestWaitingMs 0 when no job is due
--!include includes/job.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
job_trim_completed(K, now, tonumber(ARGV[2]))
local first = redis.call('ZRANGE', K.since, 0, 0, 'WITHSCORES')
local oldest = 0
if first[2] and tonumber(first[2]) < now then oldest = now - tonumber(first[2]) end
return {
  redis.call('ZCARD', K.delayed), redis.call('ZCARD', K.pending) + redis.call('ZCARD', K.held), redis.call('LLEN', K.ready),
  redis.call('ZCARD', K.active), redis.call('ZCARD', K.completed), redis.call('ZCARD', K.dead), oldest,
}
