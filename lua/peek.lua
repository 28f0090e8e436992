--[[
  peek.lua — one group's state as a check of cost 1 would see it now, without spending and without writing
  anything: no meta or group state written back, no group registered, no probation sighting, no trim, no
  TTL renewed (fs_open's peek mode; see includes/fair-share.lua). Only reads run, so a peek of an unknown
  group leaves it unknown.

  KEYS[1] groups   HASH  '' -> packed meta, group -> packed per-group state (see admit.lua)
  KEYS[2] seen     ZSET  group -> last-seen ms
  ARGV[1]          config block (fs_config)
  ARGV[2]          now override in µs (tests); 0 = redis TIME
  ARGV[3]          group id (any bytes; only ever a hash field / zset member)
  ARGV[4]          weight (integer >= 1)

  Reply: admit.lua's fields, for a check of cost 1 decided now but not spent: remaining and each rule's
  remaining are what the group may use now (an allowed check would answer one less), retryMs is the wait
  without the staggering a denied check takes (it promises the next slot).
]]
--!include includes/fair-share.lua

local cfg = fs_config(ARGV[1])
local fs = fs_open(KEYS[1], KEYS[2], cfg, tonumber(ARGV[2]), ARGV[3], true)
local r = fs_decide(fs, ARGV[3], tonumber(ARGV[4]), 1, false)
-- no fs_close: a peek writes nothing

local out = { r.allowed, r.colour, r.remaining, r.limit, r.guaranteed, math.ceil(r.retry_us / 1000),
              math.ceil(r.hint_us / 1000), math.ceil(r.reset_us / 1000), r.active, fs.now_ms, r.group,
              math.floor(r.empty_us / 1000) }
if r.rules then RL.reply(out, #out, r, fs.now_us) end
return out
