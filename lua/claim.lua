-- claim.lua: starts up to `max` jobs from the head of ready, each charged to the limiter's budget as it starts
-- and leased with a fresh fencing token (includes/claim.lua).
-- The caller decodes each record (type, group, payload, attempts): Redis neither decodes nor re-encodes it.
-- @keys queue
-- @key overrides HASH group -> its override (includes/overrides.lua): its weight and rules; a block holds the job back
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg config string the fair-share config block (fs_config)
-- @arg plans string JSON {plan: its rules' JSON array} for the plans whose rules differ from config's ('' = none)
-- @arg leaseMs int
-- @arg max int jobs to claim, 1..1000
-- @reply [claimed: LeasedJob[], wakeMs: int] wakeMs as in includes/claim.lua
--!include includes/fair-share.lua
--!include includes/job.lua
--!include includes/settle.lua
--!include includes/overrides.lua
--!include includes/claim.lua
local K = job_keys()
if redis.call('LLEN', K.ready) == 0 then return { {}, -1 } end
local fs = fs_open(K.groups, K.seen, fs_config(ARGV[2]), tonumber(ARGV[1]) * 1000)
local claimed, wake = job_claim(K, fs, tonumber(ARGV[4]), tonumber(ARGV[5]), nil, claim_plans(ARGV[3]), nil, KEYS[20])
fs_close(fs)
job_keep(K, fs.now_ms, fs.now_ms + fs.cfg.ttl_ms, job_written_by_flight(K, K.active, K.counters))
return { claimed, wake }
