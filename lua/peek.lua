-- peek.lua: one group's state as a check of cost 1 would see it now, without spending and without writing
-- anything: no meta or group state written back, no group registered, no probation sighting, no trim, no TTL
-- renewed (fs_open's peek mode; see includes/fair-share.lua). Only reads run, so a peek of an unknown group
-- leaves it unknown. The reply is admit.lua's for a check of cost 1 decided now but not spent: remaining and
-- each rule's remaining are what the group may use now (an allowed check would answer one less), retryMs is the
-- wait without the staggering a denied check takes (it promises the next slot).
-- @key groups HASH '' -> packed meta, group -> packed per-group state (see admit.lua)
-- @key seen ZSET group -> last-seen ms
-- @key overrides HASH group -> its override (includes/overrides.lua): read as a check would
-- @arg nowMs number store time in ms, a fraction for µs (tests); 0 = redis TIME
-- @arg config string the fair-share config block (fs_config)
-- @arg group string any bytes; only ever a hash field / zset member
-- @arg weight int >= 1
-- @param rules int how many rules the config block has
-- @param capped bool always false (a peek takes no lease)
-- @reply Admission
--!include includes/fair-share.lua
--!include includes/overrides.lua

local cfg = fs_config(ARGV[2])
local fs = fs_open(KEYS[1], KEYS[2], cfg, fs_arg_us(ARGV[1]), ARGV[3], true)
local ov = ov_read(fs, KEYS[3], ARGV[3])
local weight, rules = tonumber(ARGV[4]), nil
if ov then
  if ov.w > 0 then weight = ov.w end
  rules = ov.rules
end
local r
if ov and ov.b == 1 then
  r = ov_blocked(fs, ARGV[3], ov)
else
  r = fs_decide(fs, ARGV[3], weight, 1, false, rules)
end
-- no fs_close: a peek writes nothing

local out = { r.allowed, r.colour, r.remaining, r.limit, r.guaranteed, math.ceil(r.retry_us / 1000),
              math.ceil(r.hint_us / 1000), math.ceil(r.reset_us / 1000), r.active, fs.now_us, r.group,
              math.floor(r.empty_us / 1000), fs.cf, ov_text(ov, r) }
ov_rules(out, #out, r, ov, cfg.rules)
return out
