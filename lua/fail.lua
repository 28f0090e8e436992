-- fail.lua: a job run ended badly: an error (attempts + 1) or a snooze (snoozes + 1, not an attempt).
-- Back to delayed, due after delayMs, or to dead once the cap is reached.
-- @keys queue
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg id string
-- @arg token string
-- @arg kind 'error' | 'snooze'
-- @arg error string the error message ('' for a snooze)
-- @arg delayMs int
-- @arg cap int maxAttempts for errors, maxSnoozes for snoozes; 0 for an error = a permanent one, dead at once
-- @arg maxDead int
-- @reply RETRYING | SNOOZED | DEAD | STALE STALE: nothing changed
--!include includes/job.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
-- The lease is the active member "<id> <token>": removing it is the fencing check.
local member = job_lease_member(ARGV[2], ARGV[3])
if not member or redis.call('HEXISTS', K.jobs, ARGV[2]) == 0 or redis.call('ZREM', K.active, member) == 0 then
  return ST.STALE
end
local r = job_get(K, ARGV[2])
job_flight_done(K, r.group, r.gc)
local cap, max_dead = tonumber(ARGV[7]), tonumber(ARGV[8])
local outcome
if ARGV[4] == 'snooze' then
  r.snoozes = r.snoozes + 1
  if r.snoozes > cap then
    job_kill(K, r, now, 'snoozed more than ' .. string.format('%d', cap) .. ' times', max_dead)
    job_keep(K, now, now, job_written_by_flight(K, K.dead, K.jobs))
    return ST.DEAD
  end
  outcome = ST.SNOOZED
else
  r.attempts = r.attempts + 1
  r.error = ARGV[5]
  -- the job's own maxAttempts (enqueue) over the worker's; a permanent error passes cap 0: dead at once
  if r.ma and cap > 0 then cap = r.ma end
  if r.attempts >= cap then
    job_kill(K, r, now, ARGV[5], max_dead)
    job_keep(K, now, now, job_written_by_flight(K, K.dead, K.jobs))
    return ST.DEAD
  end
  outcome = ST.RETRYING
end
r.state = 'waiting'; r.token = nil
r.runAt = now + tonumber(ARGV[6])
job_put(K, r)
redis.call('ZADD', K.delayed, r.runAt, job_member(r))
job_since_add(K, r.id, r.group, r.runAt)
job_keep(K, now, r.runAt, job_written_by_flight(K, K.delayed, K.jobs, K.since, K.gsince))
return outcome
