--[[
  rules.lua (include of fair-share.lua) — per-group rules: caps on top of the fair share, decided in the same
  call and all-or-nothing (a request any policy denies spends nothing in any other). src/core/rules.ts is the
  same code in TypeScript: keep the two in step, name for name.

  Config: after fs_config's 8 numbers, ';' and a JSON array of 5 numbers per rule (cjson parses it in one C
  call: a text pattern per rule cost 3.5 µs a call): tag, algorithm, limit, windowMs, burst
    tag        a number naming the rule's state (from name, algorithm and window: a changed rule starts afresh)
    algorithm  1 token-bucket (strict: burst, then (limit − burst + 1) per window), 2 sliding-window
               (RL_SLOTS sub-windows, strict: counts every sub-window the window touches), 3 fixed-window
               (windows aligned to multiples of windowMs on the store clock)
  State: appended to the group's packed state, doubles only: until_ms (the group's rule state matters until
  then: trimming keeps the group), then per rule tag, n, n values:
    token-bucket   tokens, last µs
    sliding-window newest sub-window index, RL_SLOTS + 1 counts (oldest first)
    fixed-window   window index, count
  In a call the state is one flat array in that layout (rule r's values from r.off), so loading and saving are
  one struct call each when the stored layout is the current rules' (the common case); a record whose tag does
  not match (a new or changed rule) starts afresh. A sliding window's sum is kept past the packed values.
  The functions are made on first use (rl_library(), called by fs_config when the config has rules): every
  script call runs the definitions of its local functions, so a limiter without rules makes none of them.
  Functions (fields of the library):
    config(text) -> rules, span_ms        rules = list of { tag, alg, limit, window_us, burst, T, slot_us, n, off }
                                             and rules.fmt, rules.count, rules.len (the packed layout)
    load(rules, blob) -> v                 the flat state (fresh records have tag 0)
    check(rules, v, now, c) -> ok, wait_us, index   index: the violated rule with the longest wait (first on ties)
    spend(rules, v, c)
    reply(out, r, now) -> n                   appends a decision's policy and remaining, resetMs per rule to a reply
    pack(rules, v, now) -> blob
]]

