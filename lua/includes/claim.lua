--[[
  claim.lua (include) — the claim step: a job's budget is spent when it starts (docs/algorithm.md §3.4).
  Needs includes/fair-share.lua, includes/job.lua and includes/settle.lua first; the caller opens fs before and
  closes it after.

  job_claim(K, fs, lease_ms, max, leases?, plans?, stagger?, ov_key?) -> claimed, wake_ms
    Looks at up to CLAIM_SCAN jobs from the head of ready, in order. Each job of a group not yet refused in
    this call goes through the admission core (fs_decide, no retry promise: the same colours and global
    bucket as live requests), a job of a plan under that plan's rules (`plans`: claim_plans, below; a plan it
    does not name, e.g. one removed since the job was written, decides under the config's); admitted jobs are
    leased (active member "<id> <token>", a fresh fencing token), refused ones stay where they are and their
    group is skipped for the rest of the call. A member whose record is gone or no longer waiting is dropped.
    The scan stops once the global bucket is empty.
    With classes, each job is decided in its own class (fs_class: the class meter it spends, as its check would).
    A job whose cost is an estimate (record field st) gets a reservation as a check with `settle` would
    (includes/settle.lua, held as long as the limiter's and its rules' longest window): its handler settles it.
    claimed: a list of {id, record JSON, token, leaseUntil, reservation ('' = none)}. With `leases` (a script making several claims) the
    tokens and leases are written by the caller's one job_lease_all(K, leases) at its end, for all claims.
    wake_ms: -1 ready is empty; 0 call again now (max reached, or only dropped members were seen);
             > 0 nothing more may start before then. Refused callers are staggered one emission interval
             apart (the counters field 'cw' holds the last slot given), so many workers waiting on the budget
             wake one after another, not all at once. stagger = false (complete-claim: the claim that passes a
             finished job's slot on, whose caller does not sleep on wake_ms) takes no slot: a slot taken by a
             caller that never wakes on it pushed the sleeping claimers' slots later, so a drain after a pause
             started jobs at ~2/3 of the limit (the bucket filled and overflowed meanwhile).
    ov_key (the overrides HASH, includes/overrides.lua): a job of a group with an override starts under the
    override's weight and rules; a blocked group's job does not start: it goes back to delayed, still waiting,
    due when the block expires (without a ttl, one window later, to be looked at again), so it holds no place
    in ready meanwhile (ready is bounded: blocked jobs left there would keep every other group's out).
]]
-- One claimed job in a reply (claim.lua, complete-claim.lua): the record as stored, its lease token and deadline.
-- @struct LeasedJob [id: string, record: string, token: string, leaseUntil: int, reservation: string]


-- The plans argument of a claim script: JSON {plan name: its rules' JSON array (fs_config's text after ';')}
-- for each plan whose rules differ from the config's ('' = none). Decoded only when a claimed job has a plan,
-- each plan's rules parsed once per call: claim_rules(plans, name) -> its rules (nil = the config's).
local function claim_plans(text)
  return { text = text, rules = false }
end

local function claim_rules(plans, name)
  if not plans or plans.text == '' then return nil end
  if not plans.rules then plans.rules, plans.texts = {}, cjson.decode(plans.text) end
  local rules = plans.rules[name]
  if rules == nil then
    local text = plans.texts[name]
    rules = false
    if type(text) == 'string' then
      if not RL then RL = rl_library() end
      rules = RL.config(text, FS_PACK)
    end
    plans.rules[name] = rules
  end
  if rules == false then return nil end
  return rules
end

