-- reclaim.lua: jobs whose lease expired (a worker crashed or hung) go back to pending at the head of the
-- fair order, counted as a stall; after maxStalls stalls they go to dead. Also trims expired completed records.
-- @keys queue
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg maxStalls int
-- @arg max int most leases looked at
-- @arg maxDead int
-- @arg trimPage int
-- @reply [requeued: int, dead: int]
--!include includes/job.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local max_stalls, max_dead = tonumber(ARGV[2]), tonumber(ARGV[4])
local requeued, dead = 0, 0
local ids = redis.call('ZRANGEBYSCORE', K.active, '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
for _, m in ipairs(ids) do
  redis.call('ZREM', K.active, m)
  -- The member is "<id> <token>" (a bare id from before that layout, whose record says 'active').
  local r = job_get(K, string.match(m, '^%S+'))
  if r and (r.state == 'waiting' or r.state == 'active') then
    job_flight_done(K, r.group, r.gc)
    r.stalls = r.stalls + 1
    if r.stalls > max_stalls then
      job_kill(K, r, now, 'stalled ' .. string.format('%d', r.stalls) .. ' times (lease expired)', max_dead)
      dead = dead + 1
    else
      -- It was admitted once already: it goes first again (the head tag), before newer work.
      local head = redis.call('ZRANGE', K.pending, 0, 0, 'WITHSCORES')
      local tag = tonumber(head[2] or '0')
      r.state = 'waiting'; r.token = nil
      job_put(K, r)
      redis.call('ZADD', K.pending, tag, job_member(r))
      job_since_add(K, r.id, r.group, now)
      requeued = requeued + 1
    end
  end
end
job_trim_completed(K, now, tonumber(ARGV[5]))
if requeued + dead > 0 then job_keep(K, now, now, job_written_by_flight(K, K.dead, K.jobs, K.since, K.gsince)) end
return { requeued, dead }
