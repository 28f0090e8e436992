-- status.lua: the status codes the scripts return, one table for Lua and TypeScript: scripts/build-lua.js reads
-- it into STATUS of the generated module, and a header's reply type names them (included, never run alone).
local ST = {
  -- a job write (enqueue.lua, and the deferral step of admit-defer.lua): 0 admitted there, no job written
  ADMITTED = 0, WRITTEN = 1, DUPLICATE = 2, BACKLOG_FULL = -2, DEFER_HORIZON = -3,
  -- how a failed run ended (fail.lua)
  RETRYING = 'retrying', SNOOZED = 'snoozed', DEAD = 'dead', STALE = 'stale',
}
