-- settle.lua: settles a reservation (reserve.lua) with the actual cost, once (includes/settle.lua): the unused
-- units go back to the global bucket, the group's share meters and its rules, or the overage is charged to them
-- as debt, all in this one call. A second settle of the same id answers 'settled-before' and changes nothing; an
-- id unknown or lapsed (past holdMs) answers 'unknown' (the reservation counted at its estimate).
-- @key groups HASH '' -> packed meta, group -> packed per-group state (see admit.lua)
-- @key seen ZSET group -> last-seen ms
-- @key reservations HASH id -> reservation record, '' -> the id sequence
-- @key reservationsDue ZSET id -> ms its record lapses
-- @arg nowMs number store time in ms, a fraction for µs (tests); 0 = redis TIME
-- @arg config string the fair-share config block (fs_config) of the reservation's plan
-- @arg reservation string the id reserve.lua answered
-- @arg actual int >= 0 the units the work really took
-- @reply [status: 'settled' | 'settled-before' | 'unknown', refunded: int, debt: int, atUs: int]
--!include includes/fair-share.lua
--!include includes/settle.lua

local cfg = fs_config(ARGV[2])
local rec = redis.call('HGET', KEYS[3], ARGV[3])
local group = false
if rec and #rec > ST_PACK_LEN then group = st_tail(rec) end
local fs = fs_open(KEYS[1], KEYS[2], cfg, fs_arg_us(ARGV[1]), group)
local status, refunded, debt = st_settle(fs, KEYS[3], KEYS[4], ARGV[3], tonumber(ARGV[4]), cfg.rules, rec)
st_sweep(fs, KEYS[3], KEYS[4])
fs_close(fs)
return { status, refunded, debt, fs.now_us }
