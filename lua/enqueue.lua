-- enqueue.lua: writes one job straight into the fair queue (the same write admit.lua makes on deferral).
-- @keys queue
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg group string
-- @arg weight int
-- @arg cost int
-- @arg type string
-- @arg payload string JSON text
-- @arg idempotencyKey string '' = none
-- @arg maxBacklog int
-- @arg delayMs int
-- @arg maxDeferMs int
-- @arg groupConcurrency int 0 = none
-- @arg maxAttempts int 0 = the worker's
-- @arg plan string the job's plan: a claim decides it under that plan's rules ('' = none)
-- @arg settle bool its cost is an estimate: the claim that starts it records a reservation its handler settles
-- @arg class string the job's priority class: a claim decides it in that class ('' = 'default')
-- @reply [status: WRITTEN | DUPLICATE | BACKLOG_FULL | DEFER_HORIZON, id: string, runAt: int]
--   DUPLICATE: id of the existing job; BACKLOG_FULL, DEFER_HORIZON (beyond maxDeferMs): id ''
--!include includes/job.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local status, id, run_at = job_defer(K, now, ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], ARGV[6],
  ARGV[7], tonumber(ARGV[8]), now + tonumber(ARGV[9]), tonumber(ARGV[10]), nil, nil, tonumber(ARGV[11]),
  tonumber(ARGV[12]), ARGV[13], ARGV[14] == '1', ARGV[15])
if status == 1 then job_keep(K, now, math.max(now, run_at), job_written_by_defer(K)) end
return { status, id, run_at }
