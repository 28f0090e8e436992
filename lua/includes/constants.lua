--[[
  constants.lua (include) — the numbers the scripts and the TypeScript core share. scripts/build-lua.js reads
  every `local NAME = <number or 'string'>` line here into src/core/constants.generated.ts, so lua/ and
  src/core/ cannot drift apart. Included once, by includes/fair-share.lua, before everything that uses them.
]]
-- Admission (fair-share.lua; docs/algorithm.md §2)
local FS_EPS = 1e-9
-- groups trimmed per call at most
local FS_TRIM_PAGE = 100
-- Smallest green burst (capped by burst): Poisson clumps of groups below their guarantee stay green (with 1 token
-- they turned yellow and lost the token race to a flood).
local FS_GREEN_MIN = 4
-- The within-share meter's size (at least bg): priority inside the reserve while at least a quarter full (§2.4).
local FS_WITHIN = 60
-- Smallest cap (and demand) meter
local FS_CAP_MIN = 16
-- The flood meter's size: arrivals fill it, it drains at twice the cap rate; at least half full, the group floods
-- (§2.4)
local FS_FLOOD = 8
-- Graduation budget of probation: burst and tokens per second (§2.9)
local FS_GRAD_BURST = 100
local FS_GRAD_PER_S = 10
-- A fresh limiter's first epoch (its caps the guarantees, its new ids registered at once) lasts at most this (µs)
local FS_COLD_US = 1000000
-- The shared groups: every new group once maxGroups are active; ids on probation
local FS_OVERFLOW = '*overflow*'
local FS_NEWCOMERS = '*new*'
-- Rules (rules.lua): sub-windows of a sliding window
local RL_SLOTS = 10
-- Concurrency (concurrency.lua): expired leases swept per check at most
local CC_SWEEP = 10
-- Claims (claim.lua): ready jobs one claim looks at, at most
local CLAIM_SCAN = 64
-- Config drift (config-drift.lua): a stored fingerprint is live this long after it was written (its process
-- rewrites it then); another process replaces one of a different config once it is this old
local CF_LIVE_MS = 20000
local CF_TAKE_MS = 10000
-- config-check.lua: the descriptions kept (the most recently published)
local CF_DESCRIBED = 8
-- Overrides (overrides.lua, override-store.lua): how long the override keys live past the last change or the
-- limiter's last use (checks renew them with the limiter's keys); the longest ttlMs an override may have
local OV_KEEP_MS = 2592000000
