-- complete.lua: acknowledges a job run that succeeded; keeps the record keepMs, then trims it.
-- KEYS: the queue key block (includes/job.lua).
-- ARGV: 1 nowMs (0 = Redis TIME)  2 id  3 token  4 hasResult (0/1)  5 result (JSON text)  6 keepMs
--       7 trimPage (most expired completed records dropped per call)
-- Reply: 1 completed, 0 stale (unknown job, not active, or another claim's token: nothing changed).
--!include includes/job.lua
--!include includes/lease.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local completed = job_complete(K, now, ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7]))
job_keep(K, now, now + tonumber(ARGV[6]), job_written_by_flight(K, K.completed, K.jobs))
return completed
