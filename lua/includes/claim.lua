--[[
  claim.lua (include) — the claim step: a job's budget is spent when it starts (docs: DESIGN §3, fairness §4.4).
  Needs includes/fair-share.lua and includes/job.lua first; the caller opens fs before and closes it after.

  job_claim(K, fs, lease_ms, max) -> claimed, wake_ms
    Looks at up to CLAIM_SCAN jobs from the head of ready, in order. Each job of a group not yet refused in
    this call goes through the admission core (fs_decide, no retry promise: the same colours and global
    bucket as live requests); admitted jobs are leased (active member "<id> <token>", a fresh fencing token),
    refused ones stay where they are and their group is skipped for the rest of the call. A member whose
    record is gone or no longer waiting is dropped. The scan stops once the global bucket is empty.
    claimed: a list of {id, record JSON, token, leaseUntil}.
    wake_ms: -1 ready is empty; 0 call again now (max reached, or only dropped members were seen);
             > 0 nothing more may start before then. Refused callers are staggered one emission interval
             apart (the counters field 'cw' holds the last slot given), so many workers waiting on the budget
             wake one after another, not all at once.
]]

local CLAIM_SCAN = 64

local function job_claim(K, fs, lease_ms, max)
  local now = fs.now_ms
  local lease_until = now + lease_ms
  local meta = fs.meta
  local out = {}
  local items = redis.call('LRANGE', K.ready, 0, CLAIM_SCAN - 1)
  if #items == 0 then return out, -1 end
  local blocked, later = {}, {}
  local head, contiguous = 0, true
  local wake_us = FS_INF
  for i = 1, #items do
    if #out >= max or meta.gt < 1 - FS_EPS then break end
    local m = items[i]
    local id, c, w, g, cap = job_parse(m)
    local raw = id and redis.call('HGET', K.jobs, id)
    local taken = false
    -- Only a key is followed by ':' and cjson escapes every '"' inside strings: this finds the state only.
    if not raw or not string.find(raw, '"state":"waiting"', 1, true) then
      taken = true
      job_flight_done(K, g, cap)
    elseif not blocked[g] then
      local r = fs_decide(fs, g, w, c, false)
      if r.allowed == 1 then
        local token = job_token(K, now, g)
        redis.call('ZADD', K.active, lease_until, id .. ' ' .. token)
        out[#out + 1] = { id, raw, token, lease_until }
        taken = true
      else
        blocked[g] = true
        if r.hint_us < wake_us then wake_us = r.hint_us end
      end
    end
    if taken then job_since_done(K, id, g) end
    if taken and contiguous then
      head = head + 1
    elseif taken then
      later[#later + 1] = m
    else
      contiguous = false
    end
  end
  if head > 0 then redis.call('LTRIM', K.ready, head, -1) end
  for _, m in ipairs(later) do redis.call('LREM', K.ready, 1, m) end

  if #out >= max then return out, 0 end
  if redis.call('LLEN', K.ready) == 0 then return out, -1 end
  if meta.gt < 1 - FS_EPS then
    local until_token = (1 - meta.gt) * fs.cfg.T
    if until_token < wake_us then wake_us = until_token end
  end
  if wake_us == FS_INF then return out, 0 end
  local at = now + math.max(1, math.ceil(wake_us / 1000))
  local last = tonumber(redis.call('HGET', K.counters, 'cw') or '0')
  if last >= at and last - at < fs.cfg.window_us / 1000 then
    at = last + math.max(1, math.ceil(fs.cfg.T / 1000))
  end
  redis.call('HSET', K.counters, 'cw', at)
  return out, at - now
end
