'use strict';
/**
 * The ORIGINAL design, kept only so the demo can run it side by side with bulk-limiter on the same load.
 * Not part of the package. Per fixed window: INCR a global counter; per-group share
 * `max(1, floor(limit / |active groups|))`; INCR the group's counter; undo on deny. The active set is never
 * cleaned, and deferred work is handed to workers as fast as they can take it, never checked again.
 * `check()` answers in the shape of bulk-limiter's Decision, so the same example app can be mounted with it.
 */

class FixedWindowLimiter {
  constructor({ name = 'fixed-window', limit, windowMs = 1000, clock = Date.now }) {
    this.name = name;
    this.spec = {
      name,
      limit,
      windowMs,
      burst: limit,
      reserve: 0,
      idleMs: Infinity,
      epochMs: windowMs,
      sustained: true,
      maxGroups: Number.MAX_SAFE_INTEGER,
    };
    // What bulk-limiter's middleware reads from a limiter (its resolved options).
    this.options = {
      spec: this.spec,
      store: null,
      maxGroups: Number.MAX_SAFE_INTEGER,
      maxGroupLength: 256,
      maxCost: limit,
      maxWeight: 1000,
      onStoreError: 'allow',
      timeoutMs: 500,
      instances: 1,
      logger: console,
    };
    this.clock = clock;
    this.window = -1;
    this.globalCount = 0;
    this.groupCounts = new Map();
    this.activeGroups = new Set(); // never cleaned: shares shrink as tenants come and go (flaw 2)
    this.backlog = []; // FIFO of deferred jobs
    this.jobSeq = 0;
    this.wakeWorkers = () => {};
  }

  async check(group, { cost = 1, defer } = {}) {
    const { limit, windowMs } = this.spec;
    const now = this.clock();
    const window = Math.floor(now / windowMs);
    if (window !== this.window) {
      // A new window forgets everything at once: the next `limit` requests pass in a burst (flaw 4).
      this.window = window;
      this.globalCount = 0;
      this.groupCounts.clear();
    }
    this.activeGroups.add(group);
    const share = Math.max(1, Math.floor(limit / this.activeGroups.size)); // floor() loses capacity (flaw 1)
    const used = (this.groupCounts.get(group) ?? 0) + cost;
    const allowed = this.globalCount + cost <= limit && used <= share;
    if (allowed) {
      this.globalCount += cost;
      this.groupCounts.set(group, used);
    }
    const resetMs = (window + 1) * windowMs - now;
    const decision = {
      allowed,
      group,
      limit: share,
      guaranteed: share,
      remaining: Math.max(0, share - (allowed ? used : used - cost)),
      retryAfterMs: allowed ? 0 : resetMs,
      resetMs,
      activeGroups: this.activeGroups.size,
      colour: allowed ? 'green' : 'red',
      at: now,
    };
    if (allowed) return decision;
    if (!defer) return { ...decision, reason: 'limit' };
    const job = { id: `fw-${++this.jobSeq}`, type: defer.type, group, payload: defer.payload, runAt: now };
    this.backlog.push(job);
    this.wakeWorkers();
    return { ...decision, job: { id: job.id, runAt: now, duplicate: false } };
  }

  /** Released jobs go straight to workers, outside the limit (flaw 8). Returns `{ close() }`. */
  startWorkers({ handlers, concurrency = 4 }) {
    let running = true;
    let idle = [];
    this.wakeWorkers = () => {
      const waiting = idle;
      idle = [];
      for (const wake of waiting) wake();
    };
    const loop = async () => {
      while (running) {
        const job = this.backlog.shift();
        if (!job) {
          await new Promise((resolve) => idle.push(resolve));
          continue;
        }
        const payload = typeof job.payload === 'string' ? JSON.parse(job.payload) : job.payload;
        try {
          await handlers[job.type]({ ...job, payload, attempts: 0, startedAt: Date.now() });
        } catch {
          // The original design had no retries; a failed job is simply gone.
        }
      }
    };
    const loops = Array.from({ length: concurrency }, loop);
    return {
      close: async () => {
        running = false;
        this.wakeWorkers();
        await Promise.all(loops);
      },
    };
  }

  async destroy() {}
}

module.exports = { FixedWindowLimiter };
