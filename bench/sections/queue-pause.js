'use strict';
/**
 * Section 3, second part: where the limit holds. The README's scale: limit 20/s, readyMax 100, 400 deferred
 * jobs; the Dispatcher runs while the workers are away for `pauseMs`, then one Worker of concurrency 10
 * comes back, with live traffic (10/s) through the same limiter all along. Counted: job starts (the store
 * time of each claim) plus live admissions in any sliding 1 s window. Charging at the move ran the whole
 * ready list at once (120 starts in one second, 6× the limit); charging at the start must stay ≤ limit.
 * Both stores; the Redis row on a fresh redis-server.
 */
const { startRedis } = require('../lib/redis');
const { maxInSlidingWindow } = require('../lib/stats');
const { markdownTable, fmt } = require('../lib/table');
const { progress } = require('../lib/progress');
const { requireCore } = require('../lib/package');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The limiter's queue, recording the store time of every job start it hands out (leaseUntil − leaseMs). */
function recordingStarts(queue, leaseMs, startedAt) {
  const record = (jobs) => jobs.forEach((j) => startedAt.push(j.leaseUntil - leaseMs));
  return Object.assign(Object.create(queue), {
    claimMany: async (...a) => {
      const r = await queue.claimMany(...a);
      record(r.claimed);
      return r;
    },
    completeAndClaim: async (...a) => {
      const r = await queue.completeAndClaim(...a);
      record(r.claimed);
      return r;
    },
  });
}

/** The default burst of a limit per second (docs/algorithm.md §2.10), for the strict capacity of a span. */
function defaultBurst(limit) {
  const base = Math.max(Math.ceil(limit / 20), Math.min(8, Math.ceil(limit / 10)));
  const reserve = Math.max(1, Math.ceil(base / 5));
  return Math.min(limit, Math.max(reserve + 1, base));
}

/** The most a strict bucket can start in `spanMs` from full: burst + one unit per emission interval. */
function strictCapacity(limit, spanMs) {
  const b = defaultBurst(limit);
  return b + Math.floor((spanMs * (limit - b + 1)) / 1000);
}

async function pauseScenario(core, store, cfg, withLive = true) {
  const leaseMs = 30_000;
  const limiter = core.createLimiter({ store, name: `pause-${Date.now().toString(36)}`, limit: cfg.limit, windowMs: 1000, maxBacklog: cfg.jobs * 2 });
  let jobs = 0;
  for (let i = 0; jobs < cfg.jobs; i++) {
    const d = await limiter.check(`tenant ${i % 4}`, { defer: { type: 'work', payload: { i } } });
    if (d.job) jobs += 1;
  }
  const startedAt = [];
  const queue = recordingStarts(limiter.queue, leaseMs, startedAt);
  const silent = { warn: () => {}, error: () => {} };
  const dispatcher = new core.Dispatcher({ limiter: { queue }, readyMax: cfg.readyMax, logger: silent });
  const worker = new core.Worker({ limiter: { queue }, concurrency: 10, leaseMs, handlers: { work: async () => {} }, logger: silent });
  const liveAt = [];
  let live = true;
  const liveLoop = (async () => {
    while (live && withLive) {
      const d = await limiter.check('live');
      if (d.allowed) liveAt.push(d.at);
      await sleep(100);
    }
  })();
  let done = 0;
  worker.on('completed', () => void (done += 1));
  dispatcher.start();
  await sleep(cfg.pauseMs); // the workers are away: a deploy, a crash, a slow handler
  const readyAtReturn = (await limiter.counts()).ready;
  const t0 = Date.now();
  worker.start();
  while (done < jobs && Date.now() - t0 < 120_000) await sleep(20);
  const drainMs = Date.now() - t0;
  live = false;
  await liveLoop;
  await worker.close(5000);
  await dispatcher.stop();
  await limiter.close();
  const sorted = (xs) => [...xs].sort((a, b) => a - b);
  // the drain: job starts in the first drainSpanMs after the workers came back (store time of the claims)
  const first = Math.min(...startedAt);
  const drained = startedAt.filter((t) => t < first + cfg.drainSpanMs).length;
  return {
    drained,
    drainFraction: drained / strictCapacity(cfg.limit, cfg.drainSpanMs),
    jobs,
    done,
    readyAtReturn,
    drainMs,
    live: liveAt.length,
    maxStarts: maxInSlidingWindow(sorted(startedAt), 1000),
    maxAll: maxInSlidingWindow(sorted([...startedAt, ...liveAt]), 1000),
  };
}

