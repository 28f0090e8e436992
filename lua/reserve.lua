-- reserve.lua: one admission decision (admit.lua's) that, when allowed, records a reservation to settle later
-- (includes/settle.lua): the check's cost is parked until it is settled or lapses at holdMs.
-- @key groups HASH '' -> packed meta, group -> packed per-group state (see admit.lua)
-- @key seen ZSET group -> last-seen ms
-- @key leases ZSET lease '<ms>-<seq>:<group>' -> expiry ms
-- @key slots HASH group -> leases held, '' -> the lease sequence
-- @key reservations HASH id -> reservation record, '' -> the id sequence
-- @key reservationsDue ZSET id -> ms its record lapses
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

local cfg = fs_config(ARGV[2])
local fs = fs_open(KEYS[1], KEYS[2], cfg, fs_arg_us(ARGV[1]), ARGV[3])
local r
local cost = tonumber(ARGV[5])
local capped = ARGV[8] ~= nil
local CC = capped and cc_library()
if CC then
  local cc = CC.open(KEYS[3], KEYS[4])
  r = CC.decide(fs, cc, ARGV[3], tonumber(ARGV[4]), cost, tonumber(ARGV[8]), tonumber(ARGV[9]))
  CC.close(cc)
else
  r = fs_decide(fs, ARGV[3], tonumber(ARGV[4]), cost, true)
end
local id = ''
if r.allowed == 1 then id = st_reserve(fs, KEYS[5], KEYS[6], r.group, cost, r.colour, tonumber(ARGV[6]), ARGV[7]) end
st_sweep(fs, KEYS[5], KEYS[6])
fs_close(fs)

local out = { r.allowed, r.colour, r.remaining, r.limit, r.guaranteed, math.ceil(r.retry_us / 1000),
              math.ceil(r.hint_us / 1000), math.ceil(r.reset_us / 1000), r.active, fs.now_us, r.group,
              math.floor(r.empty_us / 1000), id, fs.cf }
if r.rules then RL.reply(out, #out, r) end
if CC then CC.reply(out, r) end
return out
