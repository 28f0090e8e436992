--[[
  concurrency.lua (include) — request concurrency: at most `cap` requests of a group in flight. A slot is a
  lease taken in the same call as the rate decision, all-or-nothing (fs_decide's `busy`: a request over the
  cap spends nothing; a request the rate denies takes no slot), and it expires, so a crashed process leaks
  nothing. Needs includes/fair-share.lua first. src/core/concurrency.ts is the same code in TypeScript: keep
  the two in step, name for name.

  Keys (the limiter's hash tag; group ids only as members and fields):
    leases ZSET  '<ms>-<seq>:<group>' -> expiry ms (ms: the taking call's time, so a member is never reused)
    slots  HASH  group -> leases held, '' -> the lease sequence (group ids are never empty)
  A check without a cap touches neither key. Each check with one first sweeps at most CC_SWEEP expired leases
  (oldest first), so the cost stays flat in the number of groups and leases.

  Functions:
    cc_open(leases_key, slots_key) -> cc
    cc_decide(fs, cc, group, weight, cost, cap, lease_ms) -> r   fs_decide's r, plus lease ('' = no slot)
                                                              and held (the group's leases after the decision)
    cc_reply(out, r)                                          appends lease, held to a reply
    cc_release(cc, member) -> 1 released, 0 not held (released before, or expired and swept)
]]

local CC_SWEEP = 10

-- One lease of `member` ends: its group's count goes down (the field goes at 0).
local function cc_drop(cc, member)
  local group = string.sub(member, string.find(member, ':', 1, true) + 1)
  if redis.call('HINCRBY', cc.slots, group, -1) <= 0 then redis.call('HDEL', cc.slots, group) end
end

local function cc_open(leases_key, slots_key)
  return { leases = leases_key, slots = slots_key }
end

local function cc_sweep(cc, now_ms)
  local old = redis.call('ZRANGEBYSCORE', cc.leases, '-inf', now_ms, 'LIMIT', 0, CC_SWEEP)
  for i = 1, #old do
    redis.call('ZREM', cc.leases, old[i])
    cc_drop(cc, old[i])
  end
end

local function cc_take(cc, group, now_ms, lease_ms)
  local seq = redis.call('HINCRBY', cc.slots, '', 1)
  local member = string.format('%d-%d:', now_ms, seq) .. group
  redis.call('ZADD', cc.leases, now_ms + lease_ms, member)
  redis.call('HINCRBY', cc.slots, group, 1)
  -- every lease ends by now + lease_ms: the keys need not outlive the latest one (by a second, for clock slack)
  redis.call('PEXPIRE', cc.leases, lease_ms + 1000)
  redis.call('PEXPIRE', cc.slots, lease_ms + 1000)
  return member
end

local function cc_decide(fs, cc, group, weight, cost, cap, lease_ms)
  if cap <= 0 then
    local r = fs_decide(fs, group, weight, cost, true)
    r.lease, r.held = '', 0
    return r
  end
  cc_sweep(cc, fs.now_ms)
  local held = tonumber(redis.call('HGET', cc.slots, group) or '0')
  local r = fs_decide(fs, group, weight, cost, true, nil, held >= cap)
  r.lease, r.held = '', held
  if r.allowed == 1 then
    r.lease = cc_take(cc, group, fs.now_ms, lease_ms)
    r.held = held + 1
  end
  return r
end

local function cc_reply(out, r)
  local n = #out
  out[n + 1], out[n + 2] = r.lease, r.held
end

local function cc_release(cc, member)
  if redis.call('ZREM', cc.leases, member) == 0 then return 0 end
  cc_drop(cc, member)
  return 1
end
