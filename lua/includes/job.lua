-- job.lua: the job record codec and the steps every queue script shares (included, never run alone).
--
-- The queue key block: every queue script receives the same KEYS, in this order (`-- @keys queue` in a script's
-- header; the names are LimiterKeys' in src/redis/keys.ts, gsince is groupSince there):
-- @keyblock queue counters groups seen delayed pending ready jobs active dead completed idempotency backlog wake
-- @keyblock queue inflight held since groupSince reservations reservationsDue
--
-- Record: jobs HASH field <id> = cjson {id, type, group, weight, cost, payload (JSON text), state, attempts,
--   stalls, snoozes, createdAt, runAt, result (JSON text), error, finishedAt, idem, gc}.
--   gc: the job's group concurrency cap (absent = none); ma: its own maxAttempts (absent = the worker's);
--   pl: its plan (absent = none: the limiter's rules), a claim decides it under that plan's rules.
--   cl: its priority class (absent = 'default'): a claim decides it in that class (includes/claim.lua).
--   st: 1 = its cost is an estimate: the claim that starts it records a reservation (includes/settle.lua) that
--   the handler settles with the actual cost.
--   state is 'waiting' while the job sits in delayed, pending or ready (getJob tells which from the sets)
--   AND while it is leased: a claim does not rewrite the record, the lease lives in the active ZSET member
--   "<id> <token>" (getJob says 'active' for a waiting record found in none of the waiting sets). Then
--   'completed' or 'dead'. ('active' with a token field: records written before this layout.)
--   Waiting states are not written per move, so the dispatcher moves members without touching records.
-- Token (fencing): "<seq>:<claim ms> <group>", fresh per claim; the group rides along so an ack needs no
--   record decode for the backlog counter. Job ids never hold a space, so "<id> <token>" splits one way.
-- Member (delayed, pending, ready): "<id> <cost> <weight> <cap> <group>": the group last, it may hold any bytes;
--   cap is the job's group concurrency (0 = none). A job of a plan: "<cap>,<#plan>:<plan>" in cap's place (a
--   plan name may hold spaces, so its length leads), so a claim knows the plan without decoding the record.
-- Group concurrency: inflight HASH group -> its capped jobs in ready or active. The dispatcher moves a capped job
--   to ready only while that count is below the job's cap, so a capped group never fills ready nor holds
--   workers; the ones it skips wait in held (ZSET, score 0, member "<#group>:<group> <member>", so one group's
--   jobs are one lex range, oldest id first) and the next one goes to ready when a job of the group leaves
--   flight (completed, failed, dead, reclaimed). Uncapped jobs are not counted.
-- Job ids: "<created ms>-<seq>", so members tie-break in creation order; unique even if the counters are lost.
-- Backlog HASH: group -> jobs waiting or leased, plus a pad field '' (no group is empty) whose long value
--   keeps the hash a hashtable: a listpack of many groups is scanned on every count update.
-- Oldest waiting (counts.lua, group-counts.lua): every job not started (delayed, pending, held or ready) is in
--   since (ZSET id -> the ms it is waiting to start from: its due time, never before it was written) and in
--   gsince (ZSET score 0, member "<#group>:<group> <since, 15 digits> <id>": one lex range per group, oldest
--   first). Added where a job enters the waiting sets, removed where it leaves them (a claim, cancel), so the
--   oldest due job is the first of either set: O(log n), and a job not yet due is never counted as waiting.
--!include includes/status.lua

local function job_keys()
  return {
    counters = KEYS[1], groups = KEYS[2], seen = KEYS[3], delayed = KEYS[4], pending = KEYS[5],
    ready = KEYS[6], jobs = KEYS[7], active = KEYS[8], dead = KEYS[9], completed = KEYS[10],
    idempotency = KEYS[11], backlog = KEYS[12], wake = KEYS[13], inflight = KEYS[14], held = KEYS[15],
    since = KEYS[16], gsince = KEYS[17], reservations = KEYS[18], reservationsDue = KEYS[19],
  }
end

-- Store time in whole ms: the ARGV override (tests) when > 0, else Redis TIME.
local function job_now_ms(override)
  local o = tonumber(override)
  if o and o > 0 then return math.floor(o) end
  -- Writing after TIME needs effects replication, the default since Redis 5 (the README states the minimum
  -- version, above that): this call is a no-op there, left over from older servers.
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function job_member(r)
  local cap = string.format('%d', r.gc or 0)
  if r.pl then cap = cap .. ',' .. string.format('%d', #r.pl) .. ':' .. r.pl end
  return r.id .. ' ' .. string.format('%d', r.cost) .. ' ' .. string.format('%d', r.weight) .. ' ' .. cap .. ' '
    .. r.group
end

-- id, cost, weight, group, cap, plan (nil = none)
local function job_parse(m)
  local id, c, w, cap, g = string.match(m, '^(%S+) (%d+) (%d+) (%d+) (.*)$')
  if id then return id, tonumber(c), tonumber(w), g, tonumber(cap) end
  local n, at
  id, c, w, cap, n, at = string.match(m, '^(%S+) (%d+) (%d+) (%d+),(%d+):()')
  if not id then return nil end
  n = tonumber(n)
  return id, tonumber(c), tonumber(w), string.sub(m, at + n + 1), tonumber(cap), string.sub(m, at, at + n - 1)
end

-- The lex prefix of one group's members in held: its byte length first, so no group's prefix starts another's.
local function job_held_prefix(group)
  return string.format('%d:', #group) .. group .. ' '
end

-- A job's gsince member (see the header): its group's lex prefix, then its since time, fixed width.
local function job_since_member(group, since, id)
  return job_held_prefix(group) .. string.format('%015d', since) .. ' ' .. id
end

-- The job waits to start from `since` on (its due time; the caller never passes one before now at writing).
local function job_since_add(K, id, group, since)
  redis.call('ZADD', K.since, since, id)
  redis.call('ZADD', K.gsince, 0, job_since_member(group, since, id))
end

-- The job left the waiting sets (started, dropped or cancelled).
local function job_since_done(K, id, group)
  local since = redis.call('ZSCORE', K.since, id)
  if not since then return end
  redis.call('ZREM', K.since, id)
  redis.call('ZREM', K.gsince, job_since_member(group, tonumber(since), id))
end

-- redis.call(cmd, key, ...list) in slices: unpack has a small stack limit (a few thousand values).
local function job_call_chunked(cmd, key, list)
  for i = 1, #list, 1000 do
    redis.call(cmd, key, unpack(list, i, math.min(i + 999, #list)))
  end
end

local function job_get(K, id)
  local raw = redis.call('HGET', K.jobs, id)
  if not raw then return nil end
  return cjson.decode(raw)
end

local function job_put(K, r)
  redis.call('HSET', K.jobs, r.id, cjson.encode(r))
end

-- The active ZSET member of a lease; nil when id could not be a job id (a space would make it ambiguous).
local function job_lease_member(id, token)
  if string.find(id, ' ', 1, true) then return nil end
  return id .. ' ' .. token
end

local function job_new_id(K, now)
  for _ = 1, 100 do
    local seq = redis.call('HINCRBY', K.counters, 'jseq', 1) % 1000000
    local id = string.format('%d-%06d', now, seq)
    if redis.call('HEXISTS', K.jobs, id) == 0 then return id end
  end
  error('bulk-limiter: could not find a free job id')
end

-- Deletes a record and the idempotency key that still points at it.
local function job_forget(K, r)
  redis.call('HDEL', K.jobs, r.id)
  if r.idem and redis.call('HGET', K.idempotency, r.idem) == r.id then
    redis.call('HDEL', K.idempotency, r.idem)
  end
end

-- A literal (a compiled constant): string.rep here would run on every script call.
local JOB_BACKLOG_PAD = '----------------------------------------------------------------------------------------------------'

-- The group has one job more waiting. A group new to the backlog (re)adds the pad (a no-op once there).
local function job_backlog_add(K, group)
  if redis.call('HINCRBY', K.backlog, group, 1) == 1 then redis.call('HSETNX', K.backlog, '', JOB_BACKLOG_PAD) end
end

-- The group has one job less waiting (completed or dead); the field goes at 0, the key with the last group.
local function job_backlog_done(K, group)
  if redis.call('HINCRBY', K.backlog, group, -1) <= 0 then
    redis.call('HDEL', K.backlog, group)
    if redis.call('HLEN', K.backlog) == 1 and redis.call('HEXISTS', K.backlog, '') == 1 then
      redis.call('DEL', K.backlog)
    end
  end
end

-- Wakes up to n blocked workers; the list stays bounded when nobody listens.
local function job_wake(K, n)
  if n <= 0 then return end
  if n > 100 then n = 100 end
  local tokens = {}
  for i = 1, n do tokens[i] = '1' end
  redis.call('LPUSH', K.wake, unpack(tokens))
  redis.call('LTRIM', K.wake, 0, 99)
end

-- Forgets the records of `ids` and removes them from the set `zset` (completed or dead).
local function job_forget_ids(K, zset, ids)
  for _, id in ipairs(ids) do
    local r = job_get(K, id)
    if r then job_forget(K, r) end
    redis.call('ZREM', zset, id)
  end
end

-- A capped job of `group` left flight (ready or active): count it out, and send the group's oldest held job
-- to ready in its place (to the head of pending when ready is at the dispatcher's last readyMax).
local function job_flight_done(K, group, cap)
  if not cap or cap <= 0 then return end
  if redis.call('HINCRBY', K.inflight, group, -1) <= 0 then redis.call('HDEL', K.inflight, group) end
  if redis.call('ZCARD', K.held) == 0 then return end
  local prefix = job_held_prefix(group)
  local first = redis.call('ZRANGEBYLEX', K.held, '[' .. prefix, '(' .. prefix .. '\255', 'LIMIT', 0, 1)[1]
  if not first then return end
  redis.call('ZREM', K.held, first)
  local m = string.sub(first, #prefix + 1)
  local ready_max = tonumber(redis.call('HGET', K.counters, 'rmax') or '1000')
  if redis.call('LLEN', K.ready) < ready_max then
    redis.call('RPUSH', K.ready, m)
    redis.call('HINCRBY', K.inflight, group, 1)
    job_wake(K, 1)
  else
    local head = redis.call('ZRANGE', K.pending, 0, 0, 'WITHSCORES')
    redis.call('ZADD', K.pending, tonumber(head[2] or '0'), m)
  end
end

-- A record's group concurrency cap from its text (cjson escapes every '"' inside strings: only the key matches).
local function job_cap_of(raw)
  if not string.find(raw, '"gc":', 1, true) then return 0 end
  return tonumber(string.match(raw, '"gc":(%d+)') or '0')
end

-- Keys a queue script keeps alive (groups and seen belong to the admission core, which expires them itself).
local function job_kept_keys(K)
  return { K.counters, K.delayed, K.pending, K.ready, K.jobs, K.active, K.dead, K.completed, K.idempotency,
           K.backlog, K.wake, K.inflight, K.held, K.since, K.gsince }
end

-- How long the queue's keys outlive the last thing anything in them is needed for.
local JOB_KEEP_GRACE_MS = 3600000

-- Every queue key expires once the limiter is abandoned: JOB_KEEP_GRACE_MS after the latest time anything in
-- them is needed (`needed_until`: a job's due time, a completed record's keep time, now plus the admission idle
-- time), kept in the counters field 'ku' (it only moves forward). Called once at the end of every script that
-- writes. When ku moves (at most every quarter grace while busy) every key is re-expired, so keys left
-- unwritten for long (dead, idempotency) never expire while the limiter is in use; otherwise only the keys this
-- script may have created (`written`): a key emptied and created again (ready, wake, active…) has no TTL until
-- then. The expiry is relative to the script's clock (a test clock may stand anywhere), not Redis time.
local function job_keep(K, now, needed_until, written)
  local ku = tonumber(redis.call('HGET', K.counters, 'ku') or '0')
  local keys = written
  if needed_until > ku then
    ku = needed_until + JOB_KEEP_GRACE_MS / 4
    redis.call('HSET', K.counters, 'ku', string.format('%d', ku))
    keys = job_kept_keys(K)
  end
  local ttl = ku + JOB_KEEP_GRACE_MS - now
  for _, key in ipairs(keys) do redis.call('PEXPIRE', key, ttl) end
end

-- The keys job_defer may create, and those job_flight_done may create (for `written` above).
local function job_written_by_defer(K)
  return { K.jobs, K.delayed, K.backlog, K.idempotency, K.counters, K.since, K.gsince }
end

local function job_written_by_flight(K, ...)
  return { K.ready, K.pending, K.inflight, K.wake, ... }
end

-- Drops up to `page` completed records whose keep time is over.
local function job_trim_completed(K, now, page)
  job_forget_ids(K, K.completed, redis.call('ZRANGEBYSCORE', K.completed, '-inf', now, 'LIMIT', 0, page))
end

-- Moves a job (already out of active and the waiting sets) to dead; keeps at most max_dead dead records.
local function job_kill(K, r, now, reason, max_dead)
  r.state = 'dead'; r.error = reason; r.finishedAt = now; r.token = nil
  job_put(K, r)
  redis.call('ZADD', K.dead, now, r.id)
  job_backlog_done(K, r.group)
  local over = redis.call('ZCARD', K.dead) - max_dead
  if over > 0 then
    if over > 100 then over = 100 end
    job_forget_ids(K, K.dead, redis.call('ZRANGE', K.dead, 0, over - 1))
  end
end

-- Writes a new waiting job, or finds the one its idempotency key names. run_at is the time the job is
-- promised by (recorded and checked against the horizon); due_at (default run_at) is when the dispatcher
-- may first move it: a denied request's job is due at once and runs as soon as the budget allows.
-- waiting: the group's backlog count when the caller has just read it (else read here).
-- cap, max_attempts: the job's group concurrency and its own maxAttempts (nil or 0 = none); plan: its plan
-- (nil or '' = none); settle: its cost is an estimate, settled by its handler (a reservation at its claim);
-- class: its priority class (nil, '' or 'default' = 'default').
-- Returns status, id, runAt: ST.WRITTEN, ST.DUPLICATE, ST.BACKLOG_FULL, ST.DEFER_HORIZON (beyond maxDeferMs).
local function job_defer(K, now, group, weight, cost, jtype, payload, idem, max_backlog, run_at, max_defer_ms, due_at,
                         waiting, cap, max_attempts, plan, settle, class)
  if idem ~= '' then
    local existing = redis.call('HGET', K.idempotency, idem)
    if existing then
      local r = job_get(K, existing)
      if r then return ST.DUPLICATE, r.id, r.runAt end
      redis.call('HDEL', K.idempotency, idem)
    end
  end
  if run_at - now > max_defer_ms then return ST.DEFER_HORIZON, '', run_at end
  waiting = waiting or tonumber(redis.call('HGET', K.backlog, group) or '0')
  if waiting >= max_backlog then return ST.BACKLOG_FULL, '', run_at end
  local r = {
    id = job_new_id(K, now), type = jtype, group = group, weight = weight, cost = cost, payload = payload,
    state = 'waiting', attempts = 0, stalls = 0, snoozes = 0, createdAt = now, runAt = run_at,
  }
  if cap and cap > 0 then r.gc = cap end
  if max_attempts and max_attempts > 0 then r.ma = max_attempts end
  if plan and plan ~= '' then r.pl = plan end
  if settle then r.st = 1 end
  if class and class ~= '' and class ~= 'default' then r.cl = class end
  if idem ~= '' then
    r.idem = idem
    redis.call('HSET', K.idempotency, idem, r.id)
  end
  job_put(K, r)
  redis.call('ZADD', K.delayed, due_at or run_at, job_member(r))
  job_since_add(K, r.id, group, math.max(now, due_at or run_at))
  job_backlog_add(K, group)
  return ST.WRITTEN, r.id, run_at
end
