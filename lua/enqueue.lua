-- enqueue.lua: writes one job straight into the fair queue (the same write admit.lua makes on deferral).
-- KEYS: the queue key block (includes/job.lua).
-- ARGV: 1 nowMs (0 = Redis TIME)  2 group  3 weight  4 cost  5 type  6 payload (JSON text)
--       7 idempotencyKey ('' = none)  8 maxBacklog  9 delayMs  10 maxDeferMs  11 groupConcurrency (0 = none)
--       12 maxAttempts (0 = the worker's)
-- Reply: {status, id, runAt}: status 1 written, 2 duplicate (id of the existing job), -2 backlog full,
--        -3 beyond maxDeferMs (id '').
--!include includes/job.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local status, id, run_at = job_defer(K, now, ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], ARGV[6],
  ARGV[7], tonumber(ARGV[8]), now + tonumber(ARGV[9]), tonumber(ARGV[10]), nil, nil, tonumber(ARGV[11]),
  tonumber(ARGV[12]))
if status == 1 then job_keep(K, now, math.max(now, run_at), job_written_by_defer(K)) end
return { status, id, run_at }
