--[[
  overrides.lua (include) — per-group overrides (docs/runtime-policies.md): an operator's settings for one group,
  read by every admission script in the same call as its decision, with one HGET of the group's field (no
  override: nil, nothing else runs). src/core/overrides.ts is the same code in TypeScript: keep the two in step.
  Needs includes/fair-share.lua first (RL, rl_library, FS_PACK).

  overrides HASH: group -> '<expiresMs>|<setMs>|<settings JSON>' (expiresMs 0: none), written by override-set.lua;
  '' -> the longest rule span (ms) any override set on the limiter had (see ov_span).
  The JSON (the client builds it; a plan is resolved into its values when the override is set):
    b 1 blocked, w weight, c concurrency, g groupConcurrency (each 0: not overridden), r the rules' config text
    (rules.lua's JSON array; absent: the check's own rules; '[]': none); the rest is the client's.
  An entry past its expiresMs is absent here (override-set.lua and override-list.lua forget it).

  ov_read(fs, key, group) -> false | ov   ov = { raw, b, w, c, g, rules (nil: the check's; false: none), rtext
                                          (the rules' config text, nil: none), expires }
  ov_span(fs, key)                       once per call, after fs_open (a call without overrides then reads none
                                          per check), before fs_close: the longest window any override's rules
                                          ever had (the field '' of the overrides HASH, never a group id) keeps the
                                          limiter's keys as long as their state needs (fs.ttl_ms), for every call
                                          alike: a batch renews them as its checks' own calls would
  ov_text(ov, r) -> string               the reply's `override` field: '' without one, else the policy and each
                                          override rule's mark (as rules.lua's reply, comma-separated) when the
                                          override's rules decided, then '\n' and the stored value
  ov_rules(out, n, r, ov, lane) -> n     the reply's rule fields for the call's own rules (lane): rules.lua's,
                                          or, when the override's rules or its block decided, policy 0 and each
                                          mark −1 (the client reads the override field instead)
  ov_blocked(fs, group, ov) -> r         a blocked group's decision (fs_decide's shape): denied, nothing spent,
                                          retry when the override expires (else after one window)
]]

local OV_VALUE = '^(%d+)|(%d+)|(.*)$'
-- rules text -> parsed rules, for this call: the groups of one plan's overrides share their parse
local OV_RULES = {}

local function ov_read(fs, key, group)
  -- ov_span found no overrides at all in this call: nothing to read
  if not fs.ov_any then return false end
  local raw = redis.call('HGET', key, group)
  if not raw then return false end
  local expires, _, text = string.match(raw, OV_VALUE)
  if not expires then return false end
  expires = tonumber(expires)
  if expires > 0 and expires <= fs.now_ms then return false end
  local s = cjson.decode(text)
  local ov = { raw = raw, b = tonumber(s.b) or 0, w = tonumber(s.w) or 0, c = tonumber(s.c) or 0,
               g = tonumber(s.g) or 0, rules = nil, rtext = nil, expires = expires }
  if type(s.r) == 'string' then
    ov.rtext = s.r
    local rules = OV_RULES[s.r]
    if rules == nil then
      if not RL then RL = rl_library() end
      rules = RL.config(s.r, FS_PACK)
      if #rules == 0 then rules = false end
      OV_RULES[s.r] = rules
    end
    ov.rules = rules
  end
  return ov
end

local function ov_span(fs, key)
  -- a limiter without overrides: one read per call, none per check
  if redis.call('HLEN', key) == 0 then
    fs.ov_any = false
    return
  end
  local span = redis.call('HGET', key, '')
  if not span then return end
  local cfg = fs.cfg
  local ttl = math.max(cfg.idle_ms, tonumber(span)) + math.floor((cfg.window_us + cfg.epoch_us) / 1000)
  if ttl > cfg.ttl_ms then fs.ttl_ms = ttl end
end

local function ov_text(ov, r)
  if not ov then return '' end
  if ov.b == 1 or ov.rules == nil or not r.rules then return '\n' .. ov.raw end
  local marks = {}
  RL.reply(marks, 0, r)
  for i = 1, #marks do
    local m = marks[i]
    marks[i] = string.format('%d', m - m % 1)
  end
  return table.concat(marks, ',') .. '\n' .. ov.raw
end

local function ov_rules(out, n, r, ov, lane)
  if not lane then return n end
  if ov and (ov.b == 1 or ov.rules ~= nil) then
    n = n + 1
    out[n] = 0
    for i = 1, #lane do out[n + i] = -1 end
    return n + #lane
  end
  return RL.reply(out, n, r)
end

local function ov_blocked(fs, group, ov)
  local retry_us = fs.cfg.window_us
  if ov.expires > 0 then retry_us = (ov.expires - fs.now_ms) * 1000 end
  return { allowed = 0, colour = 2, remaining = 0, limit = 0, guaranteed = 0, retry_us = retry_us,
           hint_us = retry_us, reset_us = 0, active = fs.meta.gn, group = group, empty_us = 0, rules = false,
           policy = 0, lease = '', held = 0 }
end

-- After fs_close: when it renewed the limiter's keys, the override keys too (includes/override-store.lua), so an
-- override without a ttl lasts as long as the limiter is used.
local function ov_keep(fs, key, due_key, index_key)
  if not fs.expire then return end
  redis.call('PEXPIRE', key, OV_KEEP_MS)
  redis.call('PEXPIRE', due_key, OV_KEEP_MS)
  redis.call('PEXPIRE', index_key, OV_KEEP_MS)
end
