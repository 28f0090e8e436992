--[[
  reset.lua — forgets one group (fs_reset in includes/fair-share-groups.lua): its share and rule state, its
  last-seen or probation sighting, its weight in Σw; its next check starts as a new group's would. Other
  groups, the limiter's global bucket and the queue (the group's deferred jobs) are untouched. Idempotent.

  KEYS[1] groups   HASH  '' -> packed meta, group -> packed per-group state (see admit.lua)
  KEYS[2] seen     ZSET  group -> last-seen ms
  ARGV[1]          group id (any bytes; only ever a hash field / zset member)

  Reply: 1 when the group had state to forget, 0 when it had none.
]]
--!include includes/fair-share.lua

return fs_reset(KEYS[1], KEYS[2], ARGV[1])
