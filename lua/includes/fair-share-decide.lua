--[[
  fair-share-decide.lua — fs_decide, one admission decision (docs/algorithm.md §2.3, steps 4–8: shares, refill,
  rules, colour, waits, headers), included by includes/fair-share.lua after fs_open (it uses fs_group,
  fs_sighted, fs_release, fs_refill, fs_wait and the rules library RL). Its TypeScript twin is
  src/core/fair-share-decide.ts: keep the two in step, name for name. The contract is in fair-share.lua's header.
]]

local function fs_decide(fs, group, weight, cost, promise, rules, busy)
  local cfg, meta = fs.cfg, fs.meta
  if rules == nil then rules = cfg.rules end
  local now = fs.now_us
  local st, newcomer
  group, st, newcomer = fs_group(fs, group, weight)
  local c = cost
  local b, rho0, T = cfg.burst, cfg.reserve, cfg.T
  -- the reserve: at least half the bucket, for a cost that still fits as yellow beside it (c + ρ0 ≤ b stays yellow)
  local rho = math.floor(b / 2)
  if rho > b - c then rho = b - c end
  if rho < rho0 then rho = rho0 end

  -- (4) shares of the group (Σw is never below the group's own weight, whatever state survived)
  if meta.ws < st.w then meta.ws = st.w end
  if meta.gn < 1 then meta.gn = 1 end
  local gamma = st.w / meta.ws
  local kappa = meta.sh * st.w
  if kappa < gamma then kappa = gamma end
  if kappa > 1 then kappa = 1 end
  local Tg = T / gamma
  local Tc = T / kappa
  -- bg ≥ max(reserve, FS_GREEN_MIN): Poisson clumps of small tenants stay green. Cost c > 1: bg ≥ 2c (≤ b),
  -- so one request fits and the group's green keeps refilling while a request waits for c global tokens.
  local bg = b * gamma
  if bg < rho0 then bg = rho0 end
  if bg < FS_GREEN_MIN then bg = FS_GREEN_MIN end
  if c > 1 and bg < 2 * c then bg = 2 * c end
  if bg > b then bg = b end
  local bc = b * kappa
  if bc < bg then bc = bg end
  if bc < FS_CAP_MIN then bc = FS_CAP_MIN end
  local bw = FS_WITHIN
  if bg > bw then bw = bg end
  -- another group's green reservation: its units are not ours to take
  local rv = 0
  if meta.rv > 0 and meta.rg ~= group then rv = meta.rv end

  -- (5) refill the group's meters to now (the global bucket was refilled in fs_open)
  local dt = now - st.last
  st.tokMin = fs_refill(st.tokMin, 0, dt, Tg, bg)
  st.tokCap = fs_refill(st.tokCap, 0, dt, Tc, bc)
  st.tokDem = fs_refill(st.tokDem, 0, dt, Tc, bc)
  st.tokW = fs_refill(st.tokW, 0, dt, Tg, bw)
  st.flood = st.flood - 2 * dt / Tc
  if st.flood < 0 then st.flood = 0 end
  st.last = now

  -- (5b) rules: checked first, spent only if everything admits (rules.lua)
  local rok, rwait, rbad, rs = true, 0, 0, false
  if rules then
    -- an id on probation: the newcomers' share, its own rule record (fs_sighted)
    local rst = st
    if newcomer then rst = fs_sighted(fs, newcomer) end
    rs = rst.rs
    if not rs then
      -- a group's record holds its own values first; an id's record on probation (and a graduate's) only rules
      rs = RL.load(rules, rst.rb, rst.rat or FS_PACK_LEN + 1)
    elseif rst.rr ~= rules then
      -- decided under other rules earlier in this call: re-lay the state out for these
      rs = RL.load(rules, RL.pack(rst.rr, rs, now), 1)
    end
    rst.rs, rst.rr = rs, rules
    rok, rwait, rbad = RL.check(rules, rs, now, c)
  end
  -- a request over its concurrency cap spends nothing, like one a rule denies
  if busy then rok = false end

  -- (6) demand meter at the cap rate: min(arrivals, cap), whatever the share decides (not what a rule denies)
  if rok and st.tokDem >= c - FS_EPS then
    st.tokDem = st.tokDem - c
    meta.fc = meta.fc + c
  end
  -- (6a) flood meter: arrivals the rules let through fill it, it drains at twice the cap rate. At least half full
  -- (before this arrival), the group's arrivals run past twice its cap: it is always there when the bucket refills
  local flooding = st.flood >= FS_FLOOD / 2 - FS_EPS
  if rok then
    st.flood = st.flood + c
    if st.flood > FS_FLOOD then st.flood = FS_FLOOD end
  end
  -- (6b) within-share meter at the guaranteed rate, spent by every arrival the rules let through: a group whose
  -- arrivals run within its share keeps it at least a quarter full (priority inside the reserve); a flooder's is empty
  local within = false
  if rok and st.tokW >= c - FS_EPS then
    st.tokW = st.tokW - c
    within = st.tokW >= bw / 4 - FS_EPS
  end
  -- arrivals below the cap rate: the group is below the water level. Half its demand meter is left; or its arrivals
  -- still run near its share (its within-share meter is not empty: the cap is never below the share, and a bunch
  -- of requests at once empties the small demand meter); or its class runs below its share (half the class meter is
  -- left after this request). Or only its admissions are below the cap rate (it loses the race for yellow units to a
  -- faster borrower: half its cap meter is left)
  local below = st.tokDem >= bc / 2 - FS_EPS or st.tokW >= bw / 16 - FS_EPS or fsc_below(fs, c)
  local lagging = st.tokCap - c >= bc / 2 - FS_EPS
  local shared = group == FS_NEWCOMERS or group == FS_OVERFLOW

  -- (7) colour, cap first (RFC 2698 order); how far each kind may take the global bucket down (docs §2.4):
  -- green within share 0, amber (yellow within share) ρ/4, green spending credit ρ/2. A flooder (arrivals past twice
  -- its cap) borrows below the water level 5ρ/8, lagging behind its cap 7ρ/8, at its cap (ρ + b)/2; any other
  -- borrower a step lower: ρ/2 below the level or lagging, 7ρ/8 at its cap (none below a green floor: borrowing never
  -- comes before a guarantee; at ρ/2 it ties with the green of a group spending credit). A flooder is there whenever
  -- the bucket refills; a borrower near its cap arrives at random moments and, held to the flooder's floors, loses
  -- its share to it
  -- a request within its class's guarantee: the class meter is its cap (fair-share-class.lua; nil: no classes)
  local cw = fsc_within(fs, c)
  local capOk = c <= bc + FS_EPS and (cw or st.tokCap >= c - FS_EPS)
  local greenOk = capOk and c <= bg + FS_EPS and st.tokMin >= c - FS_EPS
  -- (a cost > 1 keeps room to pass: c + floor ≤ b; the holder of the green reservation has its units)
  local green_floor = rho / 2
  -- the shared groups, the reservation's holder, and every group in a fresh limiter's first epoch (all are new, as
  -- in '*new*': fs_graduates) take green down to 0
  if shared or (meta.rv > 0 and meta.rg == group) or meta.sh == 0 then green_floor = 0 end
  -- within its share: the fuller its within-share meter, the further down (the meter's level is how far its arrivals
  -- ran below its share). A borrower still within on the meter it started with drains it, and its floor climbs to ρ/3
  -- (below a borrower's green, ρ/2) as the meter falls to a quarter: those furthest below their shares come first.
  -- In whole units: a floor below one would keep a bucket holding exactly c from admitting at small limits
  if within and green_floor > 0 then
    local w_used = (bw - st.tokW) / (bw - bw / 4)
    if w_used < 0 then w_used = 0 end
    if w_used > 1 then w_used = 1 end
    green_floor = math.floor(rho / 3 * w_used)
  end
  if green_floor > b - c then green_floor = b - c end
  if rv > green_floor then green_floor = rv end
  -- a flooder at its cap rate takes only from the upper half of the band above the reserve: the lower half goes
  -- first to borrowers below theirs, and its cap meter keeps units for the top, which would otherwise overflow
  local yellow_floor = (rho + b) / 2
  if yellow_floor > b - c then yellow_floor = b - c end
  if yellow_floor < rho then yellow_floor = rho end
  local at_cap = yellow_floor
  if within then
    yellow_floor = rho / 4
  elseif not flooding then
    if below or lagging then yellow_floor = rho / 2 else yellow_floor = 7 * rho / 8 end
  elseif below then
    yellow_floor = 5 * rho / 8
  elseif lagging then
    yellow_floor = 7 * rho / 8
  end
  -- a request of a class past its guarantee borrows: above every floor of the guaranteed requests
  if cw == false then
    local lend = fsc_lend_floor(rho, b, c, at_cap)
    if green_floor < lend then green_floor = lend end
    if yellow_floor < lend then yellow_floor = lend end
  end
  if rv > yellow_floor then yellow_floor = rv end
  local allowed, colour = 0, 2
  local retry, hint, policy = 0, 0, 0
  local globalGreen = greenOk and meta.gt >= c + green_floor - FS_EPS
  local globalYellow = capOk and not greenOk and meta.gt >= c + yellow_floor - FS_EPS
  if not rok and (globalGreen or globalYellow) then
    -- only a rule says no: its wait, nothing promised or reserved
    retry, hint, policy = rwait, rwait, rbad
  elseif globalGreen then
    if not fs.peek then
      meta.gt = meta.gt - c
      st.tokMin = st.tokMin - c
      st.tokCap = st.tokCap - c
    end
    allowed, colour = 1, 0
  elseif globalYellow then
    if not fs.peek then
      meta.gt = meta.gt - c
      st.tokCap = st.tokCap - c
    end
    allowed, colour = 1, 1
  else
    local wc = 0
    if not cw then wc = fs_wait(st.tokCap, Tc, c, bc) end
    -- the global wait counts another group's reservation as spent (it is, once its holder is admitted)
    local tg = math.max(wc, fs_wait(st.tokMin, Tg, c, bg), fs_wait(meta.gt, T, c + green_floor, b + rv))
    local ty = math.max(wc, fs_wait(meta.gt, T, c + yellow_floor, b + rv))
    if tg < FS_INF then
      -- stagger concurrent callers of the group: each denial takes the next guaranteed slot
      -- Slots run at most one window ahead: past that they start again from the front, so a flood is
      -- never told to wait more than tg + window, and callers past the horizon spread instead of meeting there.
      local at = now + tg
      if promise then
        local nxt = st.promise + c * Tg
        if st.promise > now and nxt > at and nxt <= now + tg + cfg.window_us then at = nxt end
        st.promise = at
      end
      retry = at - now
      -- green in every respect but the global tokens: reserve them (cost > 1 only; one holder at a time)
      if promise and rok and c > 1 and greenOk and rv == 0 and meta.gt < c + green_floor - FS_EPS then
        local grace = c * Tg
        if grace > cfg.window_us then grace = cfg.window_us end
        meta.rv, meta.rg, meta.re = c, group, at + grace
      end
    elseif ty < FS_INF then
      retry = ty
    else
      -- the cost fits no bucket under the current shares: try again in a window
      retry = cfg.window_us
    end
    hint = math.min(tg, ty)
    if hint > retry then hint = retry end
    -- the latest of the waits; the policy named is the one that waits longest (the global one on a tie)
    if rwait > retry then retry, policy = rwait, rbad end
    if rwait > hint then hint = rwait end
  end
  if allowed == 1 and rules and not fs.peek then RL.spend(rules, rs, c) end
  -- the class meter pays for what its guarantee admitted (and the group's cap meter owes nothing past empty)
  if allowed == 1 and cw and not fs.peek then
    fsc_spend(fs, c)
    if st.tokCap < 0 then st.tokCap = 0 end
  end

  if allowed == 1 and meta.rv > 0 and meta.rg == group then fs_release(fs) end

  -- (8) headers
  local k1 = math.floor(math.min(st.tokMin, st.tokCap, meta.gt) + FS_EPS)
  if k1 < 0 then k1 = 0 end
  local k2 = math.floor(math.min(st.tokCap - k1, meta.gt - k1 - yellow_floor) + FS_EPS)
  if k2 < 0 then k2 = 0 end
  local reset = (bc - st.tokCap) * Tc
  if reset < 0 then reset = 0 end
  local limit = math.floor(kappa * cfg.limit + 0.5)
  if kappa == gamma then limit = math.floor(st.w * cfg.limit / meta.ws + 0.5) end
  -- with rules: policy 0 the global share, i the rules' i-th; the rules and their state (for the reply). Every
  -- field in the constructor (one added later rehashes the table)
  return {
    allowed = allowed, colour = colour, remaining = k1 + k2, limit = limit,
    guaranteed = math.floor(st.w * cfg.limit / meta.ws + FS_EPS),
    retry_us = retry, hint_us = hint, reset_us = reset, group = group, active = meta.gn,
    -- until the global bucket holds one unit again, for anyone (a lower bound: reservations ignored)
    empty_us = fs_wait(meta.gt, T, 1, b),
    policy = rules and policy, rules = rules, rs = rs,
    -- concurrency.lua's (16 fields: the table's hash part holds them all)
    lease = false, held = false,
  }
end
