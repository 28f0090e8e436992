-- reset.lua: forgets one group (fs_reset in includes/fair-share-groups.lua): its share and rule state, its
-- last-seen or probation sighting, its weight in Σw; its next check starts as a new group's would. Other groups,
-- the limiter's global bucket and the queue (the group's deferred jobs) are untouched. Idempotent.
-- @key groups HASH '' -> packed meta, group -> packed per-group state (see admit.lua)
-- @key seen ZSET group -> last-seen ms
-- @arg group string any bytes; only ever a hash field / zset member
-- @reply bool true when the group had state to forget
--!include includes/fair-share.lua

return fs_reset(KEYS[1], KEYS[2], ARGV[1])
