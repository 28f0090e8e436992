-- override-list.lua: one page of the overrides in force, in the byte order of their groups, after `cursor` (the
-- last group of the previous page; '' = from the first). Expired overrides are forgotten first.
-- @key overrides HASH group -> '<expiresMs>|<setMs>|<settings JSON>'
-- @key overridesDue ZSET group -> ms its override expires
-- @key overridesIndex ZSET score 0, group
-- @arg nowMs number store time in ms, a fraction for µs (tests); 0 = redis TIME
-- @arg cursor string '' = the first page
-- @arg count int at most this many
-- @reply string[] group, stored value, group, stored value, …
--!include includes/override-store.lua

local keys = { KEYS[1], KEYS[2], KEYS[3] }
ov_prune(keys, ov_now_ms(ARGV[1]))
local from = '-'
if ARGV[2] ~= '' then from = '(' .. ARGV[2] end
local groups = redis.call('ZRANGEBYLEX', keys[3], from, '+', 'LIMIT', 0, tonumber(ARGV[3]))
if #groups == 0 then return {} end
local values = redis.call('HMGET', keys[1], unpack(groups))
local out = {}
for i = 1, #groups do
  out[#out + 1] = groups[i]
  out[#out + 1] = values[i] or ''
end
return out
