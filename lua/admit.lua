--[[
  admit.lua — one admission decision: strict global limit + weighted fair share (includes/fair-share.lua).

  KEYS[1] groups   HASH  '' -> packed meta (global bucket, Σweights, water level, epoch, trim; see fair-share.lua),
                         group -> packed per-group state
  KEYS[2] seen     ZSET  group -> last-seen ms
  KEYS[3] leases   ZSET  request concurrency (includes/concurrency.lua; neither key is touched without a cap):
                         lease '<ms>-<seq>:<group>' -> expiry ms
  KEYS[4] slots    HASH  group -> leases held, '' -> the lease sequence
  ARGV[1]          config block (fs_config): 'limit,windowMs,burst,reserve,idleMs,epochMs,sustained,maxGroups'
  ARGV[2]          now override in µs (tests); 0 = redis TIME
  ARGV[3]          group id (any bytes; only ever a hash field / zset member)
  ARGV[4]          weight (integer >= 1)
  ARGV[5]          cost (integer >= 1)
  ARGV[6]          concurrency cap (optional; 0 = none)   ARGV[7] lease ms (with ARGV[6])

  Reply: { allowed (0|1), colour (0 green, 1 yellow, 2 red), remaining, limit, guaranteed, retryMs, hintMs,
           resetMs, activeGroups, atMs, group (effective: '*overflow*' when maxGroups are active), emptyMs }
  With rules in the config block, then: policy (0 the global share, i the i-th rule: the one that denied,
  waiting longest), and per rule remaining, resetMs. With ARGV[6], then: lease ('' = no slot taken), held (the
  group's leases after the decision; held >= cap on a denial: the cap said no). Every number is an integer; durations are ceil'd to whole ms.
]]
--!include includes/fair-share.lua
--!include includes/concurrency.lua

local cfg = fs_config(ARGV[1])
local fs = fs_open(KEYS[1], KEYS[2], cfg, tonumber(ARGV[2]), ARGV[3])
local r
local capped = ARGV[6] ~= nil
local CC = capped and cc_library()
if CC then
  local cc = CC.open(KEYS[3], KEYS[4])
  r = CC.decide(fs, cc, ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]))
  CC.close(cc)
else
  r = fs_decide(fs, ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), true)
end
fs_close(fs)

local out = { r.allowed, r.colour, r.remaining, r.limit, r.guaranteed, math.ceil(r.retry_us / 1000),
              math.ceil(r.hint_us / 1000), math.ceil(r.reset_us / 1000), r.active, fs.now_ms, r.group,
              math.floor(r.empty_us / 1000) }
if r.rules then RL.reply(out, #out, r, fs.now_us) end
if CC then CC.reply(out, r) end
return out
