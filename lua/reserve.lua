-- reserve.lua: one admission decision (admit.lua's) that, when allowed, records a reservation to settle later
-- (includes/settle.lua): the check's cost is parked until it is settled or lapses at holdMs.
-- @key groups HASH '' -> packed meta, group -> packed per-group state (see admit.lua)
-- @key seen ZSET group -> last-seen ms
-- @key leases ZSET lease '<ms>-<seq>:<group>' -> expiry ms
-- @key slots HASH group -> leases held, '' -> the lease sequence
-- @key reservations HASH id -> reservation record, '' -> the id sequence
-- @key reservationsDue ZSET id -> ms its record lapses
-- @key overrides HASH group -> its override (includes/overrides.lua): a blocked group reserves nothing, and an
--   override's rules are the ones spent, recorded with the reservation for settle.lua to refund
-- @key overridesDue ZSET (renewed with the limiter's keys: includes/overrides.lua ov_keep)
-- @key overridesIndex ZSET (renewed likewise)
-- @arg nowMs number store time in ms, a fraction for µs (tests); 0 = redis TIME
-- @arg config string the fair-share config block (fs_config)
-- @arg group string any bytes; only ever a hash field / zset member
-- @arg weight int >= 1
-- @arg cost int >= 1
-- @arg holdMs int how long a reservation can be settled
-- @arg tail string appended to the id ('' or '.' and the check's plan: settle picks the plan's rules by it)
-- @arg cap? int the concurrency cap (absent = none)
-- @arg leaseMs? int with cap
-- @param rules int how many rules the config block has
-- @param capped bool the call passed a cap
-- @reply Reserved (includes/admission.lua)
--!include includes/fair-share.lua
--!include includes/concurrency.lua
--!include includes/settle.lua
--!include includes/overrides.lua

local cfg = fs_config(ARGV[2])
local fs = fs_open(KEYS[1], KEYS[2], cfg, fs_arg_us(ARGV[1]), ARGV[3])
ov_span(fs, KEYS[7])
local ov = ov_read(fs, KEYS[7], ARGV[3])
local weight, cap = tonumber(ARGV[4]), tonumber(ARGV[8])
local rules, rtext = nil, nil
if ov then
  if ov.w > 0 then weight = ov.w end
  if cap and ov.c > 0 then cap = ov.c end
  rules, rtext = ov.rules, ov.rtext
end
local r
local cost = tonumber(ARGV[5])
local capped = ARGV[8] ~= nil
local CC = capped and cc_library(fs_decide)
if ov and ov.b == 1 then
  r = ov_blocked(fs, ARGV[3], ov)
elseif CC then
  local cc = CC.open(KEYS[3], KEYS[4])
  r = CC.decide(fs, cc, ARGV[3], weight, cost, cap, tonumber(ARGV[9]), rules)
  CC.close(cc)
else
  r = fs_decide(fs, ARGV[3], weight, cost, true, rules)
end
local id = ''
if r.allowed == 1 then
  id = st_reserve(fs, KEYS[5], KEYS[6], r.group, cost, r.colour, tonumber(ARGV[6]), ARGV[7], rtext)
end
st_sweep(fs, KEYS[5], KEYS[6])
fs_close(fs)
ov_keep(fs, KEYS[7], KEYS[8], KEYS[9])

local out = { r.allowed, r.colour, r.remaining, r.limit, r.guaranteed, math.ceil(r.retry_us / 1000),
              math.ceil(r.hint_us / 1000), math.ceil(r.reset_us / 1000), r.active, fs.now_us, r.group,
              math.floor(r.empty_us / 1000), id, fs.cf, ov_text(ov, r) }
ov_rules(out, #out, r, ov, cfg.rules)
if CC then CC.reply(out, r) end
return out
