'use strict';
/**
 * The original design (docs/algorithm.md §1), implemented only here as the baseline:
 * fixed windows; SADD the group to a never-cleaned active set; per-group quota
 * max(1, floor(L / SCARD(active))); INCR the group's window counter, then the global one; DECR back
 * on deny. Written in its most favourable form: one Lua call, window from Redis TIME.
 * (It builds per-window key names inside the script, as the original did: fine on one node only.)
 */
const LUA = `
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local win = math.floor(nowMs / windowMs)
redis.call('SADD', KEYS[1], ARGV[3])
local per = math.max(1, math.floor(limit / redis.call('SCARD', KEYS[1])))
local gkey = KEYS[2] .. ':' .. ARGV[3] .. ':' .. win
local gkeyGlobal = KEYS[2] .. ':*global*:' .. win
local retry = (win + 1) * windowMs - nowMs
local g = redis.call('INCR', gkey)
redis.call('PEXPIRE', gkey, windowMs * 2)
if g > per then
  redis.call('DECR', gkey)
  return {0, t[1], t[2], retry}
end
local n = redis.call('INCR', gkeyGlobal)
redis.call('PEXPIRE', gkeyGlobal, windowMs * 2)
if n > limit then
  redis.call('DECR', gkeyGlobal)
  redis.call('DECR', gkey)
  return {0, t[1], t[2], retry}
end
return {1, t[1], t[2], 0}
`;

/** `{ check(group) → { allowed, at (ms, server clock), retryAfterMs } }` for one limiter name. */
function createBaseline(client, { name, limit, windowMs }) {
  if (!client.blbBaseline) client.defineCommand('blbBaseline', { numberOfKeys: 2, lua: LUA });
  const active = `base:{${name}}:active`;
  const counters = `base:{${name}}:count`;
  return {
    async check(group) {
      const [allowed, sec, usec, retry] = await client.blbBaseline(active, counters, limit, windowMs, group);
      return { allowed: allowed === 1, at: Number(sec) * 1000 + Number(usec) / 1000, retryAfterMs: Number(retry) };
    },
  };
}

module.exports = { createBaseline };