local function rl_library()
  local RL_SLOTS = 10
  local RL_TOKEN, RL_SLIDING, RL_FIXED = 1, 2, 3

  local function rl_config(text)
    local nums = cjson.decode(text)
    local rules, span_ms, count = {}, 0, 1
    for i = 1, #nums, 5 do
      local alg, limit, window_ms, burst = nums[i + 1], nums[i + 2], nums[i + 3], nums[i + 4]
      local window_us = window_ms * 1000
      local r = { tag = nums[i], alg = alg, limit = limit, window_us = window_us, burst = burst, T = 0, slot_us = 0,
                  n = 2, off = count + 3, used = 0 }
      local span = window_ms
      if alg == RL_TOKEN then
        r.T = window_us / (limit - burst + 1)
      elseif alg == RL_SLIDING then
        r.slot_us = window_us / RL_SLOTS
        r.n = RL_SLOTS + 2
        span = span + math.ceil(span / RL_SLOTS)
      end
      if span > span_ms then span_ms = span end
      count = count + 2 + r.n
      rules[#rules + 1] = r
    end
    -- a sliding window's sum lives past the packed values, one slot per rule
    for i = 1, #rules do rules[i].used = count + i end
    rules.count, rules.fmt, rules.len = count, string.rep('d', count), count * 8
    return rules, span_ms
  end

  -- The flat state in the current layout, from a stored blob (any layout) or afresh.
  local function rl_load(rules, blob)
    local v
    if blob and #blob == rules.len then
      v = { struct.unpack(rules.fmt, blob) }
      for i = 1, #rules do
        local r = rules[i]
        if v[r.off - 2] ~= r.tag or v[r.off - 1] ~= r.n then v = nil break end
      end
    end
    if not v then
      -- another layout (rules added, removed or changed): keep the records whose tag is still here
      local found = {}
      if blob then
        local count = #blob / 8
        local old = { struct.unpack(string.rep('d', count), blob) }
        local i = 2
        while i + 1 <= count do
          found[old[i]] = i
          i = i + 2 + old[i + 1]
        end
        v = { 0 }
        for k = 2, rules.count do v[k] = 0 end
        for j = 1, #rules do
          local r = rules[j]
          local at = found[r.tag]
          if at and old[at + 1] == r.n then
            for k = 0, r.n + 1 do v[r.off - 2 + k] = old[at + k] end
          end
        end
      else
        v = { 0 }
        for k = 2, rules.count do v[k] = 0 end
      end
    end
    for i = 1, #rules do
      local r = rules[i]
      if r.alg == RL_SLIDING then
        local used = 0
        for k = r.off + 1, r.off + RL_SLOTS + 1 do used = used + v[k] end
        v[r.used] = used
      end
    end
    return v
  end

  -- The sliding window's wait once it is over: the oldest sub-windows leave it one by one.
  local function rl_slide_wait(r, v, now, c)
    local o = r.off
    local used = v[r.used]
    for d = 1, RL_SLOTS + 1 do
      used = used - v[o + d]
      if used + c <= r.limit then return (v[o] + d) * r.slot_us - now end
    end
    return r.window_us
  end

  -- Brings each rule's state to `now` (refill, roll windows: nothing spent) and finds its wait for c units.
  -- One loop, no calls on the common path: this runs on every decision.
  local function rl_check(rules, v, now, c)
    local ok, wait, index = true, 0, 0
    for i = 1, #rules do
      local r = rules[i]
      local alg, o, t = r.alg, r.off, 0
      local fresh = v[o - 2] ~= r.tag
      if fresh then v[o - 2], v[o - 1] = r.tag, r.n end
      if alg == RL_TOKEN then
        if fresh then v[o], v[o + 1] = r.burst, now end
        local tok = v[o] + (now - v[o + 1]) / r.T
        if tok > r.burst then tok = r.burst end
        v[o], v[o + 1] = tok, now
        if tok < c - 1e-9 then t = (c - tok) * r.T end
      elseif alg == RL_SLIDING then
        local j = math.floor(now / r.slot_us)
        if fresh then
          v[o] = j
          for k = o + 1, o + RL_SLOTS + 1 do v[k] = 0 end
          v[r.used] = 0
        end
        local d = j - v[o]
        if d > 0 then
          local used, last = 0, o + RL_SLOTS + 1
          for k = o + 1, last do
            local x = 0
            if k + d <= last then x = v[k + d] end
            v[k] = x
            used = used + x
          end
          v[o], v[r.used] = j, used
        end
        if v[r.used] + c > r.limit then t = rl_slide_wait(r, v, now, c) end
      else
        local w = math.floor(now / r.window_us)
        if fresh or v[o] ~= w then v[o], v[o + 1] = w, 0 end
        if v[o + 1] + c > r.limit then t = (w + 1) * r.window_us - now end
      end
      if t > 0 then
        ok = false
        if t > wait then wait, index = t, i end
      end
    end
    return ok, wait, index
  end

  local function rl_spend(rules, v, c)
    for i = 1, #rules do
      local r = rules[i]
      local o = r.off
      if r.alg == RL_TOKEN then
        v[o] = v[o] - c
      elseif r.alg == RL_SLIDING then
        v[o + RL_SLOTS + 1] = v[o + RL_SLOTS + 1] + c
        v[r.used] = v[r.used] + c
      else
        v[o + 1] = v[o + 1] + c
      end
    end
  end

  -- Remaining units and time until the rule's quota is whole again (µs), for one rule.
  local function rl_remaining(r, v, now)
    local o = r.off
    if r.alg == RL_TOKEN then
      local left = math.floor(v[o] + 1e-9)
      if left < 0 then left = 0 end
      return left, (r.burst - v[o]) * r.T
    elseif r.alg == RL_SLIDING then
      local used = v[r.used]
      if used == 0 then return r.limit, 0 end
      -- the newest sub-window holding units leaves last
      local k = RL_SLOTS + 1
      while v[o + k] == 0 do k = k - 1 end
      return r.limit - used, (v[o] + k) * r.slot_us - now
    end
    if v[o + 1] == 0 then return r.limit, 0 end
    return r.limit - v[o + 1], (v[o] + 1) * r.window_us - now
  end

  -- Appends remaining, resetMs (whole ms) per rule to a reply at out[n + 1 ..]; returns the new length.
  local function rl_reply(out, n, rules, v, now)
    for i = 1, #rules do
      local left, reset = rl_remaining(rules[i], v, now)
      out[n + 1], out[n + 2] = left, math.ceil(reset / 1000)
      n = n + 2
    end
    return n
  end

  local function rl_pack(rules, v, now)
    local latest = 0
    for i = 1, #rules do
      local _, reset = rl_remaining(rules[i], v, now)
      if reset > latest then latest = reset end
    end
    v[1] = math.floor((now + latest) / 1000) + 1
    return struct.pack(rules.fmt, unpack(v, 1, rules.count))
  end

  -- Appends a decision's rule fields to a reply (admit.lua): policy, then remaining, resetMs per rule, as they
  -- stand now (call it right after fs_decide). Returns the reply's new length.
  local function rl_reply_decision(out, r, now)
    local n = #out
    out[n + 1] = r.policy
    return rl_reply(out, n + 1, r.rules, r.rs, now)
  end

  return { config = rl_config, load = rl_load, check = rl_check, spend = rl_spend, reply = rl_reply_decision,
           pack = rl_pack }
end
