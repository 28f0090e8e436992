-- report.lua: one outcome the upstream gave (ok or throttled, with its Retry-After) moves the adaptive limit in
-- force (ad_report in includes/adaptive.lua; docs/adaptive.md). Paced by time inside the script, so every
-- process's reports meet one state: N reports in one interval make at most one change.
-- @key groups HASH '' -> packed meta, '\254' -> the adaptive state (see includes/adaptive.lua)
-- @arg nowMs number store time in ms, a fraction for µs (tests); 0 = redis TIME
-- @arg config string the fair-share config block (fs_config), with the adaptive numbers
-- @arg outcome 0 | 1 | 2 0 ok (the upstream served), 1 throttled (it refused: 429/503), 2 a reading (nothing changes)
-- @arg retryAfterMs int the upstream's Retry-After in ms (0 = none)
-- @reply [limit: int, change: -1 | 0 | 1] the limit in force after the report, and how it moved
--!include includes/fair-share.lua

local cfg = fs_config(ARGV[2])
if not cfg.ad then error('ERR_BL_STORE_CONFIG: report.lua needs an adaptive config block') end
local now = fs_now_us(fs_arg_us(ARGV[1]))
local st = ad_load(redis.call('HGET', KEYS[1], AD_FIELD), cfg.ad, now)
local change, write = 0, false
if ARGV[3] ~= '2' then change, write = ad_report(cfg.ad, st, now, ARGV[3] == '1', tonumber(ARGV[4]) * 1000) end
if write then
  redis.call('HSET', KEYS[1], AD_FIELD, ad_pack(st))
  -- a hash this report made gets the limiter's TTL; an existing one keeps its own (admissions renew it, with `seen`'s)
  if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], cfg.ttl_ms) end
end
return { st.l, change }
