-- lease.lua: the complete step (included by complete.lua and the complete-claim scripts after includes/job.lua,
-- never run alone). It does not decode or re-encode a record on its usual path: a completion edits the
-- record's text in place (a claim leaves the record as it is: the lease is the active member "<id> <token>").
-- An acknowledgement and the claim after it (complete-claim.lua, complete-claim-many.lua): result is JSON text
-- (when hasResult), the record kept keepMs, trimPage expired records dropped at most, up to max (1..1000) claimed.
-- @struct Ack [id: string, token: string, hasResult: bool, result: string, keepMs: int, trimPage: int,
--   leaseMs: int, max: int]

-- A leased (waiting) record's text, completed: state, finishedAt and result set, error dropped.
local function job_completed_text(raw, now, has_result, result)
  local s, e = string.find(raw, '"state":"waiting"', 1, true)
  if s and not string.find(raw, '"error":', 1, true) and not string.find(raw, '"finishedAt":', 1, true)
      and not string.find(raw, '"result":', 1, true) and string.sub(raw, -1) == '}' then
    local tail = ',"finishedAt":' .. string.format('%d', now)
    if has_result == '1' then tail = tail .. ',"result":' .. cjson.encode(result) end
    return string.sub(raw, 1, s - 1) .. '"state":"completed"' .. string.sub(raw, e + 1, -2) .. tail .. '}'
  end
  local r = cjson.decode(raw)
  r.state = 'completed'; r.token = nil; r.finishedAt = now; r.error = nil
  if has_result == '1' then r.result = result end
  return cjson.encode(r)
end

-- Acknowledges a run that succeeded; keeps the record `keep` ms, then trims it. has_result is '1' when
-- result (JSON text) is given. Returns 1 completed, 0 stale (unknown, not active, or another claim's token).
-- `done` (optional, a list): the completed ZSET's entries (score, id) go there for the caller's one ZADD (a
-- batch's trims never reach them: their keep time is after now).
-- Expired completed records are trimmed on every 8th claim's completion (and by reclaim and counts).
local function job_complete(K, now, id, token, has_result, result, keep, trim_page, done)
  local member = job_lease_member(id, token)
  if not member then return 0 end
  local raw = redis.call('HGET', K.jobs, id)
  if not raw or redis.call('ZREM', K.active, member) == 0 then return 0 end
  local seq, group = string.match(token, '^(%d+):%d+ (.*)$')
  job_backlog_done(K, group)
  job_flight_done(K, group, job_cap_of(raw))
  if keep <= 0 then
    if string.find(raw, '"idem":', 1, true) then job_forget(K, cjson.decode(raw)) else redis.call('HDEL', K.jobs, id) end
  else
    redis.call('HSET', K.jobs, id, job_completed_text(raw, now, has_result, result))
    if done then
      done[#done + 1] = now + keep
      done[#done + 1] = id
    else
      redis.call('ZADD', K.completed, now + keep, id)
    end
  end
  if tonumber(seq) % 8 == 0 then job_trim_completed(K, now, trim_page) end
  return 1
end
