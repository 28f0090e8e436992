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

  The functions are made on first use (cc_library(fs_decide), called by a script only when a check has a cap):
  every script call runs the definitions of its local functions, so a check without a cap makes none of them.
  fs_decide is fair-share.lua's, passed in so that a script that only releases (release.lua) needs none of it.
  Functions (fields of the library; open, then decide or release any number of times, then close):
    open(leases_key, slots_key) -> cc
    decide(fs, cc, group, weight, cost, cap, lease_ms, rules) -> r   fs_decide's r (rules: as fs_decide's), plus
                                                              lease ('' = no slot) and held (the group's leases
                                                              after the decision)
    reply(out, r)                                             appends lease, held to a reply
    release(cc, member) -> 1 released, 0 not held (released before, or expired and swept)
    close(cc)                                                 writes the counts read and changed in this call
]]
--!include includes/constants.lua

local function cc_library(fs_decide)

  local function cc_open(leases_key, slots_key)
    -- held: group -> slots held (read once per call), dirty: groups to write back, seq: the lease sequence
    return { leases = leases_key, slots = slots_key, held = {}, dirty = {}, seq = false, swept = false }
  end

  -- The group's slots held; the first read of a call also loads the sequence (one HMGET).
  local function cc_held(cc, group)
    local n = cc.held[group]
    if n then return n end
    if cc.seq then
      n = tonumber(redis.call('HGET', cc.slots, group) or '0')
    else
      local v = redis.call('HMGET', cc.slots, group, '')
      n, cc.seq = tonumber(v[1] or '0'), tonumber(v[2] or '0')
    end
    cc.held[group] = n
    return n
  end

  -- One lease of `member` ends: its group's count goes down (written back by cc_close).
  local function cc_drop(cc, member)
    local group = string.sub(member, string.find(member, ':', 1, true) + 1)
    cc.held[group] = cc_held(cc, group) - 1
    cc.dirty[group] = true
  end

  local function cc_sweep(cc, now_ms)
    -- all checks of a call share `now`: once a sweep leaves nothing expired, the next would find nothing either
    if cc.swept then return end
    local old = redis.call('ZRANGEBYSCORE', cc.leases, '-inf', now_ms, 'LIMIT', 0, CC_SWEEP)
    for i = 1, #old do
      redis.call('ZREM', cc.leases, old[i])
      cc_drop(cc, old[i])
    end
    cc.swept = #old < CC_SWEEP
  end

  local function cc_take(cc, group, now_ms, lease_ms)
    cc_held(cc, group)
    cc.seq = cc.seq + 1
    local member = string.format('%d-%d:', now_ms, cc.seq) .. group
    redis.call('ZADD', cc.leases, now_ms + lease_ms, member)
    cc.held[group] = cc.held[group] + 1
    cc.dirty[group] = true
    cc.lease_ms = lease_ms
    return member
  end

  local function cc_decide(fs, cc, group, weight, cost, cap, lease_ms, rules)
    if cap <= 0 then
      local r = fs_decide(fs, group, weight, cost, true, rules)
      r.lease, r.held = '', 0
      return r
    end
    cc_sweep(cc, fs.now_ms)
    local held = cc_held(cc, group)
    local r = fs_decide(fs, group, weight, cost, true, rules, held >= cap)
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

  -- Writes the counts back (one HSET, one HDEL) and, after a take, the sequence and the keys' TTL.
  local function cc_close(cc)
    local set, del = {}, {}
    for group in pairs(cc.dirty) do
      local n = cc.held[group]
      if n > 0 then
        set[#set + 1], set[#set + 2] = group, n
      else
        del[#del + 1] = group
      end
    end
    if cc.lease_ms then set[#set + 1], set[#set + 2] = '', cc.seq end
    if #set > 0 then redis.call('HSET', cc.slots, unpack(set)) end
    if #del > 0 then redis.call('HDEL', cc.slots, unpack(del)) end
    if cc.lease_ms then
      -- every lease ends by now + lease_ms: the keys need not outlive the latest one (by a second, for clock slack)
      redis.call('PEXPIRE', cc.leases, cc.lease_ms + 1000)
      redis.call('PEXPIRE', cc.slots, cc.lease_ms + 1000)
    end
  end

  return { open = cc_open, decide = cc_decide, reply = cc_reply, release = cc_release, close = cc_close }
end
