-- admit.lua: one admission decision: strict global limit + weighted fair share (includes/fair-share.lua),
-- and with a concurrency cap a lease (includes/concurrency.lua; neither concurrency key is touched without one).
-- @key groups HASH '' -> packed meta (global bucket, Σweights, water level, epoch, trim; see fair-share.lua), group -> packed per-group state
-- @key seen ZSET group -> last-seen ms
-- @key leases ZSET lease '<ms>-<seq>:<group>' -> expiry ms
-- @key slots HASH group -> leases held, '' -> the lease sequence
-- @key overrides HASH group -> its override (includes/overrides.lua)
-- @key overridesDue ZSET (renewed with the limiter's keys: includes/overrides.lua ov_keep)
-- @key overridesIndex ZSET (renewed likewise)
-- @arg nowMs number store time in ms, a fraction for µs (tests); 0 = redis TIME
-- @arg config string the fair-share config block (fs_config)
-- @arg group string any bytes; only ever a hash field / zset member
-- @arg weight int >= 1
-- @arg cost int >= 1
-- @arg cap? int the concurrency cap (absent = none)
-- @arg leaseMs? int with cap
-- @param rules int how many rules the config block has
-- @param capped bool the call passed a cap
-- @reply Admission (includes/admission.lua)
--!include includes/fair-share.lua
--!include includes/concurrency.lua
--!include includes/overrides.lua

local cfg = fs_config(ARGV[2])
local fs = fs_open(KEYS[1], KEYS[2], cfg, fs_arg_us(ARGV[1]), ARGV[3])
ov_span(fs, KEYS[5])
local ov = ov_read(fs, KEYS[5], ARGV[3])
local weight, cap = tonumber(ARGV[4]), tonumber(ARGV[6])
local rules = nil
if ov then
  if ov.w > 0 then weight = ov.w end
  if cap and ov.c > 0 then cap = ov.c end
  rules = ov.rules
end
local r
local capped = ARGV[6] ~= nil
local CC = capped and cc_library(fs_decide)
if ov and ov.b == 1 then
  r = ov_blocked(fs, ARGV[3], ov)
elseif CC then
  local cc = CC.open(KEYS[3], KEYS[4])
  r = CC.decide(fs, cc, ARGV[3], weight, tonumber(ARGV[5]), cap, tonumber(ARGV[7]), rules)
  CC.close(cc)
else
  r = fs_decide(fs, ARGV[3], weight, tonumber(ARGV[5]), true, rules)
end
fs_close(fs)
ov_keep(fs, KEYS[5], KEYS[6], KEYS[7])

local out = { r.allowed, r.colour, r.remaining, r.limit, r.guaranteed, math.ceil(r.retry_us / 1000),
              math.ceil(r.hint_us / 1000), math.ceil(r.reset_us / 1000), r.active, fs.now_us, r.group,
              math.floor(r.empty_us / 1000), fs.cf, ov_text(ov, r) }
ov_rules(out, #out, r, ov, cfg.rules)
if CC then CC.reply(out, r) end
return out
