--[[
  adaptive.lua (include) — the adaptive global limit (docs/adaptive.md), included by includes/fair-share.lua after
  constants.lua. Its TypeScript twin is src/core/adaptive.ts: keep the two in step, name for name.

  With the limiter option `adaptive`, the config block's numbers carry, after '~', five more:
    min,max,increase,decrease,intervalMs
  and the limit in force (not the configured `limit`) sizes the global bucket: fs_open reads it with meta in its
  one HMGET and ad_apply derives limit, burst, reserve and the emission interval T from it (burst and reserve keep
  their configured proportion of the limit). Tokens above a smaller bucket are clipped at the next refill.

  State: one field of the groups hash, AD_FIELD (byte 254, never in UTF-8, so no group id collides with it):
    struct.pack(AD_PACK, l, ti, td, hold, step)
    l     the limit in force (an integer, min ≤ l ≤ max)
    ti    when it last rose or the state was made (µs)   td  when it last fell (µs; 0 = never)
    hold  no rise before this (µs): an upstream's Retry-After   step  the next rise (units)
  It lives with the groups hash (its TTL, renewed by admissions; a report that makes the hash sets it) and survives fs_open's clearing of a hash whose
  meta is gone. Absent: the limit in force is the configured `limit`.

  The rule (ad_report), AIMD paced by time, so N reports in one interval are one change whoever sends them:
    throttled: unless the limit fell less than intervalMs ago (one episode, one cut): l = max(min, floor(l·decrease)),
               the next rise back to `increase`; a Retry-After holds rises off until it has passed.
    ok:        when the limit has not moved for intervalMs (and no hold): l = min(max, l + step), then the step
               doubles (at most half the limit): small steps just after a cut, fast growth when the upstream has room.
]]
local AD_FIELD = '\254'
local AD_PACK = 'ddddd'
local AD_CONFIG_PATTERN = '^([^,]+),([^,]+),([^,]+),([^,]+),([^,]+)$'

-- The adaptive part of the config block (after '~'); limit, burst, reserve and sustained are the configured ones.
local function ad_config(text, limit, burst, reserve, sustained)
  local mn, mx, inc, dec, iv = string.match(text, AD_CONFIG_PATTERN)
  if not mn then error('ERR_BL_STORE_CONFIG: expected 5 adaptive numbers, got ' .. tostring(text)) end
  return {
    min = tonumber(mn), max = tonumber(mx), increase = tonumber(inc), decrease = tonumber(dec),
    interval_us = tonumber(iv) * 1000, limit = limit, burst = burst, reserve = reserve, sustained = sustained,
  }
end

-- The state from its field (absent: a fresh one at the configured limit, made at `now`).
local function ad_load(raw, ad, now)
  if not raw then return { l = ad.limit, ti = now, td = 0, hold = 0, step = ad.increase, fresh = true } end
  local l, ti, td, hold, step = struct.unpack(AD_PACK, raw)
  return { l = l, ti = ti, td = td, hold = hold, step = step, fresh = false }
end

local function ad_pack(st)
  return struct.pack(AD_PACK, st.l, st.ti, st.td, st.hold, st.step)
end

-- The config's bucket as the limit in force `l` sizes it (cfg.ad holds the configured numbers).
local function ad_apply(cfg, l)
  local ad = cfg.ad
  local b = math.floor(ad.burst * l / ad.limit + 0.5)
  if b > l then b = l end
  if b < 1 then b = 1 end
  local rsv = math.floor(ad.reserve * l / ad.limit)
  if rsv > b - 1 then rsv = b - 1 end
  cfg.limit, cfg.burst, cfg.reserve = l, b, rsv
  if ad.sustained then cfg.T = cfg.window_us / l else cfg.T = cfg.window_us / (l - b + 1) end
end

-- One report at `now` (µs): throttled or ok, retry_us the upstream's Retry-After (0 = none). Returns the change
-- (-1 fell, 0 none, 1 rose) and whether the state must be written.
local function ad_report(ad, st, now, throttled, retry_us)
  -- never step back: a change is never paced by a clock behind the last one
  if now < st.ti then now = st.ti end
  if now < st.td then now = st.td end
  local change, write = 0, st.fresh
  if throttled then
    if retry_us > 0 and now + retry_us > st.hold then
      st.hold = now + retry_us
      write = true
    end
    if st.td == 0 or now - st.td >= ad.interval_us then
      local l = math.floor(st.l * ad.decrease)
      if l < ad.min then l = ad.min end
      if l < st.l then change = -1 end
      st.l, st.td, st.ti, st.step = l, now, now, ad.increase
      write = true
    end
  elseif now >= st.hold and now - st.ti >= ad.interval_us and (st.td == 0 or now - st.td >= ad.interval_us) then
    local l = st.l + st.step
    if l > ad.max then l = ad.max end
    if l > st.l then change = 1 end
    local step = st.step * 2
    local half = math.floor(l / 2)
    if step > half then step = half end
    if step < ad.increase then step = ad.increase end
    st.l, st.ti, st.step = l, now, step
    write = true
  end
  return change, write
end
