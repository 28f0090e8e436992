'use strict';
/**
 * One load-generating process of a fairness scenario (several run at once, like app instances).
 * Open-loop Poisson arrivals per group (its share = rate / processes), or bursts at the window edges;
 * optional closed-loop callers that honour retryAfterMs. Every decision is logged with the store time
 * it was made at, so windows are measured on one clock. Results go back over IPC.
 */
const Redis = require('ioredis');
const { createBaseline } = require('./baseline');
const { requireCore } = require('../lib/package');
const { arrivals } = require('./arrivals');

async function run(cfg) {
  let storeErrors = 0;
  const client = new Redis({ host: '127.0.0.1', port: cfg.redisPort, enableAutoPipelining: true, maxRetriesPerRequest: 1 });
  let decide;
  if (cfg.design === 'fair') {
    const core = requireCore();
    // A slow store call must not turn into an in-process fallback decision here: deny it and count it.
    // the scenario's spec: limit and windowMs, and the tuning knobs burst and reserve (its metrics read them too)
    const { burst, reserve, ...spec } = cfg.spec;
    const limiter = core.createLimiter({
      store: new core.RedisStore({ client, prefix: 'blf' }),
      name: cfg.name,
      ...spec,
      tuning: { burst, reserve },
      timeoutMs: 2000,
      onStoreError: 'deny',
    });
    decide = async (group, weight, cls) => {
      const d = await limiter.check(group, cls === undefined ? { cost: 1, weight } : { cost: 1, weight, class: cls });
      if (d.reason === 'store-error') storeErrors++;
      return d;
    };
  } else {
    const base = createBaseline(client, { name: cfg.name, limit: cfg.spec.limit, windowMs: cfg.spec.windowMs });
    decide = (group) => base.check(group);
  }
  await client.ping();

  const schedule = [];
  cfg.groups.forEach((g, gi) => {
    if (g.rate > 0) for (const t of arrivals(g, cfg.processes, cfg.durationMs)) schedule.push([t, gi]);
  });
  schedule.sort((a, b) => a[0] - b[0]);

  const log = { group: [], allowed: [], at: [], issued: [] };
  let inFlight = 0;
  let errors = 0;
  const record = (gi, issued, d) => {
    log.group.push(gi);
    log.allowed.push(d.allowed ? 1 : 0);
    log.at.push(d.at - cfg.t0);
    log.issued.push(issued);
  };
  const now = () => Date.now() - cfg.t0;
  while (now() < 0) await new Promise((r) => setTimeout(r, Math.max(1, -now())));

  // Closed-loop callers: send, and when denied wait exactly retryAfterMs before the next attempt.
  const closed = { attempts: 0, successes: 0 };
  const closedLoops = [];
  for (const c of cfg.closed || []) {
    const gi = cfg.groups.findIndex((g) => g.name === c.group);
    for (let k = 0; k < c.callers; k++) {
      closedLoops.push(
        (async () => {
          while (now() < cfg.durationMs) {
            const issued = now();
            const d = await decide(c.group, cfg.groups[gi].weight, cfg.groups[gi].class);
            record(gi, issued, d);
            if (issued >= cfg.warmupMs) {
              closed.attempts++;
              if (d.allowed) closed.successes++;
            }
            if (!d.allowed) await new Promise((r) => setTimeout(r, Math.max(1, d.retryAfterMs)));
          }
        })(),
      );
    }
  }

  let next = 0;
  let maxLagMs = 0;
  while (next < schedule.length) {
    const t = now();
    while (next < schedule.length && schedule[next][0] <= t) {
      const [due, gi] = schedule[next++];
      maxLagMs = Math.max(maxLagMs, t - due);
      const g = cfg.groups[gi];
      inFlight++;
      decide(g.name, g.weight, g.class)
        .then(
          (d) => record(gi, due, d),
          () => {
            errors++;
          },
        )
        .finally(() => {
          inFlight--;
        });
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 5));
  await Promise.all(closedLoops);
  client.disconnect();
  return { log, closed, errors: errors + storeErrors, maxLagMs };
}

process.once('message', (cfg) => {
  run(cfg).then(
    (result) => process.send({ result }, () => process.exit(0)),
    (error) => process.send({ error: String(error && error.message).split('\n')[0] }, () => process.exit(0)),
  );
});
