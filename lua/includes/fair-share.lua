--[[
  fair-share.lua — the admission core (docs/algorithm.md §2; the steps in §2.3), included by admit.lua and the dispatcher.
  src/core/fair-share.ts (and fair-share-decide.ts, the twin of includes/fair-share-decide.lua) is the same algorithm
  in TypeScript: keep the two in step, name for name.

  A strict global token bucket (never more than `limit` in any window of `windowMs`) plus, per group, a
  two-rate three-colour meter: green within the guaranteed share R·w/Σw, yellow borrowing up to the cap
  R·clamp(s·w, γ, 1) set by the water level s, red denied. Yellow needs c + reserve global tokens.

  Functions (all state lives in the table `fs`; call open, then decide any number of times, then close):
    fs_config(text)           -> cfg     parses the config block, one ARGV of 9 (10) comma-separated numbers:
                                         limit,windowMs,burst,reserve,idleMs,epochMs,sustained(0|1),maxGroups,
                                         probationMs (0 = no probation), then, with plans, ',' and spanMs (the
                                         longest span any rule state of the limiter or a plan needs: the keys
                                         outlive it whichever lane's rules a call has, and every lane renews them
                                         with one TTL), then, with rules, ';' and their JSON array (rules.lua)
                                         (one argument, not nine: every script argument costs the client time on every call)
    fs_open(groups_key, seen_key, cfg, now_override_us, group, peek) -> fs
                                         loads meta (and `group`'s state in the same HMGET, when given), clamps
                                         time (now = max(TIME, last)), refills the global bucket, steps the
                                         water level once per epoch, trims idle groups.
                                         now_override_us = 0 uses redis TIME (tests pass their clock).
                                         peek = true (peek.lua): nothing is written, in this call or after it:
                                         no redis write command runs (trimming, registering and probation are
                                         worked out in `fs` only: fs.gone names the groups a trim would forget,
                                         fs.wiped says a fresh limiter's DEL would empty `seen`), fs_decide
                                         spends nothing, and the caller skips fs_close.
    fs_decide(fs, group, weight, cost, promise, rules, busy) -> r
                                         r = { allowed, colour (0 green, 1 yellow, 2 red), remaining, limit,
                                         guaranteed, retry_us, hint_us, reset_us, group (effective), active }
                                         and, with rules: policy (0 the share, i the i-th rule that denied,
                                         waiting longest), rules, rs (RL.reply writes them into a reply).
                                         promise = true: a denial takes the group's next staggered retry slot.
                                         rules: nil = the config's (cfg.rules, false when none); a caller may
                                         pass its own list from RL.config (per-request rules, e.g. a plan's).
                                         busy = true: the group's concurrency cap says no (concurrency.lua):
                                         decided as a rule's denial, so nothing is spent.
    fs_close(fs)                         writes meta and every group it loaded in one HSET; PEXPIREs the keys
                                         once per epoch, on a fresh limiter and when a group is added.
  fs also carries now_us, now_ms and meta.vt (SFQ virtual time; read and written back, unused by admit).

  meta lives in the groups HASH under the field '' (group ids are never empty), so one HMGET reads it with
  the group and one HSET writes both: struct.pack(FS_META_PACK, gt, gl, ws, gn, sh, ep, fc, tr, vt, rv, re, gb, gbl) .. rg
    gt gl (global tokens, last µs) ws gn (Σweights, active groups) sh (water level; 0 in the first epoch)
    ep fc (epoch start µs, demand this epoch) tr (last trim ms) vt (dispatcher virtual time)
    rv rg re (green reservation: units, group, lapses at µs; rv = 0 when none)
    gb gbl (graduation budget of probation: tokens, last refill µs)
  Green reservation (docs/algorithm.md §2.6): a request of cost > 1 that is green in every respect but the global tokens (other groups'
  cost-1 greens take each token as it appears, so c tokens would never gather) reserves c units until its
  retry slot plus a grace. While it is held, other groups' green needs gt ≥ c + rv and yellow gt ≥ c +
  max(reserve, rv); the holder's admission clears it. Only the gt check gates admission, so the global
  bound is untouched.
  groups HASH: group -> struct.pack('dddddddddd', tokMin, tokCap, tokDem, last, w, ftag, seen, promise, tokW, flood)
    (tokW: the within-share meter, flood: the flood meter, docs/algorithm.md §2.4)
  seen ZSET: group -> last-seen ms (refreshed lazily, when stale by more than idleMs/8)
  When `seen` holds maxGroups groups, a new group is admitted as the shared group '*overflow*' (weight 1).
  Probation (identities are free: a flood of new ids must not dilute the tenants already there): a group id
  not yet registered is decided as the shared group '*new*' (weight 1) until it comes back at least
  probationMs after it was first seen (the limiter's default: min(epochMs, 1000)); then it is registered as
  itself. Cold start: in a fresh limiter's first epoch (sh = 0 until the first epoch step) a new id registers
  at once, within the graduation budget (at a restart every tenant is new: none waits behind the others).
  Its rules are its own meanwhile: decided on a rule record (rules.lua's blob) in the groups hash under
  the field FS_SIGHTED .. id (byte 255 is never in UTF-8, so no group id collides with it), which lives and
  dies with the sighting (dropped with it, carried over to the group's own state when it graduates). Its first
  sighting lives in `seen` under the score first ms − 2^52, below the registered groups' last-seen ms (≥ 0,
  the range fs_trim reads); at most maxGroups such sightings are kept, the oldest dropped first, so a flood
  churns its own sightings away and never registers. '*new*' and '*overflow*' take none of the maxGroups places.
  Times are µs as Lua numbers (exact below 2^53); nothing here turns a timestamp into a string.
  Rules (includes/rules.lua): per-group caps from the config block (or, later, the caller), decided in
  fs_decide with the share, all-or-nothing; their state follows the group's packed state in the same field.
]]
--!include includes/constants.lua
--!include includes/adaptive.lua
--!include includes/rules.lua
--!include includes/fair-share-class.lua
--!include includes/config-drift.lua
-- the rules library (rules.lua), made by fs_config when the config has rules
local RL = false

-- the groups hash field of an id's rule record on probation is this byte .. id: never in UTF-8, so in no group id
local FS_SIGHTED = '\255'
-- 2^52: a first sighting's score (ms − 2^52) is exact and below every last-seen ms
local FS_PROBATION_BASE = 4503599627370496
local FS_PACK = 'dddddddddd'
local FS_PACK_LEN = 80 -- struct.size(FS_PACK); rule state (rules.lua) follows it
local FS_META = ''
local FS_META_PACK = 'ddddddddddddd'
local FS_META_LEN = 104 -- struct.size(FS_META_PACK)
local FS_INF = math.huge
-- the groups hash field of the units reserved and not yet settled (includes/settle.lua): bytes 255 and 254 are
-- never in UTF-8, so no group id (nor FS_SIGHTED .. id) is it; and not '\254' alone, the adaptive state's
-- field (AD_FIELD), nor '\254' .. name, a class meter's (FSC_FIELD)
local FS_PARKED = '\255\254'

local FS_CONFIG_PATTERN = '^([^,]+),([^,]+),([^,]+),([^,]+),([^,]+),([^,]+),([^,]+),([^,]+),([^,]+),?([^,]*)$'

local function fs_config(text)
  -- an admission lane's block starts with the limiter's fingerprint (config-drift.lua)
  local cf
  cf, text = cf_config(text)
  -- rules follow the 9 (with plans 10) numbers after ';' (none: no rule work at all)
  local rules, span_ms = false, 0
  local semi = string.find(text, ';', 1, true)
  if semi then
    if not RL then RL = rl_library() end
    rules, span_ms = RL.config(string.sub(text, semi + 1), FS_PACK)
    text = string.sub(text, 1, semi - 1)
  end
  -- the adaptive limit's numbers follow '~' (adaptive.lua), after the class
  local ad_text = false
  local tilde = string.find(text, '~', 1, true)
  if tilde then
    ad_text = string.sub(text, tilde + 1)
    text = string.sub(text, 1, tilde - 1)
  end
  -- a class follows the numbers after '|' (fair-share-class.lua; none: no class work at all)
  local cls = false
  local bar = string.find(text, '|', 1, true)
  if bar then
    cls = fsc_config(string.sub(text, bar + 1))
    text = string.sub(text, 1, bar - 1)
  end
  local limit, window_ms, burst, reserve, idle_ms, epoch_ms, sustained, max_groups, probation_ms, plans_span_ms =
    string.match(text, FS_CONFIG_PATTERN)
  if not limit then error('ERR_BL_STORE_CONFIG: expected 9 or 10 comma-separated numbers, got ' .. tostring(text)) end
  if plans_span_ms ~= '' and tonumber(plans_span_ms) > span_ms then span_ms = tonumber(plans_span_ms) end
  limit, burst, idle_ms = tonumber(limit), tonumber(burst), tonumber(idle_ms)
  local window_us, epoch_us = tonumber(window_ms) * 1000, tonumber(epoch_ms) * 1000
  -- Emission interval: strict T = W/(L−b+1) keeps any window at ≤ L; sustained T = W/L.
  local T
  if sustained == '1' then T = window_us / limit else T = window_us / (limit - burst + 1) end
  local reserve_n = tonumber(reserve)
  -- Every field in the constructor: Lua sizes the table once (a field added later may rehash it).
  return {
    limit = limit,
    window_us = window_us,
    burst = burst,
    reserve = reserve_n,
    idle_ms = idle_ms,
    epoch_us = epoch_us,
    max_groups = tonumber(max_groups),
    T = T,
    -- a rule's state must outlive its window (and a rule's window may be longer than idleMs)
    ttl_ms = math.max(idle_ms, span_ms) + math.floor((window_us + epoch_us) / 1000),
    -- how long a reservation can be settled: the longest window of the limiter, its rules and its plans'
    hold_ms = math.max(tonumber(window_ms), span_ms),
    probation_ms = tonumber(probation_ms),
    rules = rules,
    cls = cls,
    -- the adaptive limit (adaptive.lua; false: the configured limit always)
    ad = ad_text and ad_config(ad_text, limit, burst, reserve_n, sustained == '1'),
    -- the fingerprint of the limiter's options (config-drift.lua; false: not checked)
    cf = cf,
  }
end

local function fs_refill(tokens, last, now, interval, size)
  local t = tokens + (now - last) / interval
  if t > size then return size end
  return t
end

-- Time until `need` tokens exist (µs); infinite when the bucket can never hold them.
local function fs_wait(tokens, interval, need, size)
  if tokens >= need - FS_EPS then return 0 end
  if need > size + FS_EPS then return FS_INF end
  return (need - tokens) * interval
end

-- A script's nowMs argument (ms, a fraction for µs: tests' injected clocks; 0 = redis TIME) as fs_open's
-- now_override (µs, rounded: the decimal text of µs / 1000 is not exact in binary).
local function fs_arg_us(now_ms)
  return math.floor(tonumber(now_ms) * 1000 + 0.5)
end

local function fs_now_us(now_override)
  if now_override > 0 then return now_override end
  -- Writing after TIME needs effects replication: the default since Redis 5, the only mode since 7 (the README
  -- states the minimum version).
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

--!include includes/fair-share-groups.lua

local function fs_release(fs)
  fs.meta.rv, fs.meta.rg, fs.meta.re = 0, '', 0
end

-- The refill while units are reserved and not yet settled (includes/settle.lua; docs/settle.md "The bound"):
-- the bucket refills only to burst − parked, so a refund always fits, and what that holds back is kept in z
-- (at most parked) to be given back as the reservations settle or lapse (a reservation counts at its estimate,
-- never more). Past the latest due every reservation has lapsed: all is given back, and a new generation
-- starts (their records unpark nothing when they are swept).
local function fs_park_refill(fs, parked, now)
  local meta, burst = fs.meta, fs.cfg.burst
  local pp, pdue, pgen, pz = struct.unpack('dddd', parked)
  if fs.now_ms >= pdue then
    if pp > 0 then meta.gt = meta.gt + math.min(pz, pp) end
    pp, pz, pgen = 0, 0, pgen + 1
    fs.park_dirty = true
  end
  fs.park = { p = pp, due = pdue, gen = pgen, z = pz }
  local t = meta.gt + (now - meta.gl) / fs.cfg.T
  if t > burst then t = burst end
  local size = burst - pp
  if t > size then
    local z = pz + t - size
    if z > pp then z = pp end
    if z ~= pz then
      fs.park.z = z
      fs.park_dirty = true
    end
    t = size
  end
  meta.gt = t
end

local function fs_open(groups_key, seen_key, cfg, now_override, group, peek)
  local fs = { cfg = cfg, groups_key = groups_key, seen_key = seen_key, groups = {}, expire = false,
               meta = false, now_us = 0, now_ms = 0, prefetched_group = false, prefetched = false,
               peek = peek == true, gone = false, wiped = false, sighted = {}, park = false, park_dirty = false,
               cls = false, cf = '', cf_write = false, ttl_ms = false, ov_any = true }
  if fs.peek then fs.gone = {} end
  local now = fs_now_us(now_override)
  -- the optional fields after meta (, group) and the parking state: the class meter, the adaptive state and
  -- the stored fingerprint (config-drift.lua), each read only when the config has it
  local more, cls_at, ad_at, cf_at = {}, false, false, false
  if cfg.cls then more[#more + 1] = cfg.cls.field; cls_at = #more end
  if cfg.ad then more[#more + 1] = AD_FIELD; ad_at = #more end
  if cfg.cf then more[#more + 1] = CF_FIELD; cf_at = #more end
  local m, base, parked
  if group then
    m = redis.call('HMGET', groups_key, FS_META, group, FS_PARKED, unpack(more))
    fs.prefetched_group, fs.prefetched, parked = group, m[2], m[3]
    base = 3
  else
    m = redis.call('HMGET', groups_key, FS_META, FS_PARKED, unpack(more))
    parked = m[2]
    base = 2
  end
  local cls_raw = cls_at and m[base + cls_at]
  local ad_raw = ad_at and m[base + ad_at]
  local cf_raw = cf_at and m[base + cf_at]
  -- the limit in force sizes the bucket from here on (adaptive.lua)
  if cfg.ad then ad_apply(cfg, ad_load(ad_raw, cfg.ad, 0).l) end
  local p = m[1]
  local meta
  if not p then
    meta = { gt = cfg.burst, gl = now, ws = 0, gn = 0, sh = 0, ep = now, fc = 0,
             tr = math.floor(now / 1000), vt = 0, rv = 0, rg = '', re = 0, gb = FS_GRAD_BURST, gbl = now }
    -- Only a stray field can outlive meta (they share a key): groups it no longer counts in Σw must not linger.
    if fs.peek then
      -- the groups key is gone with its meta; a stray `seen` (evicted alone) reads as the DEL would leave it
      fs.wiped = true
    else
      redis.call('DEL', groups_key, seen_key)
      -- the limit in force is not the groups': it stays (its TTL is renewed with meta's below)
      if ad_raw then redis.call('HSET', groups_key, AD_FIELD, ad_raw) end
    end
    fs.prefetched = nil
    parked = false
    cf_raw = false
    fs.expire = true
  else
    local gt, gl, ws, gn, sh, ep, fc, tr, vt, rv, re, gb, gbl = struct.unpack(FS_META_PACK, p)
    meta = { gt = gt, gl = gl, ws = ws, gn = gn, sh = sh, ep = ep, fc = fc, tr = tr, vt = vt, rv = rv, re = re,
             rg = string.sub(p, FS_META_LEN + 1), gb = gb, gbl = gbl }
  end
  fs.meta = meta
  -- Never step back: a backward clock step must not refill the same interval twice. Time then stands still
  -- (no epoch passes), but TTLs run on the real clock: renew them on every such call.
  if now < meta.gl then
    now = meta.gl
    fs.expire = true
  end
  fs.now_us = now
  fs.now_ms = math.floor(now / 1000)
  if cfg.cf then cf_open(fs, cf_raw) end
  if parked then
    fs_park_refill(fs, parked, now)
  else
    meta.gt = fs_refill(meta.gt, meta.gl, now, cfg.T, cfg.burst)
  end
  meta.gl = now
  if meta.rv > 0 and now >= meta.re then fs_release(fs) end
  -- the class meter (fair-share-class.lua); a fresh limiter's DEL took its field too
  if cfg.cls then fs.cls = fsc_open(cfg, p and cls_raw, now) end

  -- (1) water level: one fixed-point step per epoch. A fresh limiter's first epoch (sh = 0: its caps are the
  -- guarantees, the level 1 / Σw) lasts at most FS_COLD_US from its first group: calls that register none and
  -- count no demand (a dispatcher's or a worker's polls before the first request) do not start it.
  local cold = meta.sh == 0
  local epoch_us = cfg.epoch_us
  if cold and epoch_us > FS_COLD_US then epoch_us = FS_COLD_US end
  if cold and meta.gn == 0 and meta.fc == 0 then
    meta.ep = now
  elseif now - meta.ep >= epoch_us then
    local supply = (now - meta.ep) / cfg.T
    local s = 1
    if meta.fc >= 1 then
      if cold then s = supply / (meta.fc * meta.ws) else s = meta.sh * supply / meta.fc end
    end
    -- never below the smallest guarantee (1 with no group registered: 1 / 0 is inf)
    if s < 1 / meta.ws then s = 1 / meta.ws end
    if s > 1 then s = 1 end
    meta.sh = s
    meta.ep = now
    meta.fc = 0
    fs.expire = true
  end

  -- (2) forget idle groups, amortised.
  fs_trim(fs)
  return fs
end

--!include includes/fair-share-decide.lua

-- A claim decides jobs of several classes in one call (includes/claim.lua): make class `name` (of `share`) the
-- one fs_decide reads and spends. Each class's config (the call's, with its class) and meter are made once per
-- call, the meter read with one HGET; fs_close writes every class used back.
local function fs_class(fs, name, share)
  local lanes = fs.lanes
  if not lanes then
    lanes = {}
    fs.lanes, fs.base_cfg = lanes, fs.cfg
  end
  local lane = lanes[name]
  if not lane then
    local cfg = {}
    for k, v in pairs(fs.base_cfg) do cfg[k] = v end
    cfg.cls = { name = name, share = share, field = FSC_FIELD .. name }
    lane = { cfg = cfg, meter = fsc_open(cfg, redis.call('HGET', fs.groups_key, cfg.cls.field), fs.now_us) }
    lanes[name] = lane
  end
  fs.cfg, fs.cls = lane.cfg, lane.meter
end

local function fs_close(fs)
  local meta = fs.meta
  local args = { FS_META, struct.pack(FS_META_PACK, meta.gt, meta.gl, meta.ws, meta.gn, meta.sh, meta.ep, meta.fc,
    meta.tr, meta.vt, meta.rv, meta.re, meta.gb, meta.gbl) .. meta.rg }
  if fs.lanes then
    for _, lane in pairs(fs.lanes) do
      args[#args + 1] = lane.cfg.cls.field
      args[#args + 1] = struct.pack(FSC_PACK, lane.meter.ct, lane.meter.cl)
    end
  elseif fs.cls then
    args[3], args[4] = fs.cfg.cls.field, fsc_pack(fs)
  end
  for g, st in pairs(fs.groups) do
    args[#args + 1] = g
    local p
    if st.rr then
      -- one string: the group's values, then its rule state's
      p = struct.pack(st.rr.whole, st.tokMin, st.tokCap, st.tokDem, st.last, st.w, st.ftag, st.seen, st.promise,
        st.tokW, st.flood, RL.values(st.rr, st.rs, fs.now_us))
    else
      p = struct.pack(FS_PACK, st.tokMin, st.tokCap, st.tokDem, st.last, st.w, st.ftag, st.seen, st.promise, st.tokW,
        st.flood)
      if st.rb then p = p .. string.sub(st.rb, st.rat or FS_PACK_LEN + 1) end
    end
    args[#args + 1] = p
  end
  -- ids on probation decided under rules: their rule records (a record only read stays as it was)
  for g, rec in pairs(fs.sighted) do
    if rec.rr then
      args[#args + 1] = FS_SIGHTED .. g
      args[#args + 1] = RL.pack(rec.rr, rec.rs, fs.now_us)
    end
  end
  if fs.cf_write then
    args[#args + 1] = CF_FIELD
    args[#args + 1] = fs.cf_write
  end
  if fs.park_dirty then
    local park = fs.park
    args[#args + 1] = FS_PARKED
    args[#args + 1] = struct.pack('dddd', park.p, park.due, park.gen, park.z)
  end
  redis.call('HSET', fs.groups_key, unpack(args))
  if fs.expire then
    local ttl = fs.cfg.ttl_ms
    -- an override's rules may need their state kept longer (includes/overrides.lua)
    if fs.ttl_ms and fs.ttl_ms > ttl then ttl = fs.ttl_ms end
    redis.call('PEXPIRE', fs.groups_key, ttl)
    redis.call('PEXPIRE', fs.seen_key, ttl)
  end
end
