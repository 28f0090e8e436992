-- claim.lua: moves up to `max` jobs from the head of ready to active, each under a new lease with a fresh
-- fencing token.
-- KEYS: the queue key block (includes/job.lua).
-- ARGV: 1 nowMs (0 = Redis TIME)  2 leaseMs  3 max (1..1000)
-- Reply: a list (empty when ready is empty) of {id, record JSON, token, leaseUntil}; the caller decodes the
--        record (type, group, payload, attempts): Redis neither decodes nor re-encodes it.
--!include includes/job.lua
--!include includes/lease.lua
local K = job_keys()
local now = job_now_ms(ARGV[1])
return job_claim(K, now, now + tonumber(ARGV[2]), tonumber(ARGV[3]))
