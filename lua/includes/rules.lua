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
  State: appended to the group's packed state: until_ms (the group's rule state matters until then: trimming
  keeps the group), then per rule its key (tag · 32 + n: which rule, how many values) and n values:
    token-bucket   tokens, last µs (small numbers and a difference of times: a time plus a fraction of a µs would
                   round away at ~1.7e15 µs, so GCRA's one absolute tat is not strict there)
    sliding-window newest sub-window index j, units in the window, units in sub-window j, then `past`: the
                   RL_SLOTS sub-windows before j, packed in one string (sub-window q at q % RL_SLOTS) that is
                   read only when the window moves or is full, or to find a reset while sub-window j is empty
    fixed-window   window index, count
  In a call the state is one flat array in that layout (rule r's values from r.off); a record in the current
  layout loads with one struct call and saves with one (fs_close packs the group's own values and these in one
  string, rules.whole); a record in another layout (rules added, removed or changed, another build's) is read
  record by record and keeps the rules whose key is still there.
  The reply carries one number per rule, its `mark`, from which the client works out remaining and reset
  (src/core/rules.ts ruleStatusOf; Redis does only what must be atomic): token-bucket ns until the bucket is
  full, (burst − tokens) · T · 1000, sliding-window used · 16 + k (the newest sub-window holding units leaves
  the window at (j + k) · slot; 0 when empty), fixed-window the count; −1 for each rule of an idempotent
  duplicate (nothing was decided: remaining 0, reset 0).
  The functions are made on first use (rl_library(), called by fs_config when the config has rules): every
  script call runs the definitions of its local functions, so a limiter without rules makes none of them.
  Functions (fields of the library):
    config(text, head) -> rules, span_ms  rules = list of { tag, alg, limit, window_us, burst, T, Tns, slot_us,
                                             n, off, key, fmt } and rules.fmt, rules.count, rules.len
                                             (the packed layout), rules.whole
                                             (head .. fmt: head is the group's own struct format, FS_PACK)
    load(rules, blob, at) -> v             the flat state from the rule state at byte `at` of a stored record
    check(rules, v, now, c) -> ok, wait_us, index   index: the violated rule with the longest wait (first on ties)
    spend(rules, v, c)
    reply(out, n, r) -> n                     appends a decision's policy and each rule's mark to a reply
    pack(rules, v, now) -> blob            the rule state alone (a call deciding one group under two plans' rules)
    values(rules, v, now) -> ...           what pack packs, for fs_close's one struct.pack (rules.whole)
    settle(rules, v, now, t1, d)           a reservation settled: d = actual − cost units spent at t1 given back
                                           (d < 0) or charged (d > 0), as each algorithm allows (includes/settle.lua)
]]

local function rl_library()
  -- the sub-windows a window touches: the newest and the RL_SLOTS before it
  local RL_RING = RL_SLOTS + 1
  local RL_TOKEN, RL_SLIDING, RL_FIXED = 1, 2, 3
  -- a record's key: tag · RL_KEY + n (n < RL_KEY; a tag is 32 bits, so the key is exact in a double)
  local RL_KEY = 32
  -- a sliding window's mark: used · RL_MARK + k (k ≤ RL_RING < RL_MARK)
  local RL_MARK = 16
  local RL_PAST = string.rep('d', RL_SLOTS)
  local RL_PAST_ZERO = struct.pack(RL_PAST, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
  local RL_PAST_FMT = 'c' .. #RL_PAST_ZERO
  -- a sliding window's values: j, used, cur and the past
  local RL_SLIDING_N = 4

  local function rl_config(text, head)
    local nums = cjson.decode(text)
    local rules, span_ms, count, fmt, len = {}, 0, 1, 'd', 8
    for i = 1, #nums, 5 do
      local alg, limit, window_ms, burst = nums[i + 1], nums[i + 2], nums[i + 3], nums[i + 4]
      local window_us = window_ms * 1000
      local r = { tag = nums[i], alg = alg, limit = limit, window_us = window_us, burst = burst, T = 0, Tns = 0,
                  slot_us = 0, n = 2, off = count + 2, key = 0, fmt = 'ddd' }
      local span = window_ms
      if alg == RL_TOKEN then
        r.T = window_us / (limit - burst + 1)
        r.Tns = r.T * 1000
      elseif alg == RL_SLIDING then
        r.slot_us = window_us / RL_SLOTS
        r.n, r.fmt = RL_SLIDING_N, 'dddd' .. RL_PAST_FMT
        span = span + math.ceil(span / RL_SLOTS)
      end
      fmt = fmt .. r.fmt
      len = len + struct.size(r.fmt)
      if span > span_ms then span_ms = span end
      r.key = r.tag * RL_KEY + r.n
      count = count + 1 + r.n
      rules[#rules + 1] = r
    end
    rules.count, rules.fmt, rules.len = count, fmt, len
    rules.whole = head .. fmt
    return rules, span_ms
  end

  -- The flat state in the current layout, from a stored record's rule state (any layout, from byte `at`) or
  -- afresh (keys 0: rl_check starts each rule's state). One table, made by the unpack itself.
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
    -- another layout: keep the records whose key (tag and size) is still here
    local v = { 0 }
    for k = 2, rules.count do v[k] = 0 end
    if blob and #blob > at then
      local pos, found = at + 8, {}
      while pos + 7 <= #blob do
        local key = struct.unpack('d', blob, pos)
        -- not a record's key (a record of an older layout): nothing past it can be read
        if key < RL_KEY or key % 1 ~= 0 then break end
        found[key] = pos
        local n = key % RL_KEY
        -- a sliding window's record: its key, 3 numbers and the past
        if n == RL_SLIDING_N then pos = pos + 32 + #RL_PAST_ZERO else pos = pos + 8 + 8 * n end
      end
      for j = 1, #rules do
        local r = rules[j]
        local p = found[r.key]
        -- (a record cut short reads as none)
        if p and p + struct.size(r.fmt) <= #blob + 1 then
          local rec = { struct.unpack(r.fmt, blob, p) }
          for k = 0, r.n do v[r.off - 1 + k] = rec[k + 1] end
        end
      end
    end
    return v
  end

  -- A sliding window's past sub-windows as numbers (past[q % RL_SLOTS + 1] is sub-window q's count).
  local function rl_past(v, o)
    return { struct.unpack(RL_PAST, v[o + 3]) }
  end

  -- The sliding window's wait once it is full: the oldest sub-windows leave it one by one.
  local function rl_slide_wait(r, v, now, c)
    local o = r.off
    local j, used = v[o], v[o + 1]
    local past = rl_past(v, o)
    for d = 1, RL_SLOTS do
      -- sub-window j − RL_RING + d, oldest first, leaves at (j + d) · slot
      used = used - past[(j + d - 1) % RL_SLOTS + 1]
      if used + c <= r.limit then return (j + d) * r.slot_us - now end
    end
    -- then sub-window j itself
    return (j + RL_RING) * r.slot_us - now
  end

  -- Brings each rule's state to `now` (refill, roll windows: nothing spent) and finds its wait for c units.
  -- One loop, no calls on the common path: this runs on every decision.
  local function rl_check(rules, v, now, c)
    local ok, wait, index = true, 0, 0
    for i = 1, #rules do
      local r = rules[i]
      local alg, o, t = r.alg, r.off, 0
      if v[o - 1] ~= r.key then
        -- new: a full bucket, an empty window (only this rule's r.n values)
        v[o - 1] = r.key
        if alg == RL_TOKEN then
          v[o], v[o + 1] = r.burst, now
        elseif alg == RL_SLIDING then
          v[o], v[o + 1], v[o + 2], v[o + 3] = 0, 0, 0, RL_PAST_ZERO
        else
          v[o], v[o + 1] = 0, 0
        end
      end
      if alg == RL_TOKEN then
        local tok = v[o] + (now - v[o + 1]) / r.T
        if tok > r.burst then tok = r.burst end
        v[o], v[o + 1] = tok, now
        if tok < c - 1e-9 then t = (c - tok) * r.T end
      elseif alg == RL_SLIDING then
        -- floor(x) as x − x % 1 (Lua's % is floored, so exact for any x): no C call on the hot path
        local j, q = now / r.slot_us, v[o]
        j = j - j % 1
        if j > q then
          local used = v[o + 1]
          if used > 0 and j - q < RL_RING then
            -- sub-windows q .. j − 1 join the past, in the places of those leaving the window
            local past = rl_past(v, o)
            local k = q % RL_SLOTS + 1
            used = used - past[k]
            past[k] = v[o + 2]
            for p = q + 1, j - 1 do
              k = p % RL_SLOTS + 1
              used = used - past[k]
              past[k] = 0
            end
            v[o + 3] = struct.pack(RL_PAST, unpack(past, 1, RL_SLOTS))
          else
            -- empty, or the whole window has passed
            used = 0
            v[o + 3] = RL_PAST_ZERO
          end
          v[o], v[o + 1], v[o + 2] = j, used, 0
        end
        if v[o + 1] + c > r.limit then t = rl_slide_wait(r, v, now, c) end
      else
        local w = now / r.window_us
        w = w - w % 1
        if v[o] ~= w then v[o], v[o + 1] = w, 0 end
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
        v[o + 1], v[o + 2] = v[o + 1] + c, v[o + 2] + c
      else
        v[o + 1] = v[o + 1] + c
      end
    end
  end

  -- A sliding window's k: its newest sub-window holding units leaves the window at (j + k) · slot (used > 0).
  local function rl_slide_k(v, o)
    if v[o + 2] > 0 then return RL_RING end
    local past, j, k = rl_past(v, o), v[o], RL_SLOTS
    -- sub-window j − RL_RING + k
    while k > 1 and past[(j + k - 1) % RL_SLOTS + 1] == 0 do k = k - 1 end
    return k
  end

  -- The packed values, v[1] first: until when (ms) the state matters (trimming keeps the group until then),
  -- the latest time a rule's quota is whole again; for a caller that packs them after its own in one string
  -- (fs_close: rules.whole; rl_pack). Worked out when the state is packed, not per decision.
  local function rl_values(rules, v, now)
    -- the latest time (µs) a rule's quota is whole again, at least now
    local latest = now
    for i = 1, #rules do
      local r = rules[i]
      local o, alg, at = r.off, r.alg, 0
      if alg == RL_TOKEN then
        at = v[o + 1] + (r.burst - v[o]) * r.T
      elseif v[o + 1] == 0 then
        at = 0
      elseif alg == RL_FIXED then
        at = (v[o] + 1) * r.window_us
      elseif v[o + 2] > 0 then
        at = (v[o] + RL_RING) * r.slot_us
      else
        at = (v[o] + rl_slide_k(v, o)) * r.slot_us
      end
      if at > latest then latest = at end
    end
    latest = latest / 1000
    v[1] = latest - latest % 1 + 1
    return unpack(v, 1, rules.count)
  end

  local function rl_pack(rules, v, now)
    return struct.pack(rules.fmt, rl_values(rules, v, now))
  end

  -- Appends a decision's rule fields to a reply (admit.lua) after its field n: the policy, then each rule's
  -- mark (see the header: the client works out remaining and reset). Call it right after fs_decide. Returns the
  -- reply's new length.
  local function rl_reply_decision(out, n, r)
    local rules, v = r.rules, r.rs
    n = n + 1
    out[n] = r.policy
    for i = 1, #rules do
      local ru = rules[i]
      local o, alg, mark = ru.off, ru.alg, 0
      if alg == RL_TOKEN then
        mark = (ru.burst - v[o]) * ru.Tns
      elseif alg == RL_SLIDING then
        local used = v[o + 1]
        if used > 0 then mark = used * RL_MARK + rl_slide_k(v, o) end
      else
        mark = v[o + 1]
      end
      out[n + i] = mark
    end
    return n + #rules
  end

  -- Settles a reservation of the group (includes/settle.lua): d = actual − cost units, spent at t1 (µs), now
  -- given back (d < 0) or charged (d > 0) to each rule still in force (its key unchanged). What a refund means:
  --   token-bucket   the units go back only when the group made no check since t1 (its state is still the one
  --                  t1 left): then the bucket is as if t1 had taken the actual cost. Otherwise they stay spent:
  --                  the bucket may have been full in between, and units it could not hold are not owed back.
  --   sliding-window the units leave the sub-window t1 put them in, while it is still in the window.
  --   fixed-window   the units leave the count, while t1's window is the current one.
  -- A window that has passed gives nothing back. A debt is charged now: a token bucket below zero, or units in
  -- the current (sub-)window; the rule's wait then counts it.
  local function rl_settle(rules, v, now, t1, d)
    -- token buckets first, on the state as stored (its time tells whether the group checked since t1)
    for i = 1, #rules do
      local r = rules[i]
      local o = r.off
      if r.alg == RL_TOKEN and d < 0 and v[o - 1] == r.key and v[o + 1] == t1 then
        local tok = v[o] - d
        if tok > r.burst then tok = r.burst end
        v[o] = tok
      end
    end
    -- then every rule brought to now (refill, roll windows; a rule new here starts afresh, nothing to settle)
    local known = {}
    for i = 1, #rules do known[i] = v[rules[i].off - 1] == rules[i].key end
    rl_check(rules, v, now, 0)
    for i = 1, #rules do
      local r = rules[i]
      local o, alg = r.off, r.alg
      if not known[i] then
        -- nothing of this rule was spent (it is new, or changed since)
      elseif d > 0 then
        if alg == RL_TOKEN then
          v[o] = v[o] - d
        elseif alg == RL_SLIDING then
          v[o + 1], v[o + 2] = v[o + 1] + d, v[o + 2] + d
        else
          v[o + 1] = v[o + 1] + d
        end
      elseif alg == RL_SLIDING then
        local back, j, j1 = -d, v[o], t1 / r.slot_us
        j1 = j1 - j1 % 1
        if j1 == j then
          if back > v[o + 2] then back = v[o + 2] end
          v[o + 1], v[o + 2] = v[o + 1] - back, v[o + 2] - back
        elseif j1 < j and j - j1 <= RL_SLOTS then
          local past = rl_past(v, o)
          local k = j1 % RL_SLOTS + 1
          if back > past[k] then back = past[k] end
          past[k] = past[k] - back
          v[o + 1] = v[o + 1] - back
          v[o + 3] = struct.pack(RL_PAST, unpack(past, 1, RL_SLOTS))
        end
      elseif alg == RL_FIXED then
        local w1 = t1 / r.window_us
        w1 = w1 - w1 % 1
        if w1 == v[o] then
          local back = -d
          if back > v[o + 1] then back = v[o + 1] end
          v[o + 1] = v[o + 1] - back
        end
      end
    end
  end

  return { config = rl_config, load = rl_load, check = rl_check, spend = rl_spend, reply = rl_reply_decision,
           pack = rl_pack, values = rl_values, settle = rl_settle }
end
