--[[
  admit-defer.lua (include) — one admission with deferral, shared by admit-defer.lua and admit-defer-many.lua.
  Needs includes/fair-share.lua, includes/job.lua and includes/concurrency.lua first.

  When the request is denied, its work is written as a job due at once: the dispatcher moves it through the
  same budget in fair (SFQ) order, so a backlog drains at whatever the group may borrow, not only at its
  guaranteed rate. runAt is an estimate of the latest start: one guaranteed interval (c·Tg, Tg = T·Σw/w) per
  job of the group waiting, this one included, i.e. when the job runs if the group gets only its guaranteed
  share and its own live traffic takes none of it; with idle capacity it starts sooner. A runAt beyond
  maxDeferMs, or a full backlog, denies instead. An idempotency key that names a live job returns that job
  (duplicate) without deciding again, so a retried request neither runs twice nor spends budget.

  ad_admit(fs, K, ov_key, group, weight, cost, jtype, payload, idem, max_backlog, max_defer_ms, cap, CC, cc, ccap,
           lease_ms, plan)
    -> reply (17 values):
    the first 11 fields of admit.lua, then deferStatus, jobId, runAtMs, then admit.lua's emptyMs, config and
    override;
    deferStatus 0 admitted (no job), 1 written, 2 duplicate, -2 backlog full, -3 beyond maxDeferMs;
    with rules, then admit.lua's policy and each rule's mark (a duplicate: policy 0, each mark −1: nothing decided);
    with cc (request concurrency: CC the library of concurrency.lua, cc its state; ccap the cap, 0 = none), then lease, held (a duplicate: '', 0).
    A request over its cap is deferred like one over the rate. plan: the check's plan ('' = none), the job's.
    The group's override (ov_key, includes/overrides.lua) sets its weight, rules, cap and the job's groupConcurrency
    (cap); a blocked group is denied and nothing is deferred (deferStatus 0).
  The caller opens fs before and closes it after (any number of calls in between).
]]

local function ad_admit(fs, K, ov_key, group, weight, cost, jtype, payload, idem, max_backlog, max_defer_ms, cap, CC,
                        cc, ccap, lease_ms, plan)
  local now = fs.now_ms
  if idem ~= '' then
    local existing = redis.call('HGET', K.idempotency, idem)
    local r = existing and job_get(K, existing)
    if r then
      local wait = math.max(0, r.runAt - now)
      local dup = { 0, 2, 0, 0, 0, wait, wait, 0, fs.meta.gn, fs.now_us, group, 2, r.id, r.runAt, 0, fs.cf, '' }
      if fs.cfg.rules then
        dup[18] = 0
        for i = 1, #fs.cfg.rules do dup[18 + i] = -1 end
      end
      if cc then dup[#dup + 1], dup[#dup + 2] = '', 0 end
      return dup
    end
  end
  local ov = ov_read(fs, ov_key, group)
  local rules = nil
  if ov then
    if ov.w > 0 then weight = ov.w end
    if ccap and ccap > 0 and ov.c > 0 then ccap = ov.c end
    if ov.g > 0 then cap = ov.g end
    rules = ov.rules
  end
  local d
  local blocked = ov and ov.b == 1
  if blocked then
    d = ov_blocked(fs, group, ov)
  elseif cc then
    d = CC.decide(fs, cc, group, weight, cost, ccap, lease_ms, rules)
  else
    d = fs_decide(fs, group, weight, cost, true, rules)
  end
  local status, id, run_at = 0, '', 0
  if d.allowed == 0 and not blocked then
    local w = weight
    if d.group ~= group then w = 1 end -- the overflow group
    local unit_us = fs.cfg.T * fs.meta.ws / w
    local waiting = tonumber(redis.call('HGET', K.backlog, group) or '0')
    local promised = now + math.ceil((waiting + 1) * cost * unit_us / 1000)
    status, id, run_at = job_defer(K, now, group, weight, cost, jtype, payload, idem, max_backlog, promised,
      max_defer_ms, now, waiting, cap, nil, plan, false, fs.cfg.cls and fs.cfg.cls.name)
  end
  local out = { d.allowed, d.colour, d.remaining, d.limit, d.guaranteed, math.ceil(d.retry_us / 1000),
                math.ceil(d.hint_us / 1000), math.ceil(d.reset_us / 1000), d.active, fs.now_us, d.group, status, id, run_at,
                math.floor(d.empty_us / 1000), fs.cf, ov_text(ov, d) }
  ov_rules(out, #out, d, ov, fs.cfg.rules)
  if cc then CC.reply(out, d) end
  return out
end
