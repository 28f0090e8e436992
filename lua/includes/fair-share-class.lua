--[[
  fair-share-class.lua — priority classes (docs/algorithm.md §2.11), included by includes/fair-share.lua before
  fs_config. Its TypeScript twin is src/core/fair-share-class.ts: keep the two in step, name for name.

  A limiter with `classes` splits its global limit between classes first: class k is guaranteed share s_k of
  the limit and lends what it leaves unused. Each class has one meter (its own field of the groups hash,
  FSC_FIELD .. name: byte 254 is never in UTF-8, so no group id collides with it) refilling at s_k·L up to the
  burst b. A request of a class whose meter holds its cost is *within its class's guarantee*: it is decided as
  without classes, except that its group's cap meter does not hold it back (the class meter is its cap then).
  A request of a class whose meter is short *borrows*: every floor it may take the global bucket down to is
  raised to the lending floor (ρ + 3b)/4, above every floor a request within its class's guarantee uses, so
  the guaranteed requests of every class are served first from the tokens below it. Every admission spends
  the global bucket as before: the strict bound is untouched. O(1): one class per call (the class is part of
  the config block, one lane per class), read in fs_open's HMGET and written in fs_close's HSET.

  The class part of a config block: '|' name ':' share after the numbers (before the rules' ';'). A claim's
  block (the queue's: its jobs keep their class) names the other classes too, each after another '|': the
  claim decides each job in its own class (fs_class in fair-share.lua), the first one's when it names none.
  Class state: struct.pack(FSC_PACK, ct, cl): tokens, last refill µs.
]]
local FSC_FIELD = '\254'
local FSC_PACK = 'dd'

-- the class part of a config block (name:share, then '|' and another for each other class a claim may meet)
local function fsc_config(text)
  local others = false
  local bar = string.find(text, '|', 1, true)
  if bar then
    others = {}
    for name, share in string.gmatch(string.sub(text, bar + 1), '([^:|]+):([^:|]+)') do others[name] = tonumber(share) end
    text = string.sub(text, 1, bar - 1)
  end
  local name, share = string.match(text, '^([^:]+):([^:]+)$')
  if not name then error('ERR_BL_STORE_CONFIG: expected a class as name:share, got ' .. tostring(text)) end
  return { name = name, share = tonumber(share), field = FSC_FIELD .. name, others = others }
end

-- the class meter's state at now, from its packed field (false: a new class, its meter full)
local function fsc_open(cfg, p, now)
  local share, size = cfg.cls.share, cfg.burst
  if share <= 0 then return { ct = 0, cl = now } end
  if not p then return { ct = size, cl = now } end
  local ct, cl = struct.unpack(FSC_PACK, p)
  if now < cl then cl = now end
  ct = ct + (now - cl) * share / cfg.T
  if ct > size then ct = size end
  return { ct = ct, cl = now }
end

-- true: the request is within its class's guarantee (the meter holds its cost); false: it borrows; nil: no classes
local function fsc_within(fs, c)
  if not fs.cls then return nil end
  return fs.cls.ct >= c - FS_EPS
end

-- a request within its class's guarantee whose class meter still holds half the burst after it: the class's
-- admissions run below its share, so its groups are below the water level whatever their own caps say (the water
-- level is the limiter's, not the class's: a small class's tenants sit far above it)
local function fsc_below(fs, c)
  if not fs.cls then return false end
  return fs.cls.ct - c >= fs.cfg.burst / 2 - FS_EPS
end

-- the lending floor: above every floor of a request within its class's guarantee (at cap (ρ + b)/2), room for c
local function fsc_lend_floor(rho, b, c, at_cap)
  local f = (rho + 3 * b) / 4
  if f > b - c then f = b - c end
  if f < at_cap then f = at_cap end
  return f
end

local function fsc_spend(fs, c)
  local ct = fs.cls.ct - c
  if ct < 0 then ct = 0 end
  fs.cls.ct = ct
end

local function fsc_pack(fs)
  return struct.pack(FSC_PACK, fs.cls.ct, fs.cls.cl)
end
