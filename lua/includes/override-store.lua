--[[
  override-store.lua (include) — writing, listing and forgetting overrides (override-set.lua, override-get.lua,
  override-delete.lua, override-list.lua); the admission scripts read them with includes/overrides.lua.
  src/core/overrides.ts is the same code in TypeScript: keep the two in step.
  Keys: overrides HASH group -> '<expiresMs>|<setMs>|<settings JSON>'; overridesDue ZSET group -> expiresMs (only
  overrides with a ttl); overridesIndex ZSET (score 0: lex order) every group with an override, for paging. The
  three live OV_KEEP_MS past the last write, renewed by checks too (ov_keep in overrides.lua), so an override
  without a ttl lasts as long as the limiter is used.

  ov_now_ms(arg) -> ms                   the store's time (a test clock's ms, else redis TIME)
  ov_prune(keys, now)                    forgets every override past its expiry
  ov_touch(keys)                         renews the three keys' TTL
]]
--!include includes/constants.lua

local function ov_now_ms(arg)
  local n = tonumber(arg)
  if n > 0 then return math.floor(math.floor(n * 1000 + 0.5) / 1000) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function ov_prune(keys, now)
  local old = redis.call('ZRANGEBYSCORE', keys[2], '-inf', now)
  if #old == 0 then return end
  redis.call('HDEL', keys[1], unpack(old))
  redis.call('ZREM', keys[2], unpack(old))
  redis.call('ZREM', keys[3], unpack(old))
end

local function ov_touch(keys)
  for i = 1, 3 do redis.call('PEXPIRE', keys[i], OV_KEEP_MS) end
end
