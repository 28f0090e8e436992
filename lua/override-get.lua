-- override-get.lua: one group's override as stored ('' when it has none or it expired). Writes nothing.
-- @key overrides HASH group -> '<expiresMs>|<setMs>|<settings JSON>'
-- @arg nowMs number store time in ms, a fraction for µs (tests); 0 = redis TIME
-- @arg group string any bytes; only ever a hash field / zset member
-- @reply string
--!include includes/override-store.lua

local raw = redis.call('HGET', KEYS[1], ARGV[2])
if not raw then return '' end
local expires = tonumber(string.match(raw, '^(%d+)|'))
if expires > 0 and expires <= ov_now_ms(ARGV[1]) then return '' end
return raw
