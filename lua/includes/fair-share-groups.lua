--[[
  fair-share-groups.lua — groups in the admission core, included by includes/fair-share.lua (which defines the
  FS_ constants first): idle trimming (fs_trim) and registration (fs_group: exact Σw, lazy last-seen refresh,
  overflow past maxGroups, probation of new ids via fs_real_groups, fs_graduates and fs_sighted) and forgetting one group
  (fs_reset, reset.lua). In a peek (fs.peek, see fs_open) they write nothing and answer as the writes they skip
  would have left the keys. The TypeScript twin is src/core/fair-share-groups.ts.
]]

local function fs_trim(fs)
  local cfg = fs.cfg
  if fs.now_ms - fs.meta.tr < cfg.idle_ms / 8 then return end
  local old = redis.call('ZRANGEBYSCORE', fs.seen_key, 0, fs.now_ms - cfg.idle_ms, 'LIMIT', 0, FS_TRIM_PAGE)
  if #old > 0 then
    local packed = redis.call('HMGET', fs.groups_key, unpack(old))
    local gone = {}
    for i = 1, #old do
      local p = packed[i]
      -- a group whose rule state still matters stays (forgetting it would let it over-spend its rules)
      if p and #p > FS_PACK_LEN and struct.unpack('d', p, FS_PACK_LEN + 1) > fs.now_ms then
        if not fs.peek then redis.call('ZADD', fs.seen_key, fs.now_ms, old[i]) end
      else
        gone[#gone + 1] = old[i]
        -- fs_open read this group's state before trimming: it is gone now, so the group starts afresh
        if old[i] == fs.prefetched_group then fs.prefetched = nil end
        if p then
          local _, _, _, _, w = struct.unpack(FS_PACK, p)
          fs.meta.ws = fs.meta.ws - w
        end
      end
    end
    if #gone > 0 and fs.peek then
      for i = 1, #gone do fs.gone[gone[i]] = true end
      fs.meta.gn = fs.meta.gn - #gone
    elseif #gone > 0 then
      fs.meta.gn = fs.meta.gn - redis.call('ZREM', fs.seen_key, unpack(gone))
      redis.call('HDEL', fs.groups_key, unpack(gone))
    end
    if fs.meta.ws < 0 then fs.meta.ws = 0 end
    if fs.meta.gn < 0 then fs.meta.gn = 0 end
  end
  -- A full page means more may be waiting: keep trimming on the next call.
  if #old < FS_TRIM_PAGE then fs.meta.tr = fs.now_ms end
end

-- Whether the groups hash holds a shared group (in a peek: unless a trim would have forgotten it).
local function fs_has_shared(fs, group)
  if fs.groups[group] then return true end
  if fs.gone and fs.gone[group] then return false end
  return redis.call('HEXISTS', fs.groups_key, group) == 1
end

-- Active groups other than the shared ones (which take none of the maxGroups places).
local function fs_real_groups(fs)
  local n = fs.meta.gn
  if fs_has_shared(fs, FS_OVERFLOW) then n = n - 1 end
  if fs_has_shared(fs, FS_NEWCOMERS) then n = n - 1 end
  return n
end

-- The graduation budget: one token per new id registered from probation, refilled at FS_GRAD_PER_S up to
-- FS_GRAD_BURST; false, spending nothing, when empty. A peek spends on meta, which it never writes.
local function fs_budget(fs)
  local meta = fs.meta
  local gb = meta.gb + (fs.now_us - meta.gbl) * FS_GRAD_PER_S / 1e6
  if gb > FS_GRAD_BURST then gb = FS_GRAD_BURST end
  meta.gb, meta.gbl = gb, fs.now_us
  if gb < 1 - FS_EPS then return false end
  meta.gb = gb - 1
  return true
end

-- Probation (see the header): true when `group` may register: in the limiter's first epoch, or first seen at
-- least probation_ms ago, and the graduation budget has a token (a graduate the budget refuses keeps its
-- sighting and tries again on its next request). Else its first sighting is recorded (making room by dropping
-- the oldest, and its rule record with it) and it stays on probation.
local function fs_graduates(fs, group)
  local cfg = fs.cfg
  -- cold start: the first epoch's ids register at once, within the budget (docs/algorithm.md §2.9)
  if fs.meta.sh == 0 and fs_budget(fs) then return true end
  local s = redis.call('ZSCORE', fs.seen_key, group)
  if s and not fs.wiped then
    if fs.now_ms - (tonumber(s) + FS_PROBATION_BASE) < cfg.probation_ms then return false end
    return fs_budget(fs)
  end
  -- a peek records no sighting: the group is on probation, as the check would leave it
  if fs.peek then return false end
  if redis.call('ZCOUNT', fs.seen_key, '-inf', '(0') >= cfg.max_groups then
    local oldest = redis.call('ZRANGEBYSCORE', fs.seen_key, '-inf', '(0', 'LIMIT', 0, 1)[1]
    redis.call('ZREM', fs.seen_key, oldest)
    redis.call('HDEL', fs.groups_key, FS_SIGHTED .. oldest)
    fs.sighted[oldest] = nil
  end
  redis.call('ZADD', fs.seen_key, fs.now_ms - FS_PROBATION_BASE, group)
  fs.expire = true
  return false
end

-- The rule record of an id on probation (rules.lua's blob under the field FS_SIGHTED .. id: no group id
-- has that byte, see the header), loaded once per call; fs_close writes it back. It lives and dies with the
-- id's sighting: dropped with it, carried over to the group's own state when the id graduates.
local function fs_sighted(fs, group)
  local rec = fs.sighted[group]
  if not rec then
    -- a fresh limiter's DEL (fs.wiped, in a peek) would have emptied the hash
    local rb = false
    if not fs.wiped then rb = redis.call('HGET', fs.groups_key, FS_SIGHTED .. group) end
    -- rat: where its rule state starts (a record holds nothing else)
    rec = { rb = rb or nil, rat = 1 }
    fs.sighted[group] = rec
  end
  return rec
end

-- (3) register a group: exact Σw, lazy last-seen refresh, overflow when maxGroups are active, probation.
-- Returns the effective group, its state and, for an id on probation, the id (its rules are its own).
local function fs_group(fs, group, weight)
  local st = fs.groups[group]
  if not st then
    if group == FS_META then error('ERR_BL_GROUP_EMPTY: a group id is never empty') end
    local p
    if group == fs.prefetched_group then p = fs.prefetched else p = redis.call('HGET', fs.groups_key, group) end
    if p and fs.gone and fs.gone[group] then p = nil end
    if p then
      local a, b, c, d, e, f, g, h, i, j = struct.unpack(FS_PACK, p)
      -- rule fields (rb the stored record, rs state, rr rules) only when used: a limiter without rules pays nothing
      if #p > FS_PACK_LEN then
        -- every field in the constructor: one that Lua adds later rehashes the table
        st = { tokMin = a, tokCap = b, tokDem = c, last = d, w = e, ftag = f, seen = g, promise = h, tokW = i,
               flood = j, rb = p, rs = false, rr = false }
      else
        st = { tokMin = a, tokCap = b, tokDem = c, last = d, w = e, ftag = f, seen = g, promise = h, tokW = i,
               flood = j }
      end
    else
      -- The shared groups are registered at once; any other new id may be over maxGroups or on probation.
      if group ~= FS_OVERFLOW and group ~= FS_NEWCOMERS then
        if fs.meta.gn >= fs.cfg.max_groups and fs_real_groups(fs) >= fs.cfg.max_groups then
          return fs_group(fs, FS_OVERFLOW, 1)
        end
        if fs.cfg.probation_ms > 0 and not fs_graduates(fs, group) then
          -- the share is the newcomers'; its rules are its own (fs_sighted: the third value names whose)
          local g, s = fs_group(fs, FS_NEWCOMERS, 1)
          return g, s, group
        end
      end
      -- New: buckets start full (refill caps them at their sizes), weight joins Σw.
      local full = fs.cfg.burst
      -- the cap, demand and within-share meters start full too (sizes at least FS_CAP_MIN, FS_WITHIN; refill
      -- caps them)
      local cap, tokW = FS_CAP_MIN, FS_WITHIN
      if full > cap then cap = full end
      if full > tokW then tokW = full end
      st = { tokMin = full, tokCap = cap, tokDem = cap, last = fs.now_us, w = weight, ftag = 0,
             seen = -FS_INF, promise = 0, tokW = tokW, flood = 0 }
      -- a graduate keeps the rule state it spent on probation
      if fs.cfg.probation_ms > 0 and group ~= FS_OVERFLOW and group ~= FS_NEWCOMERS then
        local rb = fs_sighted(fs, group).rb
        if rb then
          st.rb, st.rat = rb, 1
          if not fs.peek then redis.call('HDEL', fs.groups_key, FS_SIGHTED .. group) end
        end
        fs.sighted[group] = nil
      end
      fs.meta.ws = fs.meta.ws + weight
      fs.meta.gn = fs.meta.gn + 1
      fs.expire = true
    end
    fs.groups[group] = st
  end
  if group == FS_OVERFLOW or group == FS_NEWCOMERS then weight = 1 end
  if st.w ~= weight then
    fs.meta.ws = fs.meta.ws + weight - st.w
    st.w = weight
  end
  if fs.now_ms - st.seen > fs.cfg.idle_ms / 8 then
    if not fs.peek then redis.call('ZADD', fs.seen_key, fs.now_ms, group) end
    st.seen = fs.now_ms
  end
  return group, st
end

-- Forgets one group (reset.lua): its state and rule state (one field), its last-seen or probation sighting (one
-- member), its weight in Σw and its place in the active count, a green reservation it holds. Its next check
-- starts as a new group's would. Touches no other group, and writes no meta when the limiter has none (a key
-- without a TTL). Returns 1 when there was anything to forget, else 0.
local function fs_reset(groups_key, seen_key, group)
  if group == FS_META then error('ERR_BL_GROUP_EMPTY: a group id is never empty') end
  local m = redis.call('HMGET', groups_key, FS_META, group)
  local p = m[2]
  local found = redis.call('ZREM', seen_key, group)
  -- a sighting's rule record goes with it
  redis.call('HDEL', groups_key, FS_SIGHTED .. group)
  if not p then return found end
  redis.call('HDEL', groups_key, group)
  local mp = m[1]
  if mp then
    local gt, gl, ws, gn, sh, ep, fc, tr, vt, rv, re, gb, gbl = struct.unpack(FS_META_PACK, mp)
    local rg = string.sub(mp, FS_META_LEN + 1)
    local _, _, _, _, w = struct.unpack(FS_PACK, p)
    ws, gn = math.max(0, ws - w), math.max(0, gn - 1)
    if rv > 0 and rg == group then rv, rg, re = 0, '', 0 end
    redis.call('HSET', groups_key, FS_META,
      struct.pack(FS_META_PACK, gt, gl, ws, gn, sh, ep, fc, tr, vt, rv, re, gb, gbl) .. rg)
  end
  return 1
end
