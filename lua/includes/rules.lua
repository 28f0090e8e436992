--[[
  rules.lua (include of fair-share.lua) — per-group rules: caps on top of the fair share, decided in the same
  call and all-or-nothing (a request any policy denies spends nothing in any other). src/core/rules.ts is the
  same code in TypeScript: keep the two in step, name for name.

  Config: after fs_config's 9 (10) numbers, ';' and a JSON array of 5 numbers per rule (cjson parses it in one
  C call, cheaper than a text pattern per rule): tag, algorithm, limit, windowMs, burst
    tag        a number naming the rule's state (from name, algorithm and window: a changed rule starts afresh)
    algorithm  1 token-bucket (strict: burst, then (limit − burst + 1) per window), 2 sliding-window
               (RL_SLOTS sub-windows, strict: counts every sub-window the window touches), 3 fixed-window
               (windows aligned to multiples of windowMs on the store clock)
  State: appended to the group's packed state, doubles only: until_ms (the group's rule state matters until
  then: trimming keeps the group), then per rule its key (tag · 32 + n: which rule, how many values), n values:
    token-bucket   tokens, last µs
    sliding-window newest sub-window index j, units in the window, then a ring of RL_SLOTS + 1 counts
                   (sub-window q at q % (RL_SLOTS + 1): a window moving on clears the places it leaves, nothing moves)
    fixed-window   window index, count
  In a call the state is one flat array in that layout (rule r's values from r.off), so loading and saving are
  one struct call each when the stored layout is the current rules' (the common case: fs_close packs the
  group's own values and these in one string, rules.whole); a record whose tag does not match (a new or changed
  rule) starts afresh. until_ms is worked out once per decision, from the resets the reply computes anyway.
  The functions are made on first use (rl_library(), called by fs_config when the config has rules): every
  script call runs the definitions of its local functions, so a limiter without rules makes none of them.
  Functions (fields of the library):
    config(text, head) -> rules, span_ms  rules = list of { tag, alg, limit, window_us, burst, T, slot_us, n, off, key }
                                             and rules.fmt, rules.count, rules.len (the packed layout), rules.whole
                                             (head .. fmt: head is the group's own struct format, FS_PACK)
    load(rules, blob, at) -> v             the flat state from the rule state at byte `at` of a stored record
                                             (fresh records have key 0)
    check(rules, v, now, c) -> ok, wait_us, index   index: the violated rule with the longest wait (first on ties)
    spend(rules, v, c)
    reply(out, n, r, now) -> n                appends a decision's policy and remaining, resetMs per rule to a reply
    pack(rules, v, now) -> blob            the rule state alone (a call deciding one group under two plans' rules)
    values(rules, v, now) -> ...           what pack packs, for fs_close's one struct.pack (rules.whole)
]]

