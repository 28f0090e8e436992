-- counts.lua: how many jobs are in each state, in one consistent snapshot (expired completed trimmed first).
-- KEYS: the queue key block (includes/job.lua).
-- ARGV: 1 nowMs (0 = Redis TIME)  2 trimPage
-- Reply: {delayed, pending (held jobs, waiting for a group concurrency slot, included), ready, active, completed, dead}
--!include includes/job.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
job_trim_completed(K, now, tonumber(ARGV[2]))
return {
  redis.call('ZCARD', K.delayed), redis.call('ZCARD', K.pending) + redis.call('ZCARD', K.held), redis.call('LLEN', K.ready),
  redis.call('ZCARD', K.active), redis.call('ZCARD', K.completed), redis.call('ZCARD', K.dead),
}
