-- override-set.lua: sets one group's override (includes/override-store.lua), replacing the one it had; the
-- admission scripts apply it from their next call. Expired overrides are forgotten first; a new group's override
-- beyond maxOverrides is refused and nothing is written.
-- @key overrides HASH group -> '<expiresMs>|<setMs>|<settings JSON>'
-- @key overridesDue ZSET group -> ms its override expires (overrides with a ttl only)
-- @key overridesIndex ZSET score 0, group: every group with an override, in lex order
-- @arg nowMs number store time in ms, a fraction for µs (tests); 0 = redis TIME
-- @arg group string any bytes; only ever a hash field / zset member
-- @arg settings string the override's JSON (includes/overrides.lua)
-- @arg ttlMs int 0 = no expiry (at most OV_KEEP_MS)
-- @arg maxOverrides int most overrides the limiter holds
-- @arg spanMs int the longest span of the override's rules (0 = none): the field '' keeps the longest ever set
-- @reply [written: bool, expiresMs: int, setMs: int, held: int] held: the overrides held after the call
--!include includes/override-store.lua

local keys = { KEYS[1], KEYS[2], KEYS[3] }
local now = ov_now_ms(ARGV[1])
local group, ttl = ARGV[2], tonumber(ARGV[4])
ov_prune(keys, now)
local held = redis.call('HLEN', keys[1]) - redis.call('HEXISTS', keys[1], '')
if redis.call('HEXISTS', keys[1], group) == 0 then
  if held >= tonumber(ARGV[5]) then return { 0, 0, now, held } end
  held = held + 1
end
local expires = 0
if ttl > 0 then
  expires = now + ttl
  redis.call('ZADD', keys[2], expires, group)
else
  redis.call('ZREM', keys[2], group)
end
redis.call('HSET', keys[1], group, expires .. '|' .. now .. '|' .. ARGV[3])
redis.call('ZADD', keys[3], 0, group)
local span = tonumber(ARGV[6])
if span > tonumber(redis.call('HGET', keys[1], '') or '0') then redis.call('HSET', keys[1], '', span) end
ov_touch(keys)
return { 1, expires, now, held }