local function rl_library()
  local RL_SLOTS = 10
  -- a sliding window's ring: the RL_SLOTS + 1 sub-windows a window touches, sub-window q at q % RL_RING
  local RL_RING = RL_SLOTS + 1
  local RL_TOKEN, RL_SLIDING, RL_FIXED = 1, 2, 3
  -- a record's key: tag · RL_KEY + n (n < RL_KEY; a tag is 32 bits, so the key is exact in a double)
  local RL_KEY = 32

  local function rl_config(text, head)
    local nums = cjson.decode(text)
    local rules, span_ms, count = {}, 0, 1
    for i = 1, #nums, 5 do
      local alg, limit, window_ms, burst = nums[i + 1], nums[i + 2], nums[i + 3], nums[i + 4]
      local window_us = window_ms * 1000
      local r = { tag = nums[i], alg = alg, limit = limit, window_us = window_us, burst = burst, T = 0, slot_us = 0,
                  n = 2, off = count + 2, key = 0 }
      local span = window_ms
      if alg == RL_TOKEN then
        r.T = window_us / (limit - burst + 1)
      elseif alg == RL_SLIDING then
        r.slot_us = window_us / RL_SLOTS
        r.n = RL_RING + 2
        span = span + math.ceil(span / RL_SLOTS)
      end
      if span > span_ms then span_ms = span end
      r.key = r.tag * RL_KEY + r.n
      count = count + 1 + r.n
      rules[#rules + 1] = r
    end
    rules.count, rules.fmt, rules.len = count, string.rep('d', count), count * 8
    rules.whole = head .. rules.fmt
    return rules, span_ms
  end

  -- The flat state in the current layout, from a stored record's rule state (any layout, from byte `at`) or
  -- afresh. One table, made by the unpack itself (it also holds unpack's next position, past the values).
  local function rl_load(rules, blob, at)
    if blob and #blob - at + 1 == rules.len then
      local v = { struct.unpack(rules.fmt, blob, at) }
      local same = true
      for i = 1, #rules do
        local r = rules[i]
        if v[r.off - 1] ~= r.key then same = false break end
      end
      if same then return v end
    end
    -- another layout (rules added, removed or changed): keep the records whose key (tag and size) is still here
    local v = { 0 }
    for k = 2, rules.count do v[k] = 0 end
    if blob and #blob > at then
      local count = (#blob - at + 1) / 8
      local old = { struct.unpack(string.rep('d', count), blob, at) }
      local found = {}
      local i = 2
      while i <= count do
        local key = old[i]
        -- not a record's key (a record of an older layout): nothing past it can be read
        if key < RL_KEY or key % 1 ~= 0 then break end
        found[key] = i
        i = i + 1 + key % RL_KEY
      end
      for j = 1, #rules do
        local r = rules[j]
        local at_old = found[r.key]
        if at_old then
          for k = 0, r.n do v[r.off - 1 + k] = old[at_old + k] end
        end
      end
    end
    return v
  end

  -- The sliding window's wait once it is over: the oldest sub-windows leave it one by one.
  local function rl_slide_wait(r, v, now, c)
    local o = r.off
    local j, used = v[o], v[o + 1]
    for d = 1, RL_RING do
      -- sub-window j − RL_RING + d, oldest first
      used = used - v[o + 2 + (j + d) % RL_RING]
      if used + c <= r.limit then return (j + d) * r.slot_us - now end
    end
    return r.window_us
  end

  -- Brings each rule's state to `now` (refill, roll windows: nothing spent) and finds its wait for c units.
  -- One loop, no calls on the common path: this runs on every decision.
  local function rl_check(rules, v, now, c)
    local ok, wait, index = true, 0, 0
    -- until when the state matters: stale now (rl_reply_decision or rl_values works it out again)
    v[1] = 0
    for i = 1, #rules do
      local r = rules[i]
      local alg, o, t = r.alg, r.off, 0
      local fresh = v[o - 1] ~= r.key
      if fresh then v[o - 1] = r.key end
      if alg == RL_TOKEN then
        if fresh then v[o], v[o + 1] = r.burst, now end
        local tok = v[o] + (now - v[o + 1]) / r.T
        if tok > r.burst then tok = r.burst end
        v[o], v[o + 1] = tok, now
        if tok < c - 1e-9 then t = (c - tok) * r.T end
      elseif alg == RL_SLIDING then
        -- floor(x) as x − x % 1 (Lua's % is floored, so exact for any x): no C call on the hot path
        local j, q = now / r.slot_us, v[o]
        j = j - j % 1
        if fresh or j - q >= RL_RING then
          -- new, or the whole window has passed
          for k = o + 2, o + RL_RING + 1 do v[k] = 0 end
          v[o], v[o + 1] = j, 0
        elseif j > q then
          -- sub-windows q + 1 .. j take the places of those leaving the window
          local used = v[o + 1]
          for p = q + 1, j do
            local k = o + 2 + p % RL_RING
            used = used - v[k]
            v[k] = 0
          end
          v[o], v[o + 1] = j, used
        end
        if v[o + 1] + c > r.limit then t = rl_slide_wait(r, v, now, c) end
      else
        local w = now / r.window_us
        w = w - w % 1
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
        local k = o + 2 + v[o] % RL_RING
        v[o + 1], v[k] = v[o + 1] + c, v[k] + c
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
      local used = v[o + 1]
      if used == 0 then return r.limit, 0 end
      -- the newest sub-window holding units leaves last (sub-window j − RL_RING + k)
      local j, k = v[o], RL_RING
      while v[o + 2 + (j + k) % RL_RING] == 0 do k = k - 1 end
      return r.limit - used, (j + k) * r.slot_us - now
    end
    if v[o + 1] == 0 then return r.limit, 0 end
    return r.limit - v[o + 1], (v[o] + 1) * r.window_us - now
  end

  -- The packed values (v[1]: until when, in ms, the state matters: trimming keeps the group until then; worked
  -- out here only when no reply did since the last check), for a caller that packs them after its own in one
  -- string (fs_close: rules.whole).
  local function rl_values(rules, v, now)
    if v[1] == 0 then
      local latest = 0
      for i = 1, #rules do
        local _, reset = rl_remaining(rules[i], v, now)
        if reset > latest then latest = reset end
      end
      v[1] = math.floor((now + latest) / 1000) + 1
    end
    return unpack(v, 1, rules.count)
  end

  local function rl_pack(rules, v, now)
    return struct.pack(rules.fmt, rl_values(rules, v, now))
  end

  -- Appends a decision's rule fields to a reply (admit.lua) after its field n: policy, then remaining, resetMs
  -- (whole ms) per rule, as they stand now (call it right after fs_decide). Returns the reply's new length. Sets
  -- v[1] on the way (rl_values' until, from the same resets: packing the state then works out nothing again).
  -- rl_remaining inlined, floor and ceil in arithmetic: this runs on every decision.
  local function rl_reply_decision(out, n, r, now)
    local rules, v = r.rules, r.rs
    n = n + 1
    out[n] = r.policy
    local latest = 0
    for i = 1, #rules do
      local ru = rules[i]
      local o, alg = ru.off, ru.alg
      local left, reset = ru.limit, 0
      if alg == RL_TOKEN then
        local tok = v[o]
        left = tok + 1e-9
        left = left - left % 1
        if left < 0 then left = 0 end
        reset = (ru.burst - tok) * ru.T
      elseif alg == RL_SLIDING then
        local used = v[o + 1]
        if used > 0 then
          local j, k = v[o], RL_RING
          while v[o + 2 + (j + k) % RL_RING] == 0 do k = k - 1 end
          left, reset = left - used, (j + k) * ru.slot_us - now
        end
      elseif v[o + 1] > 0 then
        left, reset = left - v[o + 1], (v[o] + 1) * ru.window_us - now
      end
      if reset > latest then latest = reset end
      -- ceil(reset / 1000) without a C call (reset ≥ 0)
      local ms = reset / 1000
      local frac = ms % 1
      ms = ms - frac
      if frac > 0 then ms = ms + 1 end
      out[n + 1], out[n + 2] = left, ms
      n = n + 2
    end
    latest = (now + latest) / 1000
    v[1] = latest - latest % 1 + 1
    return n
  end

  return { config = rl_config, load = rl_load, check = rl_check, spend = rl_spend, reply = rl_reply_decision,
           pack = rl_pack, values = rl_values }
end
