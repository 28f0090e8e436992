--[[
  release.lua — ends request-concurrency leases (includes/concurrency.lua): their slots free at once. The
  RedisStore sends the releases made in one event-loop turn together. Idempotent: a lease released before, or
  expired and swept, changes nothing.

  KEYS[1] leases   ZSET  lease member -> expiry ms
  KEYS[2] slots    HASH  group -> leases held
  ARGV[1 ..]       the leases (members admit.lua replied)

  Reply: per lease, 1 released, 0 not held.
]]
--!include includes/concurrency.lua

local CC = cc_library()
local cc = CC.open(KEYS[1], KEYS[2])
local out = {}
for i = 1, #ARGV do out[i] = CC.release(cc, ARGV[i]) end
CC.close(cc)
return out
