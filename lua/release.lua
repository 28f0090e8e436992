--[[
  release.lua — ends one request-concurrency lease (includes/concurrency.lua): its slot frees at once.
  Idempotent: a lease released before, or expired and swept, changes nothing.

  KEYS[1] leases   ZSET  lease member -> expiry ms
  KEYS[2] slots    HASH  group -> leases held
  ARGV[1]          the lease (the member admit.lua replied)

  Reply: 1 released, 0 not held.
]]
--!include includes/concurrency.lua

return cc_release(cc_open(KEYS[1], KEYS[2]), ARGV[1])
