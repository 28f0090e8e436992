-- override-delete.lua: removes one group's override; its next check is decided as without one. Idempotent.
-- @key overrides HASH group -> '<expiresMs>|<setMs>|<settings JSON>'
-- @key overridesDue ZSET group -> ms its override expires
-- @key overridesIndex ZSET score 0, group
-- @arg nowMs number store time in ms, a fraction for µs (tests); 0 = redis TIME
-- @arg group string any bytes; only ever a hash field / zset member
-- @reply bool true when the group had an override in force
--!include includes/override-store.lua

local keys = { KEYS[1], KEYS[2], KEYS[3] }
local now = ov_now_ms(ARGV[1])
ov_prune(keys, now)
local had = redis.call('HDEL', keys[1], ARGV[2])
redis.call('ZREM', keys[2], ARGV[2])
redis.call('ZREM', keys[3], ARGV[2])
return had
