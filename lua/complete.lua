-- complete.lua: acknowledges a job run that succeeded; keeps the record keepMs, then trims it.
-- KEYS: the queue key block (includes/job.lua).
-- ARGV: 1 nowMs (0 = Redis TIME)  2 id  3 token  4 hasResult (0/1)  5 result (JSON text)  6 keepMs
--       7 trimPage (most expired completed records dropped per call)
-- Reply: 1 completed, 0 stale (unknown job, not active, or another claim's token: nothing changed).
--!include includes/job.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local keep = tonumber(ARGV[6])
local r = job_get(K, ARGV[2])
if not r or r.state ~= 'active' or r.token ~= ARGV[3] then return 0 end
redis.call('ZREM', K.active, r.id)
job_backlog_done(K, r.group)
if keep <= 0 then
  job_forget(K, r)
else
  r.state = 'completed'; r.token = nil; r.finishedAt = now; r.error = nil
  if ARGV[4] == '1' then r.result = ARGV[5] end
  job_put(K, r)
  redis.call('ZADD', K.completed, now + keep, r.id)
end
job_trim_completed(K, now, tonumber(ARGV[7]))
return 1
