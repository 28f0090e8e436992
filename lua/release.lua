-- release.lua: ends request-concurrency leases (includes/concurrency.lua): their slots free at once. The
-- RedisStore sends the releases made in one event-loop turn together. Idempotent: a lease released before, or
-- expired and swept, changes nothing.
-- @key leases ZSET lease member -> expiry ms
-- @key slots HASH group -> leases held
-- @each leases string the leases (members admit.lua replied)
-- @param count int how many leases the call sent
-- @reply bool*count per lease: released; false when not held
--!include includes/concurrency.lua

local CC = cc_library()
local cc = CC.open(KEYS[1], KEYS[2])
local out = {}
for i = 1, #ARGV do out[i] = CC.release(cc, ARGV[i]) end
CC.close(cc)
return out
