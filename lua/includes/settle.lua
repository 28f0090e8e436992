--[[
  settle.lua (include) — reserve, then settle (docs/settle.md): a check's cost is a reservation; settling it with
  the actual cost gives the unused units back to every policy that spent them, or charges the overage as debt.
  Included by reserve.lua and settle.lua after includes/fair-share.lua (it uses fs_group, RL and the parking state
  fs_open reads). src/core/settle.ts is the same code in TypeScript: keep the two in step, name for name.

  Keys (the limiter's hash tag; reservation ids only as fields and members):
    reservations HASH id -> record, '' -> the id sequence
      record: struct.pack(ST_PACK, cost, at_us, colour, gen, due_ms) .. group (the effective group: '*new*' on
      probation, '*overflow*' past maxGroups); once settled the tombstone ST_DONE until due_ms, so a second
      settle is told so (and refunds nothing) however many processes send it
    due ZSET id -> due ms (at + holdMs): swept ST_SWEEP per call, oldest first; a record past it is forgotten
  The parking state (groups HASH field FS_PARKED, read by fs_open): units reserved and not yet settled (p), the
  latest due ms of them, a generation, and z, the refill held back by parking. While units are parked the global
  bucket refills only to burst − p, so giving them back at settle never lifts it above what it would hold had
  each check asked for its actual cost (docs/settle.md, "The bound"); what that holds back (z ≤ p) comes back as
  they settle or lapse, each taking at most what it really used, so a reservation costs its actual cost, never
  more. Past the latest due every reservation has lapsed: fs_open gives z back, unparks all at once and starts a
  new generation (a lapsed record of an older generation unparks nothing when it is swept).

  Functions:
    st_reserve(fs, rkey, dkey, group, cost, colour, hold_ms, tail, rules_text) -> id   records an admitted check
                                               (after fs_decide); rules_text: an override's rules it spent
    st_settle(fs, rkey, dkey, id, actual, rules, rec) -> status, refunded, debt   the recorded override rules, when
                                               any, are refunded instead of `rules` (the call's)
    st_tail(rec) -> group, rules_text          a record's group and recorded rules
    st_sweep(fs, rkey, dkey)                   forgets lapsed records (a lapsed one counts at its estimate)
]]

local ST_PACK = 'ddddd'
local ST_PACK_LEN = 40 -- struct.size(ST_PACK); the group follows
local ST_DONE = 'x'
-- lapsed records forgotten per call at most
local ST_SWEEP = 10

local function st_touch(fs, rkey, dkey, hold_ms)
  -- the records live at most hold_ms past their call (the keys twice that: a record's due is within hold_ms)
  redis.call('PEXPIRE', rkey, 2 * hold_ms)
  redis.call('PEXPIRE', dkey, 2 * hold_ms)
end

-- The parking state fs_open read, or a new one (a new generation: no record on file can be of it).
local function st_park(fs)
  if not fs.park then fs.park = { p = 0, due = 0, gen = fs.now_ms, z = 0 } end
  return fs.park
end

-- A reservation of this generation ends (settled for `actual`, or lapsed at its estimate): its cost is unparked
-- and its part of the refill parking held back (z, at most what it really took) comes back. Returns that part.
local function st_unpark(fs, park, cost, actual)
  park.p = park.p - cost
  local z = park.z
  if z > cost then z = cost end
  if z > actual then z = actual end
  park.z = park.z - z
  -- nothing parked: no refill is owed any more
  if park.p <= 0 then park.p, park.z = 0, 0 end
  fs.park_dirty = true
  return z
end

-- The global bucket after units came back: never above burst − parked.
local function st_fit(fs, park)
  local size = fs.cfg.burst - park.p
  if fs.meta.gt > size then fs.meta.gt = size end
end

local function st_sweep(fs, rkey, dkey)
  local old = redis.call('ZRANGEBYSCORE', dkey, '-inf', fs.now_ms, 'LIMIT', 0, ST_SWEEP)
  if #old == 0 then return end
  local recs = redis.call('HMGET', rkey, unpack(old))
  local park = st_park(fs)
  for i = 1, #old do
    local rec = recs[i]
    if rec and #rec > ST_PACK_LEN then
      local cost, _, _, gen = struct.unpack(ST_PACK, rec)
      -- lapsed: it counted at its estimate
      if gen == park.gen then fs.meta.gt = fs.meta.gt + st_unpark(fs, park, cost, cost) end
    end
  end
  st_fit(fs, park)
  redis.call('HDEL', rkey, unpack(old))
  redis.call('ZREM', dkey, unpack(old))
end

-- A record: struct.pack(ST_PACK, cost, t1, colour, gen, due), then, when an override's rules were spent (not the
-- call's own), ST_RULES .. their config text .. ST_RULES, then the group. Byte 255 is never in UTF-8 (a group id)
-- nor in the rules' JSON.
local ST_RULES = '\255'

-- A record's group, and the override's rules text it recorded (nil: the call's own rules were spent).
local function st_tail(rec)
  local at = ST_PACK_LEN + 1
  if string.sub(rec, at, at) ~= ST_RULES then return string.sub(rec, at), nil end
  local stop = string.find(rec, ST_RULES, at + 1, true)
  return string.sub(rec, stop + 1), string.sub(rec, at + 1, stop - 1)
end

local function st_reserve(fs, rkey, dkey, group, cost, colour, hold_ms, tail, rules_text)
  local seq = redis.call('HINCRBY', rkey, '', 1)
  local id = fs.now_ms .. '-' .. seq .. tail
  local due = fs.now_ms + hold_ms
  local park = st_park(fs)
  local rec = struct.pack(ST_PACK, cost, fs.now_us, colour, park.gen, due)
  if rules_text then rec = rec .. ST_RULES .. rules_text .. ST_RULES end
  redis.call('HSET', rkey, id, rec .. group)
  redis.call('ZADD', dkey, due, id)
  park.p = park.p + cost
  if due > park.due then park.due = due end
  fs.park_dirty = true
  st_touch(fs, rkey, dkey, hold_ms)
  return id
end

-- The record's group: its share meters and (unless on probation) its rules get back or pay what the global did.
local function st_group(fs, group, colour, d, t1, rules)
  local p = fs.prefetched
  if not p or fs.prefetched_group ~= group then return end
  local w = select(5, struct.unpack(FS_PACK, p))
  local st
  group, st = fs_group(fs, group, w)
  -- the share meters: a refund adds, a debt takes (below zero: the group waits until they refill past it); the
  -- next decision's refill caps them at their sizes
  st.tokCap = st.tokCap - d
  if colour == 0 then st.tokMin = st.tokMin - d end
  if rules and st.rb and group ~= FS_NEWCOMERS then
    local rs = RL.load(rules, st.rb, st.rat or FS_PACK_LEN + 1)
    RL.settle(rules, rs, fs.now_us, t1, d)
    st.rs, st.rr = rs, rules
  end
end

local function st_settle(fs, rkey, dkey, id, actual, rules, rec)
  if not rec then return 'unknown', 0, 0 end
  if #rec <= ST_PACK_LEN then return 'settled-before', 0, 0 end
  local cost, t1, colour, gen, due = struct.unpack(ST_PACK, rec)
  if due <= fs.now_ms then return 'unknown', 0, 0 end
  local group, rules_text = st_tail(rec)
  if rules_text then
    -- the override's rules the reservation spent (none: '[]')
    if not RL then RL = rl_library() end
    rules = RL.config(rules_text, FS_PACK)
    if #rules == 0 then rules = false end
  end
  -- d > 0: the overage (debt), d < 0: the units to give back
  local d = actual - cost
  local park, meta = st_park(fs), fs.meta
  local before = meta.gt
  meta.gt = meta.gt - d
  if gen == park.gen then meta.gt = meta.gt + st_unpark(fs, park, cost, actual) end
  -- (a record of a lapsed generation was unparked already: its refund may not fit)
  st_fit(fs, park)
  if d ~= 0 then st_group(fs, group, colour, d, t1, rules) end
  redis.call('HSET', rkey, id, ST_DONE)
  if d < 0 then
    local back = meta.gt - before
    if back > -d then back = -d end
    if back < 0 then back = 0 end
    return 'settled', back, 0
  end
  return 'settled', 0, d
end
