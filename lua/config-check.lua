-- config-check.lua: publishes this process's description of the limiter's options under its fingerprint and
-- reads another's (includes/config-drift.lua; docs/operations.md "Config drift"). Run by a process when its
-- checks saw another fingerprint, once per fingerprint (again every few seconds while that one is not described
-- yet), never per check. The descriptions live in the groups hash (its TTL, renewed by admissions) under one field, a JSON
-- object fingerprint -> [ms, text], the CF_DESCRIBED most recently published kept. When the other config is not
-- described yet, its process has not seen this one: this fingerprint is stored in its place, so that process's
-- next check sees it and describes its own. Nothing is written to a limiter without state (no key without a TTL).
-- @key groups HASH '' -> packed meta (see admit.lua), CF_FIELD -> the stored fingerprint, CF_FIELD .. CF_FIELD ->
--   the descriptions
-- @arg nowMs number store time in ms (tests); 0 = redis TIME
-- @arg fingerprint string this process's (12 characters)
-- @arg description string this process's options (JSON text)
-- @arg other string the fingerprint to describe
-- @reply [description: string, written: bool]
--!include includes/constants.lua
--!include includes/config-drift.lua

local key = KEYS[1]
local field = CF_FIELD .. CF_FIELD
local now = tonumber(ARGV[1])
if now <= 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local stored = redis.call('HGET', key, field)
local all = {}
if stored then all = cjson.decode(stored) end
local other = ''
if all[ARGV[4]] then other = all[ARGV[4]][2] end
local written = 0
if redis.call('HEXISTS', key, '') == 1 then
  local args = {}
  if other == '' then
    local raw = redis.call('HGET', key, CF_FIELD)
    if raw and string.sub(raw, 9) == ARGV[4] then args = { CF_FIELD, struct.pack('d', now) .. ARGV[2] } end
  end
  all[ARGV[2]] = { now, ARGV[3] }
  -- keep the most recently published: a deployment's past configs do not pile up
  local order = {}
  for fp, d in pairs(all) do order[#order + 1] = { d[1], fp } end
  table.sort(order, function(a, b) return a[1] > b[1] or (a[1] == b[1] and a[2] < b[2]) end)
  for i = CF_DESCRIBED + 1, #order do all[order[i][2]] = nil end
  args[#args + 1] = field
  args[#args + 1] = cjson.encode(all)
  redis.call('HSET', key, unpack(args))
  written = 1
end
return { other, written }
