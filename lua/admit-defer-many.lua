-- admit-defer-many.lua: admit-defer.lua for several checks of one limiter in one call (the RedisStore sends the
-- deferring checks made in one event-loop turn together): decided one after the other at the same `now`, exactly
-- as that many admit-defer.lua calls at that instant would be, with the limiter state read and written once.
-- The reply: admit-defer.lua's for each check, one after the other in one flat array.
-- @keys queue
-- @key leases ZSET request concurrency (includes/concurrency.lua; untouched when leaseMs is 0)
-- @key slots HASH
-- @key overrides HASH group -> its override (includes/overrides.lua)
-- @key overridesDue ZSET (renewed with the limiter's keys: includes/overrides.lua ov_keep)
-- @key overridesIndex ZSET (renewed likewise)
-- @arg nowMs number store time in ms, a fraction for µs (tests); 0 = redis TIME
-- @arg config string the fair-share config block (fs_config)
-- @arg leaseMs int 0 = no check of this call has a concurrency cap
-- @each checks DeferCheck in arrival order
-- @param checks int how many checks the call sent
-- @param rules int how many rules the config block has
-- @param capped bool leaseMs > 0
-- @reply Deferral*checks
--!include includes/fair-share.lua
--!include includes/job.lua
--!include includes/concurrency.lua
--!include includes/overrides.lua
--!include includes/admit-defer.lua

local K = job_keys()
-- the first check's group: its state comes with meta in fs_open's one HMGET
local FIRST = 4
local fs = fs_open(K.groups, K.seen, fs_config(ARGV[2]), fs_arg_us(ARGV[1]), ARGV[FIRST])
ov_span(fs, KEYS[22])
local lease_ms = tonumber(ARGV[3])
local CC, cc = false, false
if lease_ms > 0 then
  CC = cc_library(fs_decide)
  cc = CC.open(KEYS[20], KEYS[21])
end
local out = {}
local n = 0
local written = false
for i = 4, #ARGV - 10, 11 do
  -- as a call of its own would: a full trim page leaves more idle groups for the next check to trim
  if i > 4 then fs_trim(fs) end
  local reply = ad_admit(fs, K, KEYS[22], ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), ARGV[i + 3], ARGV[i + 4],
    ARGV[i + 5], tonumber(ARGV[i + 6]), tonumber(ARGV[i + 7]), tonumber(ARGV[i + 8]), CC, cc, tonumber(ARGV[i + 10]),
    lease_ms, ARGV[i + 9])
  for j = 1, #reply do out[n + j] = reply[j] end
  if reply[12] == 1 then written = true end
  n = n + #reply
end
fs_close(fs)
ov_keep(fs, KEYS[22], KEYS[23], KEYS[24])
if cc then CC.close(cc) end
if written then job_keep(K, fs.now_ms, fs.now_ms + fs.cfg.ttl_ms, job_written_by_defer(K)) end
return out
