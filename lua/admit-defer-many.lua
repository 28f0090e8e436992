--[[
  admit-defer-many.lua — admit-defer.lua for several requests of one limiter in one call (the RedisStore sends
  the deferring checks made in one event-loop turn together): decided one after the other at the same `now`,
  exactly as that many admit-defer.lua calls at that instant would be, with the limiter state read and
  written once.

  KEYS: the queue key block (includes/job.lua), then leases, slots (admit-defer.lua)
  ARGV[1]      config block (fs_config)
  ARGV[2]      now override in µs (tests); 0 = redis TIME
  ARGV[3]      lease ms: 0 = no request of this call has a concurrency cap
  ARGV[4 ..]   per request, in arrival order, 10 values: group, weight, cost, job type, payload, idempotency
               key ('' = none), maxBacklog, maxDeferMs, groupConcurrency (0 = none), plan ('' = none); when
               ARGV[3] > 0 an 11th, the request's concurrency cap (0 = none)

  Reply: admit-defer.lua's fields (15, and 1 + 2 per rule with rules, and 2 more when ARGV[3] > 0) for each
  request, one after the other.
]]
--!include includes/fair-share.lua
--!include includes/job.lua
--!include includes/concurrency.lua
--!include includes/admit-defer.lua

local K = job_keys()
local fs = fs_open(K.groups, K.seen, fs_config(ARGV[1]), tonumber(ARGV[2]), ARGV[4])
local lease_ms = tonumber(ARGV[3])
local CC, cc, step = false, false, 10
if lease_ms > 0 then
  CC = cc_library()
  cc, step = CC.open(KEYS[18], KEYS[19]), 11
end
local out = {}
local n = 0
local written = false
for i = 4, #ARGV - step + 1, step do
  -- as a call of its own would: a full trim page leaves more idle groups for the next check to trim
  if i > 4 then fs_trim(fs) end
  local reply = ad_admit(fs, K, ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), ARGV[i + 3], ARGV[i + 4],
    ARGV[i + 5], tonumber(ARGV[i + 6]), tonumber(ARGV[i + 7]), tonumber(ARGV[i + 8]), CC, cc, tonumber(ARGV[i + 10]),
    lease_ms, ARGV[i + 9])
  for j = 1, #reply do out[n + j] = reply[j] end
  if reply[12] == 1 then written = true end
  n = n + #reply
end
fs_close(fs)
if cc then CC.close(cc) end
if written then job_keep(K, fs.now_ms, fs.now_ms + fs.cfg.ttl_ms, job_written_by_defer(K)) end
return out
