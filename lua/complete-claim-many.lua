-- complete-claim-many.lua: complete-claim.lua for several finished jobs in one call (the RedisQueue sends the
-- acknowledgements its workers make in one event-loop turn together): each job is completed and then its
-- claim made, in order, exactly as that many complete-claim.lua calls at that instant would.
-- @keys queue
-- @key overrides HASH group -> its override (includes/overrides.lua), read by the claims
-- @arg nowMs int store time in ms (0 = Redis TIME)
-- @arg config string the fair-share config block (fs_config)
-- @arg plans string JSON {plan: its rules' JSON array} for the plans whose rules differ from config's ('' = none)
-- @each acks Ack one per finished job, in arrival order (includes/lease.lua)
-- @reply [completed: bool, claimed: LeasedJob[], wakeMs: int][] one per job, in order, as complete-claim.lua's
--!include includes/fair-share.lua
--!include includes/job.lua
--!include includes/lease.lua
--!include includes/settle.lua
--!include includes/overrides.lua
--!include includes/claim.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
local fs = false
local out = {}
local keep = 0
-- Written once at the end for the whole batch: nothing in between reads them (see job_complete, job_claim).
local done, leases = {}, { jobs = {}, groups = {} }
local plans = claim_plans(ARGV[3])
for i = 4, #ARGV - 7, 8 do
  local completed = job_complete(K, now, ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], tonumber(ARGV[i + 4]),
    tonumber(ARGV[i + 5]), done)
  keep = math.max(keep, tonumber(ARGV[i + 4]))
  if not fs and redis.call('LLEN', K.ready) == 0 then
    out[#out + 1] = { completed, {}, -1 }
  else
    fs = fs or fs_open(K.groups, K.seen, fs_config(ARGV[2]), now * 1000)
    local claimed, wake = job_claim(K, fs, tonumber(ARGV[i + 6]), tonumber(ARGV[i + 7]), leases, plans, false, KEYS[20])
    out[#out + 1] = { completed, claimed, wake }
  end
end
if fs then fs_close(fs) end
job_call_chunked('ZADD', K.completed, done)
job_lease_all(K, leases)
job_keep(K, now, now + keep, job_written_by_flight(K, K.completed, K.jobs, K.active, K.counters))
return out
