-- admit-many.lua: admit.lua for several checks of one limiter in one call: the RedisStore sends the checks made
-- in one event-loop turn together. They are decided one after the other at the same `now`, exactly as that many
-- admit.lua calls at that instant would be; the limiter state is read and written once, so each check costs a
-- fraction of a call of its own. The reply: admit.lua's for each check, one after the other in one flat array.
-- @key groups HASH '' -> packed meta, group -> packed per-group state (see admit.lua)
-- @key seen ZSET group -> last-seen ms
-- @key leases ZSET lease '<ms>-<seq>:<group>' -> expiry ms (untouched when leaseMs is 0)
-- @key slots HASH group -> leases held, '' -> the lease sequence
-- @key overrides HASH group -> its override (includes/overrides.lua): one HGET per check
-- @key overridesDue ZSET (renewed with the limiter's keys: includes/overrides.lua ov_keep)
-- @key overridesIndex ZSET (renewed likewise)
-- @arg nowMs number store time in ms, a fraction for µs (tests); 0 = redis TIME
-- @arg config string the fair-share config block (fs_config)
-- @arg leaseMs int 0 = no check of this call has a concurrency cap
-- @each checks AdmitCheck in arrival order
-- @param checks int how many checks the call sent
-- @param rules int how many rules the config block has
-- @param capped bool leaseMs > 0
-- @reply Admission*checks
--!include includes/fair-share.lua
--!include includes/concurrency.lua
--!include includes/overrides.lua

-- the first check's group: its state comes with meta in fs_open's one HMGET
local FIRST = 4
local cfg = fs_config(ARGV[2])
local fs = fs_open(KEYS[1], KEYS[2], cfg, fs_arg_us(ARGV[1]), ARGV[FIRST])
ov_span(fs, KEYS[5])
local lease_ms = tonumber(ARGV[3])
local CC, cc = false, false
if lease_ms > 0 then
  CC = cc_library(fs_decide)
  cc = CC.open(KEYS[3], KEYS[4])
end
local out = {}
local n = 0
for i = 4, #ARGV - 3, 4 do
  -- as a call of its own would: a full trim page leaves more idle groups for the next check to trim
  if i > 4 then fs_trim(fs) end
  local group = ARGV[i]
  local ov = ov_read(fs, KEYS[5], group)
  local weight, cap = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 3])
  local rules = nil
  if ov then
    if ov.w > 0 then weight = ov.w end
    if cap > 0 and ov.c > 0 then cap = ov.c end
    rules = ov.rules
  end
  local r
  if ov and ov.b == 1 then
    r = ov_blocked(fs, group, ov)
  elseif cc then
    r = CC.decide(fs, cc, group, weight, tonumber(ARGV[i + 2]), cap, lease_ms, rules)
  else
    r = fs_decide(fs, group, weight, tonumber(ARGV[i + 2]), true, rules)
  end
  out[n + 1], out[n + 2], out[n + 3], out[n + 4] = r.allowed, r.colour, r.remaining, r.limit
  out[n + 5], out[n + 6], out[n + 7] = r.guaranteed, math.ceil(r.retry_us / 1000), math.ceil(r.hint_us / 1000)
  out[n + 8], out[n + 9], out[n + 10] = math.ceil(r.reset_us / 1000), r.active, fs.now_us
  out[n + 11], out[n + 12], out[n + 13], out[n + 14] = r.group, math.floor(r.empty_us / 1000), fs.cf, ov_text(ov, r)
  n = n + 14
  n = ov_rules(out, n, r, ov, cfg.rules)
  if cc then
    out[n + 1], out[n + 2] = r.lease, r.held
    n = n + 2
  end
end
fs_close(fs)
ov_keep(fs, KEYS[5], KEYS[6], KEYS[7])
if cc then CC.close(cc) end
return out