-- Leases admitted jobs (`leases`: {jobs = {claimed entries}, groups = {their groups}}). A fresh fencing token
-- per job: a counter plus the time, so a lost counter cannot repeat one; then the group. One HINCRBY reserves
-- the counters of all, one ZADD writes all the leases (each entry's leaseUntil is its score).
local function job_lease_all(K, leases)
  local n = #leases.jobs
  if n == 0 then return end
  local now = leases.now
  local last = redis.call('HINCRBY', K.counters, 'jtok', n)
  local members = {}
  for i, c in ipairs(leases.jobs) do
    local token = string.format('%d:%d ', last - n + i, now) .. leases.groups[i]
    c[3] = token
    members[#members + 1] = c[4]
    members[#members + 1] = c[1] .. ' ' .. token
  end
  job_call_chunked('ZADD', K.active, members)
end

-- A blocked group's ready job back to delayed, due at `due` (includes/claim.lua's header): its place in ready and
-- its group's in-flight slot are given up; its `since` stays (it has been waiting since then).
local function claim_hold_back(K, m, raw, g, cap, due, now)
  local r = cjson.decode(raw)
  r.runAt = due
  job_put(K, r)
  redis.call('ZADD', K.delayed, due, m)
  job_flight_done(K, g, cap)
  job_keep(K, now, due, { K.delayed, K.jobs })
end

local function job_claim(K, fs, lease_ms, max, leases, plans, stagger, ov_key)
  local now = fs.now_ms
  local lease_until = now + lease_ms
  local meta = fs.meta
  local out = {}
  local own = not leases
  leases = leases or { jobs = {}, groups = {} }
  leases.now = now -- the claims' store time (fs clamps it: never before the last call's)
  -- Members are popped one at a time from the head (no page of 64 copied per claim: a claim usually takes the
  -- first); the ones left are pushed back in order at the end. Only the members there at the start are looked
  -- at (a held job that a dropped member's group sends to the tail waits for the next claim).
  local scan = math.min(CLAIM_SCAN, redis.call('LLEN', K.ready))
  if scan == 0 then return out, -1 end
  local blocked, kept = {}, {}
  local reserved = false
  local first = (fs.base_cfg or fs.cfg).cls
  local others = first and first.others
  local wake_us = FS_INF
  for _ = 1, scan do
    if #out >= max or meta.gt < 1 - FS_EPS then break end
    local m = redis.call('LPOP', K.ready)
    local id, c, w, g, cap, plan = job_parse(m)
    local raw = id and redis.call('HGET', K.jobs, id)
    -- Only a key is followed by ':' and cjson escapes every '"' inside strings: this finds the state only.
    if not raw or not string.find(raw, '"state":"waiting"', 1, true) then
      job_flight_done(K, g, cap)
    elseif blocked[g] then
      kept[#kept + 1] = m
    else
      local rules = plan and claim_rules(plans, plan)
      -- with classes, a job is decided in its own class (record field cl; one the limiter no longer has, and
      -- none: the config's first, 'default'), so it spends that class's meter as its check would have
      if others then
        local name = string.match(raw, '"cl":"([^"]+)"')
        local share = name and others[name]
        if share then fs_class(fs, name, share) else fs_class(fs, first.name, first.share) end
      end
      local ov = ov_key and ov_read(fs, ov_key, g)
      if ov then
        if ov.w > 0 then w = ov.w end
        if ov.rules ~= nil then rules = ov.rules end
      end
      local r
      if ov and ov.b == 1 then
        local due = ov.expires
        if due <= 0 then due = now + math.ceil(fs.cfg.window_us / 1000) end
        claim_hold_back(K, m, raw, g, cap, due, now)
      else
        r = fs_decide(fs, g, w, c, false, rules)
      end
      if not r then
        -- held back: nothing decided, nothing kept in ready
      elseif r.allowed == 1 then
        job_since_done(K, id, g)
        local e = { id, raw, false, lease_until, '' }
        -- Only a key is followed by ':' (as for the state above): a payload cannot fake the flag.
        if string.find(raw, '"st":1', 1, true) then
          e[5] = st_reserve(fs, K.reservations, K.reservationsDue, r.group, c, r.colour, fs.cfg.hold_ms,
            plan and ('.' .. plan) or '', ov and ov.rtext or nil)
          reserved = true
        end
        out[#out + 1] = e
        leases.jobs[#leases.jobs + 1] = e
        leases.groups[#leases.jobs] = g
      else
        blocked[g] = true
        kept[#kept + 1] = m
        if r.hint_us < wake_us then wake_us = r.hint_us end
      end
    end
  end
  if #kept > 0 then
    local back = {}
    for i = #kept, 1, -1 do back[#back + 1] = kept[i] end
    job_call_chunked('LPUSH', K.ready, back)
  end
  if own then job_lease_all(K, leases) end
  if reserved then st_sweep(fs, K.reservations, K.reservationsDue) end

  if #out >= max then return out, 0 end
  if redis.call('LLEN', K.ready) == 0 then return out, -1 end
  if meta.gt < 1 - FS_EPS then
    local until_token = (1 - meta.gt) * fs.cfg.T
    if until_token < wake_us then wake_us = until_token end
  end
  if wake_us == FS_INF then return out, 0 end
  local at = now + math.max(1, math.ceil(wake_us / 1000))
  if stagger == false then return out, at - now end
  local last = tonumber(redis.call('HGET', K.counters, 'cw') or '0')
  if last >= at and last - at < fs.cfg.window_us / 1000 then
    at = last + math.max(1, math.ceil(fs.cfg.T / 1000))
  end
  redis.call('HSET', K.counters, 'cw', at)
  return out, at - now
end
