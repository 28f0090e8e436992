--[[
  admit-defer-many.lua — admit-defer.lua for several requests of one limiter in one call (the RedisStore sends
  the deferring checks made in one event-loop turn together): decided one after the other at the same `now`,
  exactly as that many admit-defer.lua calls at that instant would be, with the limiter state read and
  written once.

  KEYS: the queue key block (includes/job.lua)
  ARGV[1]      config block (fs_config)
  ARGV[2]      now override in µs (tests); 0 = redis TIME
  ARGV[3 ..]   per request, in arrival order, 9 values: group, weight, cost, job type, payload, idempotency key
               ('' = none), maxBacklog, maxDeferMs, groupConcurrency (0 = none)

  Reply: admit-defer.lua's fields (15, and 1 + 2 per rule with rules) for each request, one after the other.
]]
--!include includes/fair-share.lua
--!include includes/job.lua
--!include includes/admit-defer.lua

local K = job_keys()
local fs = fs_open(K.groups, K.seen, fs_config(ARGV[1]), tonumber(ARGV[2]), ARGV[3])
local out = {}
local n = 0
local written = false
for i = 3, #ARGV - 8, 9 do
  -- as a call of its own would: a full trim page leaves more idle groups for the next check to trim
  if i > 3 then fs_trim(fs) end
  local reply = ad_admit(fs, K, ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), ARGV[i + 3], ARGV[i + 4],
    ARGV[i + 5], tonumber(ARGV[i + 6]), tonumber(ARGV[i + 7]), tonumber(ARGV[i + 8]))
  for j = 1, #reply do out[n + j] = reply[j] end
  if reply[12] == 1 then written = true end
  n = n + #reply
end
fs_close(fs)
if written then job_keep(K, fs.now_ms, fs.now_ms + fs.cfg.ttl_ms, job_written_by_defer(K)) end
return out
