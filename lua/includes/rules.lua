--[[
  rules.lua (include of fair-share.lua) — per-group rules: caps on top of the fair share, decided in the same
  call and all-or-nothing (a request any policy denies spends nothing in any other). src/core/rules.ts is the
  same code in TypeScript: keep the two in step, name for name.

  Config: after fs_config's 8 numbers, one item per rule, each ';tag,algorithm,limit,windowMs,burst'
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
    rl_config(text) -> rules, span_ms        rules = list of { tag, alg, limit, window_us, burst, T, slot_us, n }
                                             (rules.fmt: the struct format of their packed state)
    rl_load(rules, blob) -> rs                rs: tag -> values (a fresh rule's values are created by rl_check)
    rl_check(rules, rs, now, c) -> ok, wait_us, index   index: the violated rule with the longest wait (first on ties)
    rl_spend(rules, rs, now, c)
    rl_reply(out, n, rules, rs, now) -> n      appends remaining, resetMs per rule to a reply
    rl_pack(rules, rs, now) -> blob
  A sliding-window state also carries its sum at [RL_SLOTS + 3] (kept in step, never packed): the common
  check is then one comparison. The hot path allocates no table beyond what it returns.
]]

local RL_SLOTS = 10
local RL_TOKEN, RL_SLIDING, RL_FIXED = 1, 2, 3
local RL_USED = RL_SLOTS + 3
local RL_ITEM = ';([^,;]+),([^,;]+),([^,;]+),([^,;]+),([^,;]+)'

local function rl_config(text)
  local rules, span_ms, values = {}, 0, 1
  for tag, alg, limit, window_ms, burst in string.gmatch(text, RL_ITEM) do
    local r = { tag = tonumber(tag), alg = tonumber(alg), limit = tonumber(limit), window_us = tonumber(window_ms) * 1000,
                burst = tonumber(burst), T = 0, slot_us = 0, n = 2 }
    local span = tonumber(window_ms)
    if r.alg == RL_TOKEN then
      r.T = r.window_us / (r.limit - r.burst + 1)
    elseif r.alg == RL_SLIDING then
      r.slot_us = r.window_us / RL_SLOTS
      r.n = RL_SLOTS + 2
      span = span + math.ceil(span / RL_SLOTS)
    end
    if span > span_ms then span_ms = span end
    values = values + 2 + r.n
    rules[#rules + 1] = r
  end
  rules.fmt = string.rep('d', values)
  rules.len = values * 8
  return rules, span_ms
end

local function rl_load(rules, blob)
  local rs = {}
  if not blob then return rs end
  local count = #blob / 8
  local fmt = rules.fmt
  if #blob ~= rules.len then fmt = string.rep('d', count) end
  local v = { struct.unpack(fmt, blob) }
  local i = 2
  while i + 1 <= count do
    local n = v[i + 1]
    local vals = {}
    for j = 1, n do vals[j] = v[i + 1 + j] end
    if n == RL_SLOTS + 2 then
      local used = 0
      for k = 2, RL_SLOTS + 2 do used = used + vals[k] end
      vals[RL_USED] = used
    end
    rs[v[i]] = vals
    i = i + 2 + n
  end
  return rs
end

-- The sliding window's wait once it is over: the oldest sub-windows leave it one by one.
local function rl_slide_wait(r, s, now, c)
  local used = s[RL_USED]
  for d = 1, RL_SLOTS + 1 do
    used = used - s[d + 1]
    if used + c <= r.limit then return (s[1] + d) * r.slot_us - now end
  end
  return r.window_us
end

-- Brings each rule's state to `now` (refill, roll windows: nothing spent) and finds its wait for c units.
-- One loop, no calls on the common path: this runs on every decision.
local function rl_check(rules, rs, now, c)
  local ok, wait, index = true, 0, 0
  for i = 1, #rules do
    local r = rules[i]
    local alg, s, t = r.alg, rs[r.tag], 0
    if alg == RL_TOKEN then
      if not s then
        s = { r.burst, now }
        rs[r.tag] = s
      end
      local tok = s[1] + (now - s[2]) / r.T
      if tok > r.burst then tok = r.burst end
      s[1], s[2] = tok, now
      if tok < c - 1e-9 then t = (c - tok) * r.T end
    elseif alg == RL_SLIDING then
      local j = math.floor(now / r.slot_us)
      if not s then
        s = { j, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
        rs[r.tag] = s
      end
      local d = j - s[1]
      if d > 0 then
        local used = 0
        for k = 2, RL_SLOTS + 2 do
          local v = 0
          if k + d <= RL_SLOTS + 2 then v = s[k + d] end
          s[k] = v
          used = used + v
        end
        s[1], s[RL_USED] = j, used
      end
      if s[RL_USED] + c > r.limit then t = rl_slide_wait(r, s, now, c) end
    else
      local w = math.floor(now / r.window_us)
      if not s then
        s = { w, 0 }
        rs[r.tag] = s
      end
      if s[1] ~= w then s[1], s[2] = w, 0 end
      if s[2] + c > r.limit then t = (w + 1) * r.window_us - now end
    end
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
      s[RL_USED] = s[RL_USED] + c
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
    local used = s[RL_USED]
    if used == 0 then return r.limit, 0 end
    -- the newest sub-window holding units leaves last
    local k = RL_SLOTS + 2
    while s[k] == 0 do k = k - 1 end
    return r.limit - used, (s[1] + k - 1) * r.slot_us - now
  end
  if s[2] == 0 then return r.limit, 0 end
  return r.limit - s[2], (s[1] + 1) * r.window_us - now
end

-- Appends remaining, resetMs (whole ms) per rule to a reply at out[n + 1 ..]; returns the new length.
local function rl_reply(out, n, rules, rs, now)
  for i = 1, #rules do
    local r = rules[i]
    local left, reset = rl_remaining(r, rs[r.tag], now)
    out[n + 1], out[n + 2] = left, math.ceil(reset / 1000)
    n = n + 2
  end
  return n
end

local function rl_pack(rules, rs, now)
  local vals = { 0 }
  local m, latest = 1, 0
  for i = 1, #rules do
    local r = rules[i]
    local s = rs[r.tag]
    local _, reset = rl_remaining(r, s, now)
    if reset > latest then latest = reset end
    vals[m + 1], vals[m + 2] = r.tag, r.n
    for k = 1, r.n do vals[m + 2 + k] = s[k] end
    m = m + 2 + r.n
  end
  vals[1] = math.floor((now + latest) / 1000) + 1
  return struct.pack(rules.fmt, unpack(vals))
end