async function runPause(cfg) {
  const core = requireCore();
  const rows = [];
  const drains = [];
  progress(`queue: pause scenario, MemoryStore`);
  rows.push({ store: 'MemoryStore', ...(await pauseScenario(core, new core.MemoryStore(), cfg)) });
  progress(`queue: drain after a pause, MemoryStore`);
  drains.push({ store: 'MemoryStore', ...(await pauseScenario(core, new core.MemoryStore(), cfg, false)) });
  progress(`queue: pause scenario, RedisStore`);
  const redis = await startRedis();
  const client = redis.client();
  try {
    rows.push({ store: 'RedisStore', ...(await pauseScenario(core, new core.RedisStore({ client }), cfg)) });
    progress(`queue: drain after a pause, RedisStore`);
    drains.push({ store: 'RedisStore', ...(await pauseScenario(core, new core.RedisStore({ client }), cfg, false)) });
  } finally {
    client.disconnect();
    await redis.stop();
  }
  const markdown = [
    `**Where the limit holds.** limit ${cfg.limit}/s, readyMax ${cfg.readyMax}, ${cfg.jobs} deferred jobs from 4 tenants; the Dispatcher runs while the workers are away for ${fmt(cfg.pauseMs / 1000, 1)} s, then one Worker (concurrency 10) comes back; live requests every 100 ms through the same limiter all along. A job's start is the store time of its claim. Charging jobs when the dispatcher moved them (before this round) ran the whole ready list at once: 120 starts in one second.`,
    markdownTable(
      [
        'store',
        'jobs ready when the workers came back',
        'jobs run',
        'drain s',
        'most job starts in any 1 s',
        'most starts + live admissions in any 1 s',
        'limit',
      ],
      rows.map((r) => [
        r.store,
        fmt(r.readyAtReturn),
        `${fmt(r.done)} / ${fmt(r.jobs)}`,
        fmt(r.drainMs / 1000, 1),
        fmt(r.maxStarts),
        fmt(r.maxAll),
        fmt(cfg.limit),
      ]),
    ),
    `**Drain after a pause.** The same, without live traffic: job starts in the first ${fmt(cfg.drainSpanMs / 1000, 1)} s after the workers came back, against the strict capacity of that span from a full bucket (burst ${defaultBurst(cfg.limit)} + one start per emission interval: ${strictCapacity(cfg.limit, cfg.drainSpanMs)}).`,
    markdownTable(
      ['store', `job starts in ${fmt(cfg.drainSpanMs / 1000, 1)} s`, 'strict capacity', 'fraction', 'most job starts in any 1 s', 'limit'],
      drains.map((r) => [
        r.store,
        fmt(r.drained),
        fmt(strictCapacity(cfg.limit, cfg.drainSpanMs)),
        fmt(r.drainFraction, 3),
        fmt(r.maxStarts),
        fmt(cfg.limit),
      ]),
    ),
  ].join('\n\n');
  const drainChecks = drains.map((r) => ({
    name: `${r.store}: deferred work drains at ≥ 0.95 of strict capacity after a ${fmt(cfg.pauseMs / 1000, 1)} s worker pause (and ≤ limit in any 1 s)`,
    value: `${fmt(r.drainFraction, 3)} (${fmt(r.drained)} of ${fmt(strictCapacity(cfg.limit, cfg.drainSpanMs))}; most in 1 s ${fmt(r.maxStarts)})`,
    pass: r.drainFraction >= 0.95 && r.maxStarts <= cfg.limit,
  }));
  const checks = rows.map((r) => ({
    name: `${r.store}: job starts + live ≤ limit in any 1 s after an ${fmt(cfg.pauseMs / 1000, 1)} s worker pause`,
    value: `${fmt(r.maxAll)} (limit ${fmt(cfg.limit)})`,
    pass: r.done === r.jobs && r.maxAll <= cfg.limit,
  }));
  return { markdown, checks: [...checks, ...drainChecks], rows: [...rows, ...drains.map((r) => ({ ...r, drain: true }))] };
}

module.exports = { runPause };
