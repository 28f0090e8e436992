-- lease.lua: the claim and complete steps (included by claim.lua, complete.lua and complete-claim.lua after
-- includes/job.lua, never run alone).

-- Moves up to `max` jobs from the head of ready to active, each under a new lease with a fresh fencing
-- token. A member whose record is gone (removed meanwhile) is dropped; at most max + 9 members are popped.
-- Returns a list of {id, type, group, payload, attempts, token, leaseUntil}.
local function job_claim(K, now, lease_until, max)
  local out = {}
  for _ = 1, max + 9 do
    local m = redis.call('LPOP', K.ready)
    if not m then break end
    local r = job_get(K, (job_parse(m)))
    if r and r.state == 'waiting' then
      r.state = 'active'
      r.token = job_token(K, now)
      job_put(K, r)
      redis.call('ZADD', K.active, lease_until, r.id)
      out[#out + 1] = { r.id, r.type, r.group, r.payload, r.attempts, r.token, lease_until }
      if #out >= max then break end
    end
  end
  return out
end

-- Acknowledges a run that succeeded; keeps the record `keep` ms, then trims it. has_result is '1' when
-- result (JSON text) is given. Returns 1 completed, 0 stale (unknown, not active, or another claim's token).
local function job_complete(K, now, id, token, has_result, result, keep, trim_page)
  local r = job_get(K, id)
  if not r or r.state ~= 'active' or r.token ~= token then return 0 end
  redis.call('ZREM', K.active, r.id)
  job_backlog_done(K, r.group)
  if keep <= 0 then
    job_forget(K, r)
  else
    r.state = 'completed'; r.token = nil; r.finishedAt = now; r.error = nil
    if has_result == '1' then r.result = result end
    job_put(K, r)
    redis.call('ZADD', K.completed, now + keep, r.id)
  end
  job_trim_completed(K, now, trim_page)
  return 1
end
