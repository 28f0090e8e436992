-- admit.lua: one admission decision: strict global limit + weighted fair share (includes/fair-share.lua),
-- and with a concurrency cap a lease (includes/concurrency.lua; neither concurrency key is touched without one).
-- @key groups HASH '' -> packed meta (global bucket, Σweights, water level, epoch, trim; see fair-share.lua), group -> packed per-group state
-- @key seen ZSET group -> last-seen ms
-- @key leases ZSET lease '<ms>-<seq>:<group>' -> expiry ms
-- @key slots HASH group -> leases held, '' -> the lease sequence
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

local cfg = fs_config(ARGV[2])
local fs = fs_open(KEYS[1], KEYS[2], cfg, fs_arg_us(ARGV[1]), ARGV[3])
local r
local capped = ARGV[6] ~= nil
local CC = capped and cc_library()
if CC then
  local cc = CC.open(KEYS[3], KEYS[4])
  r = CC.decide(fs, cc, ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]))
  CC.close(cc)
else
  r = fs_decide(fs, ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), true)
end
fs_close(fs)

local out = { r.allowed, r.colour, r.remaining, r.limit, r.guaranteed, math.ceil(r.retry_us / 1000),
              math.ceil(r.hint_us / 1000), math.ceil(r.reset_us / 1000), r.active, fs.now_us, r.group,
              math.floor(r.empty_us / 1000), fs.cf }
if r.rules then RL.reply(out, #out, r) end
if CC then CC.reply(out, r) end
return out
