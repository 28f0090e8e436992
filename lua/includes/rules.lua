--[[
  rules.lua (include of fair-share.lua) — per-group rules: caps on top of the fair share, decided in the same
  call and all-or-nothing (a request any policy denies spends nothing in any other). src/core/rules.ts is the
  same code in TypeScript: keep the two in step, name for name.

  Config: after fs_config's 8 numbers, one item per rule, each ';tag,algorithm,limit,windowMs,burst,name'
    tag        a number naming the rule's state (from name, algorithm and window: a changed rule starts afresh)
    algorithm  1 token-bucket (strict: burst, then (limit − burst + 1) per window), 2 sliding-window
               (RL_SLOTS sub-windows, strict: counts every sub-window the window touches), 3 fixed-window
               (windows aligned to multiples of windowMs on the store clock)
  State: appended to the group's packed state, doubles only: until_ms (the group's rule state matters until
  then: trimming keeps the group), then per rule tag, n, n values:
    token-bucket   tokens, last µs
    sliding-window newest sub-window index, RL_SLOTS + 1 counts (oldest first)
    fixed-window   window index, count
  Functions:
    rl_config(text) -> rules, span_ms        rules = list of { tag, alg, limit, window_us, burst, name, T, slot_us }
    rl_load(blob) -> rs                       rs: tag -> values (a fresh rule's values are created by rl_check)
    rl_check(rules, rs, now, c) -> ok, wait_us, index   index: the violated rule with the longest wait (first on ties)
    rl_spend(rules, rs, now, c)
    rl_status(rules, rs, now) -> { remaining, reset_us, ... } one pair per rule
    rl_pack(rules, rs, now) -> blob
]]

local RL_SLOTS = 10
local RL_TOKEN, RL_SLIDING, RL_FIXED = 1, 2, 3
local RL_ITEM = ';([^,;]+),([^,;]+),([^,;]+),([^,;]+),([^,;]+),([^,;]+)'

local function rl_config(text)
  local rules, span_ms = {}, 0
  for tag, alg, limit, window_ms, burst, name in string.gmatch(text, RL_ITEM) do
    local r = { tag = tonumber(tag), alg = tonumber(alg), limit = tonumber(limit), window_us = tonumber(window_ms) * 1000,
                burst = tonumber(burst), name = name, T = 0, slot_us = 0 }
    local span = tonumber(window_ms)
    if r.alg == RL_TOKEN then
      r.T = r.window_us / (r.limit - r.burst + 1)
    elseif r.alg == RL_SLIDING then
      r.slot_us = r.window_us / RL_SLOTS
      span = span + math.ceil(span / RL_SLOTS)
    end
    if span > span_ms then span_ms = span end
    rules[#rules + 1] = r
  end
  return rules, span_ms
end

local function rl_load(blob)
  local rs = {}
  if not blob then return rs end
  local count = #blob / 8
  local v = { struct.unpack(string.rep('d', count), blob) }
  local i = 2
  while i + 1 <= count do
    local n = v[i + 1]
    local vals = {}
    for j = 1, n do vals[j] = v[i + 1 + j] end
    rs[v[i]] = vals
    i = i + 2 + n
  end
  return rs
end

-- Brings a rule's state to `now` (refill, roll windows): no units are spent.
local function rl_state(r, rs, now)
  local s = rs[r.tag]
  if r.alg == RL_TOKEN then
    if not s then
      s = { r.burst, now }
      rs[r.tag] = s
    end
    local t = s[1] + (now - s[2]) / r.T
    if t > r.burst then t = r.burst end
    s[1], s[2] = t, now
  elseif r.alg == RL_SLIDING then
    local j = math.floor(now / r.slot_us)
    if not s then
      s = { j }
      for k = 2, RL_SLOTS + 2 do s[k] = 0 end
      rs[r.tag] = s
    end
    local d = j - s[1]
    if d > 0 then
      for k = 2, RL_SLOTS + 2 do
        if k + d <= RL_SLOTS + 2 then s[k] = s[k + d] else s[k] = 0 end
      end
      s[1] = j
    end
  else
    local w = math.floor(now / r.window_us)
    if not s then
      s = { w, 0 }
      rs[r.tag] = s
    end
    if s[1] ~= w then s[1], s[2] = w, 0 end
  end
  return s
end

-- Time until rule r admits c units (µs; 0 = now).
local function rl_wait(r, s, now, c)
  if r.alg == RL_TOKEN then
    if s[1] >= c - 1e-9 then return 0 end
    return (c - s[1]) * r.T
  elseif r.alg == RL_SLIDING then
    local used = 0
    for k = 2, RL_SLOTS + 2 do used = used + s[k] end
    if used + c <= r.limit then return 0 end
    -- the oldest sub-windows leave the window one by one
    for d = 1, RL_SLOTS + 1 do
      used = used - s[d + 1]
      if used + c <= r.limit then return (s[1] + d) * r.slot_us - now end
    end
    return r.window_us
  end
  if s[2] + c <= r.limit then return 0 end
  return (s[1] + 1) * r.window_us - now
end

local function rl_check(rules, rs, now, c)
  local ok, wait, index = true, 0, 0
  for i = 1, #rules do
    local r = rules[i]
    local t = rl_wait(r, rl_state(r, rs, now), now, c)
    if t > 0 then
      ok = false
      if t > wait then wait, index = t, i end
    end
  end
  return ok, wait, index
end

local function rl_spend(rules, rs, now, c)
  for i = 1, #rules do
    local r = rules[i]
    local s = rs[r.tag]
    if r.alg == RL_TOKEN then
      s[1] = s[1] - c
    elseif r.alg == RL_SLIDING then
      s[RL_SLOTS + 2] = s[RL_SLOTS + 2] + c
    else
      s[2] = s[2] + c
    end
  end
end

-- Remaining units and time until the rule's quota is whole again (µs), for one rule.
local function rl_remaining(r, s, now)
  if r.alg == RL_TOKEN then
    local left = math.floor(s[1] + 1e-9)
    if left < 0 then left = 0 end
    return left, (r.burst - s[1]) * r.T
  elseif r.alg == RL_SLIDING then
    local used, reset = 0, 0
    for k = 2, RL_SLOTS + 2 do
      if s[k] > 0 then
        used = used + s[k]
        reset = (s[1] + k - 1) * r.slot_us - now
      end
    end
    return r.limit - used, reset
  end
  if s[2] == 0 then return r.limit, 0 end
  return r.limit - s[2], (s[1] + 1) * r.window_us - now
end

local function rl_status(rules, rs, now)
  local out = {}
  for i = 1, #rules do
    local r = rules[i]
    local left, reset = rl_remaining(r, rs[r.tag], now)
    out[2 * i - 1], out[2 * i] = left, reset
  end
  return out
end

local function rl_pack(rules, rs, now)
  local vals = { 0 }
  local latest = 0
  for i = 1, #rules do
    local r = rules[i]
    local s = rs[r.tag]
    local _, reset = rl_remaining(r, s, now)
    if reset > latest then latest = reset end
    vals[#vals + 1] = r.tag
    vals[#vals + 1] = #s
    for k = 1, #s do vals[#vals + 1] = s[k] end
  end
  vals[1] = math.floor((now + latest) / 1000) + 1
  return struct.pack(string.rep('d', #vals), unpack(vals))
end
