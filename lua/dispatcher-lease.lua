-- dispatcher-lease.lua: takes the dispatcher lease for owner, or renews it when owner already holds it.
-- @key dispatcherLease STRING: the owner, expiring after ttlMs
-- @arg owner string
-- @arg ttlMs int
-- @reply bool held by owner now; false: another owner holds it
local current = redis.call('GET', KEYS[1])
if current == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
  return 1
end
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
  return 1
end
return 0
