--[[
  config-drift.lua (include) — noticing that processes write different options under one limiter name
  (docs/operations.md "Config drift"). Included by includes/fair-share.lua: fs_config takes the fingerprint off
  the front of the config block, fs_open reads the stored one in its one HMGET and calls cf_open, fs_close
  writes fs.cf_write in its one HSET. No command of its own: a check costs what it cost before.
  src/core/config-drift.ts is the same code in TypeScript: keep the two in step, name for name.

  The admission lanes' config blocks start with '<fingerprint>#' (12 characters: a hash of every option the
  limiter's spec holds, the same in every lane); the queue's blocks carry none (cfg.cf false: nothing read, nothing written).
  The groups hash field CF_FIELD holds one fingerprint and when it was written (struct.pack('d', ms) .. fp).
  Byte 253 is never in UTF-8: no group id, sighting ('\255' ..), parking ('\255\254') or class meter
  ('\254' ..) field is it; config-check.lua keeps the descriptions under CF_FIELD .. CF_FIELD.
  cf_open(fs, raw) sets fs.cf, what the admission replies carry (`config`): '' when the stored fingerprint is
  this config's or none is live, else another config's fingerprint, written less than CF_LIVE_MS ago (the
  options differ); and fs.cf_write, the field's new value (false: unchanged; a peek writes nothing). Not
  flapping: a process's own fingerprint is rewritten once CF_LIVE_MS old; another's is replaced once CF_TAKE_MS
  old (at once when none is live), so while two configs run side by side the field changes at most once per
  CF_TAKE_MS, and each side sees the other's within about that.
]]
local CF_FIELD = '\253'
-- the fingerprint's length and the byte after it ('#'; a block without one starts with a number and a ',')
local CF_LEN = 12
local CF_MARK = 35

-- the fingerprint at the front of a config block, and the rest; false when the block carries none
local function cf_config(text)
  if string.byte(text, CF_LEN + 1) ~= CF_MARK then return false, text end
  return string.sub(text, 1, CF_LEN), string.sub(text, CF_LEN + 2)
end

local function cf_open(fs, raw)
  local fp, now = fs.cfg.cf, fs.now_ms
  local at, other = 0, false
  if raw then
    at = struct.unpack('d', raw)
    other = string.sub(raw, 9)
  end
  local age = now - at
  if other == fp then
    if age >= CF_LIVE_MS and not fs.peek then fs.cf_write = struct.pack('d', now) .. fp end
    return
  end
  local live = other and age < CF_LIVE_MS
  if live then fs.cf = other end
  if fs.peek then return end
  if not live or age >= CF_TAKE_MS then fs.cf_write = struct.pack('d', now) .. fp end
end
