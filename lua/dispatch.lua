-- dispatch.lua: the dispatcher move (docs/algorithm.md §3.3). Due jobs go delayed → pending with
-- start-time fair-queueing tags (start = max(vt, ftag_g), ftag_g = start + cost/weight); then pending →
-- ready in tag order, only while ready has room (readyMax), in bounded batches. The budget is not spent
-- here but when a worker starts the job (claim.lua, docs/algorithm.md §3.4). Nothing is re-scored; the reply says exactly
-- when to call again.
-- @keys queue
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg config string the fair-share config block (fs_config)
-- @arg readyMax int
-- @arg moveMax int
-- @arg promoteMax int
-- @arg scanMax int
-- @reply [moved: int, promoted: int, wakeMs: int, readyFull: bool] wakeMs 0 = call again now, > 0 = in that
--   many ms, -1 = nothing waits (or ready is full: readyFull, wait for workers / poll)
--!include includes/fair-share.lua
--!include includes/job.lua
local K = job_keys()
local cfg = fs_config(ARGV[2])
local fs = fs_open(K.groups, K.seen, cfg, tonumber(ARGV[1]) * 1000)
local now = fs.now_ms
local meta = fs.meta
local ready_max, move_max = tonumber(ARGV[3]), tonumber(ARGV[4])
local promote_max, scan_max = tonumber(ARGV[5]), tonumber(ARGV[6])
local PAGE = 64

-- vt never trails the oldest pending tag: after the limiter's state expired (or a group was trimmed) a new job
-- would otherwise start at 0 and overtake the whole backlog.
local head = redis.call('ZRANGE', K.pending, 0, 0, 'WITHSCORES')
if head[2] and tonumber(head[2]) > meta.vt then
  meta.vt = tonumber(head[2])
end

-- (1) due → pending with fair tags; an idle group gets no credit (start ≥ vt).
local due = redis.call('ZRANGEBYSCORE', K.delayed, '-inf', now, 'LIMIT', 0, promote_max)
local tagged = {}
for _, m in ipairs(due) do
  local _, c, w, g = job_parse(m)
  local _, st = fs_group(fs, g, w)
  local start = math.max(meta.vt, st.ftag)
  st.ftag = start + c / w
  tagged[#tagged + 1] = start
  tagged[#tagged + 1] = m
end
job_call_chunked('ZADD', K.pending, tagged)
job_call_chunked('ZREM', K.delayed, due)

-- (2) pending → ready in tag order, while ready has room. Nothing is charged here: a job spends the budget
-- when a worker starts it (claim.lua), so jobs waiting in ready while workers are away cost nothing. A capped
-- job whose group has `cap` jobs in flight goes to held instead (includes/job.lua), out of everyone's way.
redis.call('HSET', K.counters, 'rmax', ready_max)
local room = math.min(ready_max - redis.call('LLEN', K.ready), move_max)
local moving, holding = {}, {}
local flight = {}
local rank, scanned = 0, 0
local last_tag = false
while #moving < room and scanned < scan_max do
  local page = redis.call('ZRANGE', K.pending, rank, rank + PAGE - 1, 'WITHSCORES')
  if #page == 0 then break end
  rank = rank + PAGE
  for i = 1, #page, 2 do
    if #moving >= room or scanned >= scan_max then break end
    scanned = scanned + 1
    local m = page[i]
    -- The cap alone first: most jobs have none and need no full parse.
    local cap = tonumber(string.match(m, '^%S+ %d+ %d+ (%d+)[ ,]'))
    local admit = true
    if cap > 0 then
      local g = select(4, job_parse(m))
      local n = flight[g] or tonumber(redis.call('HGET', K.inflight, g) or '0')
      admit = n < cap
      if admit then flight[g] = n + 1 else flight[g] = n end
    end
    if admit then
      moving[#moving + 1] = m
      last_tag = page[i + 1]
    else
      holding[#holding + 1] = m
    end
  end
end
-- Pending is in tag order: the last job moved has the highest tag.
if last_tag and tonumber(last_tag) > meta.vt then meta.vt = tonumber(last_tag) end
local moved = #moving
job_call_chunked('RPUSH', K.ready, moving)
job_call_chunked('ZREM', K.pending, moving)
for _, m in ipairs(holding) do
  redis.call('ZADD', K.held, 0, job_held_prefix(select(4, job_parse(m))) .. m)
end
job_call_chunked('ZREM', K.pending, holding)
local counts = {}
for g, n in pairs(flight) do
  counts[#counts + 1] = g
  counts[#counts + 1] = n
end
job_call_chunked('HSET', K.inflight, counts)
fs_close(fs)
job_wake(K, moved)
job_keep(K, now, now + cfg.ttl_ms, job_written_by_flight(K, K.held, K.counters))

-- (3) when to call again: never spin, never requeue.
local ready_full = redis.call('LLEN', K.ready) >= ready_max
local wake = -1
if ready_full then
  wake = -1
elseif (room > 0 and moved >= room) or #due >= promote_max or scanned >= scan_max then
  wake = 0
end
if not ready_full then
  local next_due = redis.call('ZRANGE', K.delayed, 0, 0, 'WITHSCORES')
  if next_due[2] then
    local d = math.max(0, math.ceil(tonumber(next_due[2]) - now))
    if wake < 0 or d < wake then wake = d end
  end
end
return { moved, #due, wake, ready_full and 1 or 0 }
