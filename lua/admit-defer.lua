--[[
  admit-defer.lua — admit.lua plus deferral, in the same atomic call: a denied request's work is written as a
  job (includes/admit-defer.lua has the rules: runAt, maxBacklog, maxDeferMs, idempotency).

  KEYS: the queue key block (includes/job.lua): counters, groups, seen, delayed, pending, ready, jobs, active,
        dead, completed, idempotency, backlog, wake, inflight, held, since, gsince; then KEYS[18] leases,
        KEYS[19] slots (request concurrency, includes/concurrency.lua; untouched without a cap)
  ARGV[1]      config block (fs_config)
  ARGV[2]      now override in µs (tests); 0 = redis TIME
  ARGV[3]      group   ARGV[4] weight   ARGV[5] cost
  ARGV[6]      job type   ARGV[7] payload (JSON text)   ARGV[8] idempotency key ('' = none)
  ARGV[9]      maxBacklog   ARGV[10] maxDeferMs   ARGV[11] groupConcurrency (0 = none)
  ARGV[12]     the check's plan ('' = none): the job's, a claim decides it under that plan's rules
  ARGV[13]     concurrency cap (optional; 0 = none)   ARGV[14] lease ms (with ARGV[13])

  Reply: the first 11 fields of admit.lua, then deferStatus, jobId, runAtMs, then admit.lua's emptyMs:
         deferStatus 0 admitted (no job), 1 written, 2 duplicate, -2 backlog full, -3 beyond maxDeferMs;
         with rules, then admit.lua's policy and per-rule fields; with ARGV[13], then lease, held (admit.lua).
]]
--!include includes/fair-share.lua
--!include includes/job.lua
--!include includes/concurrency.lua
--!include includes/admit-defer.lua

local K = job_keys()
local fs = fs_open(K.groups, K.seen, fs_config(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
local CC = ARGV[13] ~= nil and cc_library()
local cc = CC and CC.open(KEYS[18], KEYS[19])
local reply = ad_admit(fs, K, ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], ARGV[7], ARGV[8],
  tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]), CC, cc, tonumber(ARGV[13]), tonumber(ARGV[14]), ARGV[12])
fs_close(fs)
if cc then CC.close(cc) end
if reply[12] == 1 then job_keep(K, fs.now_ms, fs.now_ms + fs.cfg.ttl_ms, job_written_by_defer(K)) end
return reply
