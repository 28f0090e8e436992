-- get-job.lua: one job's record and where it is now.
-- A waiting record in none of delayed, pending and ready is leased (active): a claim does not rewrite the record.
-- @keys queue
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg id string
-- @reply nil | [record: string, state: 'delayed' | 'pending' | 'ready' | 'active' | 'completed' | 'dead', runAt: int]
--   nil when unknown (or a completed record past its keep time); record: the JSON text
--!include includes/job.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local raw = redis.call('HGET', K.jobs, ARGV[2])
if not raw then return nil end
local r = cjson.decode(raw)
local state, run_at = r.state, r.runAt
if state == 'waiting' then
  local m = job_member(r)
  -- The delayed score is when the job becomes due; runAt stays the estimated start the caller was given.
  if redis.call('ZSCORE', K.delayed, m) then
    state = 'delayed'
  elseif redis.call('ZSCORE', K.pending, m) or redis.call('ZSCORE', K.held, job_held_prefix(r.group) .. m) then
    -- held: waiting for a slot of its group (group concurrency); to the caller it is pending
    state = 'pending'
  else
    -- ready is bounded (readyMax); LPOS arrived in Redis 6.0.6, so earlier 6.0 releases scan the list.
    local pos = redis.pcall('LPOS', K.ready, m)
    if type(pos) == 'table' then
      pos = false
      for _, x in ipairs(redis.call('LRANGE', K.ready, 0, -1)) do
        if x == m then pos = true; break end
      end
    end
    if pos then state = 'ready' else state = 'active' end
  end
elseif state == 'completed' then
  local expires = tonumber(redis.call('ZSCORE', K.completed, r.id) or '0')
  if expires <= now then return nil end
end
return { raw, state, run_at }
