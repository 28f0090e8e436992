--[[
  admit-many.lua — admit.lua for several requests of one limiter in one call: the RedisStore sends the checks
  made in one event-loop turn together. They are decided one after the other at the same `now`, exactly as
  that many admit.lua calls at that instant would be; the limiter state is read and written once, so each
  check costs a fraction of a call of its own.

  KEYS[1] groups   HASH  '' -> packed meta, group -> packed per-group state (see admit.lua)
  KEYS[2] seen     ZSET  group -> last-seen ms
  KEYS[3] leases   ZSET  request concurrency (includes/concurrency.lua; neither key is touched without a cap):
                         lease '<ms>-<seq>:<group>' -> expiry ms
  KEYS[4] slots    HASH  group -> leases held, '' -> the lease sequence
  ARGV[1]          config block (fs_config)
  ARGV[2]          now override in µs (tests); 0 = redis TIME
  ARGV[3]          lease ms: 0 = no request of this call has a concurrency cap
  ARGV[4 ..]       per request, in arrival order: group, weight, cost, and when ARGV[3] > 0 its cap (0 = none)

  Reply: admit.lua's fields (12, and 1 + 2 per rule with rules, and 2 more when ARGV[3] > 0) for each request,
  one after the other in one flat array.
]]
--!include includes/fair-share.lua
--!include includes/concurrency.lua

local cfg = fs_config(ARGV[1])
local fs = fs_open(KEYS[1], KEYS[2], cfg, tonumber(ARGV[2]), ARGV[4])
local lease_ms = tonumber(ARGV[3])
local CC, cc, step = false, false, 3
if lease_ms > 0 then
  CC = cc_library()
  cc, step = CC.open(KEYS[3], KEYS[4]), 4
end
local out = {}
local n = 0
for i = 4, #ARGV - step + 1, step do
  -- as a call of its own would: a full trim page leaves more idle groups for the next check to trim
  if i > 4 then fs_trim(fs) end
  local r
  if cc then
    r = CC.decide(fs, cc, ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), lease_ms)
  else
    r = fs_decide(fs, ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), true)
  end
  out[n + 1], out[n + 2], out[n + 3], out[n + 4] = r.allowed, r.colour, r.remaining, r.limit
  out[n + 5], out[n + 6], out[n + 7] = r.guaranteed, math.ceil(r.retry_us / 1000), math.ceil(r.hint_us / 1000)
  out[n + 8], out[n + 9], out[n + 10] = math.ceil(r.reset_us / 1000), r.active, fs.now_ms
  out[n + 11], out[n + 12] = r.group, math.floor(r.empty_us / 1000)
  n = n + 12
  if r.rules then n = RL.reply(out, n, r, fs.now_us) end
  if cc then
    out[n + 1], out[n + 2] = r.lease, r.held
    n = n + 2
  end
end
fs_close(fs)
if cc then CC.close(cc) end
return out
