-- cancel.lua: removes a job that has not started: waiting in delayed, pending, held or ready. Its record and
-- idempotency key go, and its group's backlog (and concurrency slot, if it was ready) is freed.
-- @keys queue
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg id string
-- @reply bool cancelled; false when unknown, running, completed or dead (nothing changed)
--!include includes/job.lua
local K = job_keys()
local raw = redis.call('HGET', K.jobs, ARGV[2])
if not raw or not string.find(raw, '"state":"waiting"', 1, true) then return 0 end
local r = cjson.decode(raw)
local m = job_member(r)
local removed = redis.call('ZREM', K.delayed, m) + redis.call('ZREM', K.pending, m)
  + redis.call('ZREM', K.held, job_held_prefix(r.group) .. m)
if removed == 0 then
  -- ready is bounded (readyMax); a job in none of the waiting sets is leased: running, not cancellable
  if redis.call('LREM', K.ready, 1, m) == 0 then return 0 end
  job_flight_done(K, r.group, r.gc)
end
job_since_done(K, r.id, r.group)
job_forget(K, r)
job_backlog_done(K, r.group)
local now = job_now_ms(ARGV[1])
job_keep(K, now, now, job_written_by_flight(K))
return 1
