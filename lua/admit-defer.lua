-- admit-defer.lua: admit.lua plus deferral, in the same atomic call: a denied request's work is written as a
-- job (includes/admit-defer.lua has the rules: runAt, maxBacklog, maxDeferMs, idempotency).
-- @keys queue
-- @key leases ZSET request concurrency (includes/concurrency.lua; untouched without a cap)
-- @key slots HASH
-- @key overrides HASH group -> its override (includes/overrides.lua)
-- @key overridesDue ZSET (renewed with the limiter's keys: includes/overrides.lua ov_keep)
-- @key overridesIndex ZSET (renewed likewise)
-- @arg nowMs number store time in ms, a fraction for µs (tests); 0 = redis TIME
-- @arg config string the fair-share config block (fs_config)
-- @arg group string
-- @arg weight int
-- @arg cost int
-- @arg type string the job's type
-- @arg payload string JSON text
-- @arg idempotencyKey string '' = none
-- @arg maxBacklog int
-- @arg maxDeferMs int
-- @arg groupConcurrency int 0 = none
-- @arg plan string the check's plan ('' = none): the job's, a claim decides it under that plan's rules
-- @arg cap? int the concurrency cap (absent = none)
-- @arg leaseMs? int with cap
-- @param rules int how many rules the config block has
-- @param capped bool the call passed a cap
-- @reply Deferral (includes/admission.lua)
--!include includes/fair-share.lua
--!include includes/job.lua
--!include includes/concurrency.lua
--!include includes/overrides.lua
--!include includes/admit-defer.lua

local K = job_keys()
local fs = fs_open(K.groups, K.seen, fs_config(ARGV[2]), fs_arg_us(ARGV[1]), ARGV[3])
ov_span(fs, KEYS[22])
local CC = ARGV[13] ~= nil and cc_library(fs_decide)
local cc = CC and CC.open(KEYS[20], KEYS[21])
local reply = ad_admit(fs, K, KEYS[22], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], ARGV[7], ARGV[8],
  tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]), CC, cc, tonumber(ARGV[13]), tonumber(ARGV[14]), ARGV[12])
fs_close(fs)
ov_keep(fs, KEYS[22], KEYS[23], KEYS[24])
if cc then CC.close(cc) end
if reply[12] == 1 then job_keep(K, fs.now_ms, fs.now_ms + fs.cfg.ttl_ms, job_written_by_defer(K)) end
return reply
