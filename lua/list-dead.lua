-- list-dead.lua: one page of dead jobs, newest death first (dead-letters.lua retries or removes one).
-- @keys queue
-- @arg offset int ≥ 0
-- @arg count int ≤ 1000
-- @reply string[] the records' JSON text
--!include includes/job.lua
local K = job_keys()
local offset, count = math.max(0, math.floor(tonumber(ARGV[1]))), math.min(math.floor(tonumber(ARGV[2])), 1000)
if count <= 0 then return {} end
local ids = redis.call('ZREVRANGE', K.dead, offset, offset + count - 1)
if #ids == 0 then return {} end
local raws = redis.call('HMGET', K.jobs, unpack(ids))
local out = {}
for i = 1, #ids do
  if raws[i] then out[#out + 1] = raws[i] end
end
return out
