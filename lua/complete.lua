-- complete.lua: acknowledges a job run that succeeded; keeps the record keepMs, then trims it.
-- @keys queue
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg id string
-- @arg token string
-- @arg hasResult bool
-- @arg result string JSON text
-- @arg keepMs int
-- @arg trimPage int most expired completed records dropped per call
-- @reply bool completed; false: stale (unknown job, not active, or another claim's token: nothing changed)
--!include includes/job.lua
--!include includes/lease.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local completed = job_complete(K, now, ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7]))
job_keep(K, now, now + tonumber(ARGV[6]), job_written_by_flight(K, K.completed, K.jobs))
return completed
