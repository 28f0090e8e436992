--[[
  admit-defer.lua — admit.lua plus deferral, in the same atomic call: when the request is denied, its work
  is written as a job due at once: the dispatcher moves it through the same budget in fair (SFQ) order, so a
  backlog drains at whatever the group may borrow, not only at its guaranteed rate. runAt is an estimate of
  the latest start: one guaranteed interval (c·Tg, Tg = T·Σw/w) per job of the group waiting, this one
  included, i.e. when the job runs if the group gets only its guaranteed share and its own live traffic
  takes none of it; with idle capacity it starts sooner. A runAt beyond maxDeferMs, or a full backlog, denies instead. An idempotency key that
  names a live job returns that job (duplicate) without deciding again, so a retried request neither runs
  twice nor spends budget.

  KEYS: the queue key block (includes/job.lua): counters, groups, seen, delayed, pending, ready, jobs, active,
        dead, completed, idempotency, backlog, wake
  ARGV[1]      config block (fs_config)
  ARGV[2]      now override in µs (tests); 0 = redis TIME
  ARGV[3]      group   ARGV[4] weight   ARGV[5] cost
  ARGV[6]      job type   ARGV[7] payload (JSON text)   ARGV[8] idempotency key ('' = none)
  ARGV[9]      maxBacklog   ARGV[10] maxDeferMs

  Reply: the first 11 fields of admit.lua, then deferStatus, jobId, runAtMs, then admit.lua's emptyMs:
         deferStatus 0 admitted (no job), 1 written, 2 duplicate, -2 backlog full, -3 beyond maxDeferMs.
]]
--!include includes/fair-share.lua
--!include includes/job.lua

local K = job_keys()
local cfg = fs_config(ARGV[1])
local fs = fs_open(K.groups, K.seen, cfg, tonumber(ARGV[2]), ARGV[3])
local now = fs.now_ms
local group, weight, cost = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local idem = ARGV[8]

if idem ~= '' then
  local existing = redis.call('HGET', K.idempotency, idem)
  local r = existing and job_get(K, existing)
  if r then
    fs_close(fs)
    local wait = math.max(0, r.runAt - now)
    return { 0, 2, 0, 0, 0, wait, wait, 0, fs.meta.gn, now, group, 2, r.id, r.runAt, 0 }
  end
end

local d = fs_decide(fs, group, weight, cost, true)
fs_close(fs)
local retry_ms = math.ceil(d.retry_us / 1000)
local status, id, run_at = 0, '', 0
if d.allowed == 0 then
  local w = weight
  if d.group ~= group then w = 1 end -- the overflow group
  local unit_us = cfg.T * fs.meta.ws / w
  local waiting = tonumber(redis.call('HGET', K.backlog, group) or '0')
  local promised = now + math.ceil((waiting + 1) * cost * unit_us / 1000)
  status, id, run_at = job_defer(K, now, group, weight, cost, ARGV[6], ARGV[7], idem, tonumber(ARGV[9]),
    promised, tonumber(ARGV[10]), now, waiting)
end
return { d.allowed, d.colour, d.remaining, d.limit, d.guaranteed, retry_ms, math.ceil(d.hint_us / 1000),
         math.ceil(d.reset_us / 1000), d.active, now, d.group, status, id, run_at, math.floor(d.empty_us / 1000) }
