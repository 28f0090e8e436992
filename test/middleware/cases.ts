/**
 * One table of HTTP cases, run through Express (express.test.ts) and Koa (koa.test.ts) with supertest.
 * The group is the `tenant` query parameter (`req.query` and `ctx.query` both have it), so ids that cannot
 * travel in a header (unicode) are covered too. Stores use a frozen clock: budgets never refill mid-case.
 */
import type { RequestListener } from 'node:http';
import request from 'supertest';
import type { Response } from 'supertest';
import { createLimiter } from '../../src/limiter/limiter';
import type { BulkLimiterOptions } from '../../src/middleware/shared';
import type { LimiterOptions } from '../../src/limiter/options';
import { MemoryStore } from '../../src/memory/memory-store';
import type { Decision, Logger, Store } from '../../src/types';
import { admissionState } from '../helpers/memory-state';
import { ManualScheduler } from '../helpers/manual-scheduler';
import { withScheduler } from '../../src/util/scheduler';

/** What cases need from a request: Express's `req` and Koa's `ctx` both have it. */
export interface AnyCtx {
  readonly query: Record<string, unknown>;
}
export type Options = BulkLimiterOptions<AnyCtx>;

export interface Harness {
  readonly name: 'express' | 'koa' | 'fastify' | 'nest-express' | 'nest-fastify';
  /**
   * An app where GET `path` runs the limiter, then answers 200 "ok". `errorHandler: 'app'` installs an
   * error handler that answers `{ handled, status, message, errHeaders, hasDecision }`; `'default'` leaves
   * the framework's own.
   */
  app(routes: Record<string, Options>, errorHandler?: 'app' | 'default', settings?: AppSettings): RequestListener;
}

/** `trustProxy`: Express `app.set('trust proxy', true)` / Koa `app.proxy = true` (the client IP from X-Forwarded-For). */
export interface AppSettings {
  readonly trustProxy?: boolean;
  /** The handler awaits it before answering (a request held in flight); a rejection is thrown downstream. */
  readonly hold?: () => Promise<void>;
}

export interface CaseEnv {
  readonly h: Harness;
  /** A fresh store for this case (memory or Redis, frozen clock). */
  readonly store: () => Store;
  /** A limiter name unique to this run. */
  readonly name: (label: string) => string;
}

export interface HttpCase {
  readonly title: string;
  /** Also run against RedisStore. */
  readonly redis?: boolean;
  run(env: CaseEnv): Promise<void>;
}

export const tenant = (c: AnyCtx): string | undefined => c.query.tenant as string | undefined;

export function recordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    warn: (m: string) => {
      lines.push(m);
    },
  };
}

/** A store whose admissions fail with `admit`, and so does `queue.counts` (the breaker's probe of a non-Redis store). */
function faultStore(admit: () => Promise<Decision>): Store {
  return {
    bind: (spec) => {
      const bound = new MemoryStore().bind(spec);
      bound.queue.counts = admit as never;
      return { ...bound, admit };
    },
  };
}
/** A store whose every call fails at once (connection refused, offline queue disabled). */
export const throwingStore: Store = faultStore(() => Promise.reject(new Error('connect ECONNREFUSED')));
/** A store that never answers (a command stuck in an offline queue). */
export const hangingStore: Store = faultStore(() => new Promise(() => {}));

const get = (app: RequestListener, path: string): Promise<Response> => request(app).get(path);

function limiterOptions(env: CaseEnv, label: string, extra: Partial<LimiterOptions> = {}): LimiterOptions {
  return { store: env.store(), name: env.name(label), limit: 3, tuning: { burst: 3 }, windowMs: 60_000, ...extra };
}

function expectRetryAfter(res: Response): number {
  const value = res.headers['retry-after'];
  expect(value).toMatch(/^[1-9][0-9]*$/);
  return Number(value);
}

/** A function option that gives an unusable value is the server's bug: 500, one warning naming the option. */
function misconfiguredCase(title: string, option: string, extra: (c: AnyCtx) => Partial<Options>, path = '/?tenant=a', allowedFirst = 0): HttpCase {
  return {
    title: `${title}: 500 (not a 400 blaming the client), one warning naming \`${option}\``,
    async run(env) {
      const logger = recordingLogger();
      const probe: AnyCtx = { query: {} };
      const app = env.h.app({
        '/': { ...limiterOptions(env, `bad-${option}`, { limit: 1, tuning: { burst: 1 }, logger }), group: tenant, ...extra(probe) },
      });
      for (let i = 0; i < allowedFirst; i++) expect((await get(app, path)).status).toBe(200);
      for (let i = 0; i < 2; i++) {
        const res = await get(app, path);
        expect(res.status).toBe(500);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(res.text)).toEqual({
          type: 'about:blank',
          title: 'Internal Server Error',
          status: 500,
          detail: expect.stringContaining('misconfigured'),
        });
      }
      expect(logger.lines).toHaveLength(1);
      expect(logger.lines[0]).toMatch(new RegExp(`^WRN_BL_OPTION_RESULT: \`${option.replace('.', '\\.')}\` gave `));
    },
  };
}

const circular: Record<string, unknown> = {};
circular.self = circular;

const MISCONFIGURED_CASES: readonly HttpCase[] = [
  misconfiguredCase('a group function returning a number', 'group', () => ({ group: () => 42 as unknown as string })),
  misconfiguredCase('a weight function returning NaN', 'weight', () => ({ weight: () => Number.NaN })),
  misconfiguredCase('a plan function returning a name that is not a plan', 'plan', () => ({ plans: { pro: { weight: 2 } }, plan: () => 'gold' })),
  misconfiguredCase('a plan function returning a number', 'plan', () => ({ plans: { pro: {} }, plan: () => 7 as unknown as string })),
  misconfiguredCase('a plan function on a limiter without plans', 'plan', () => ({ plan: () => 'pro' })),
  misconfiguredCase('a class function returning a name that is not a class', 'class', () => ({
    classes: { critical: { share: 0.2 } },
    class: () => 'gold',
  })),
  misconfiguredCase('a class function on a limiter without classes', 'class', () => ({ class: () => 'critical' })),
  misconfiguredCase('a cost function returning more than maxCost', 'cost', () => ({ cost: (c) => Number(c.query.cost) }), '/?tenant=a&cost=99'),
  misconfiguredCase('a cost function returning a string', 'cost', () => ({ cost: () => '1' as unknown as number })),
  misconfiguredCase('a skip function returning a string', 'skip', () => ({ skip: () => 'no' as unknown as boolean })),
  misconfiguredCase(
    'a defer.payload of a BigInt (once a job must be written)',
    'defer.payload',
    () => ({ defer: { type: 'report', payload: () => ({ n: 10n }), statusUrl: (id) => `/jobs/${id}` } }),
    '/?tenant=a',
    1,
  ),
  misconfiguredCase(
    'a circular defer.payload (once a job must be written)',
    'defer.payload',
    () => ({ defer: { type: 'report', payload: () => circular, statusUrl: (id) => `/jobs/${id}` } }),
    '/?tenant=a',
    1,
  ),
  misconfiguredCase('a defer.idempotencyKey function returning a number', 'defer.idempotencyKey', () => ({
    defer: { type: 'report', idempotencyKey: () => 7 as unknown as string, statusUrl: (id) => `/jobs/${id}` },
  })),
  {
    title: "a misconfigured option with onLimit 'next': the app's error handler gets a 500 http-error with code ERR_BL_OPTION_RESULT",
    async run(env) {
      const logger = recordingLogger();
      const app = env.h.app({ '/': { ...limiterOptions(env, 'bad-next', { logger }), group: tenant, weight: () => 0, onLimit: 'next' } }, 'app');
      const res = await get(app, '/?tenant=a');
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ handled: true, status: 500, code: 'ERR_BL_OPTION_RESULT', message: expect.stringContaining('misconfigured') });
      expect(logger.lines).toHaveLength(1);
    },
  },
  {
    title: 'a defer.statusUrl that throws or gives no string: the job is queued, so still a 202 with its id (no Location), one warning',
    async run(env) {
      for (const [label, statusUrl] of [
        [
          'throws',
          () => {
            throw new Error('no route');
          },
        ],
        ['gives a number', () => 42 as unknown as string],
      ] as const) {
        const logger = recordingLogger();
        const options = limiterOptions(env, `status-url-${label.replace(/ /g, '-')}`, { limit: 1, tuning: { burst: 1 }, logger });
        const app = env.h.app({ '/': { ...options, group: tenant, defer: { type: 'report', statusUrl } } });
        expect((await get(app, '/?tenant=a')).status).toBe(200);
        for (let i = 0; i < 2; i++) {
          const res = await get(app, '/?tenant=a');
          expect({ label, status: res.status, location: res.headers.location }).toEqual({ label, status: 202, location: undefined });
          expect(JSON.parse(res.text)).toMatchObject({ jobId: expect.any(String), state: 'delayed' });
        }
        expect(logger.lines).toHaveLength(1);
        expect(logger.lines[0]).toMatch(
          /^WRN_BL_OPTION_RESULT: `defer\.statusUrl` (threw Error: no route|gave `42` \(number\)); expected a URL string/,
        );
      }
    },
  },
  {
    title: 'request data stays a 400: a group id that is too long or an array (repeated parameter), an Idempotency-Key header over 256 bytes',
    async run(env) {
      const logger = recordingLogger();
      const defer = { type: 'report', statusUrl: (id: string) => `/jobs/${id}` };
      const weighed: unknown[] = [];
      const weight = (group: string): number => {
        weighed.push(group);
        return 1;
      };
      const app = env.h.app({
        '/': { ...limiterOptions(env, 'bad-input', { limit: 1, tuning: { burst: 1 }, logger }), group: tenant, weight, defer },
      });
      expect((await get(app, `/?tenant=${'x'.repeat(200)}`)).status).toBe(400);
      const repeated = await get(app, '/?tenant=a&tenant=b');
      expect(repeated.status).toBe(400);
      expect(JSON.parse(repeated.text).detail).toMatch(/string, got an array/);
      expect(weighed).toHaveLength(1); // the weight function never sees an array
      expect((await get(app, '/?tenant=a')).status).toBe(200);
      expect((await request(app).get('/?tenant=a').set('Idempotency-Key', 'k'.repeat(300))).status).toBe(400);
      expect(logger.lines).toEqual([]);
    },
  },
];

/** The groups a MemoryStore has seen for one limiter, after the requests from `ips` (through X-Forwarded-For). */
async function groupsSeen(env: CaseEnv, label: string, ips: readonly string[], extra: Partial<Options> = {}): Promise<string[]> {
  const store = new MemoryStore({ clock: () => FROZEN_NOW });
  const name = env.name(label);
  // probationMs 0: each group is registered (in `seen`) on its first request.
  const app = env.h.app({ '/': { store, name, limit: 100, tuning: { probationMs: 0 }, ...extra } }, 'default', { trustProxy: true });
  for (const ip of ips) expect((await request(app).get('/').set('X-Forwarded-For', ip)).status).toBe(200);
  return [...(admissionState(store, name)?.seen.keys() ?? [])];
}

/** The default group, behind a proxy: IPv6 clients grouped by subnet, IPv4 (and IPv4-mapped) clients alone. */
const CLIENT_IP_CASES: readonly HttpCase[] = [
  {
    title: 'default group: IPv6 addresses are grouped by /56; IPv4 and IPv4-mapped clients are their own groups',
    async run(env) {
      const ips = [
        '2001:db8:1:100::1',
        '2001:db8:1:1ff:abcd::2',
        '2001:DB8:1:1aa::3',
        '2001:db8:1:200::1',
        '192.0.2.1',
        '192.0.2.2',
        '::ffff:192.0.2.3',
      ];
      expect(await groupsSeen(env, 'ipv6-56', ips)).toEqual([
        '2001:db8:1:100::/56',
        '2001:db8:1:200::/56',
        '192.0.2.1',
        '192.0.2.2',
        '::ffff:192.0.2.3',
      ]);
    },
  },
  {
    title: 'default group: ipv6Subnet 64 groups by /64; ipv6Subnet false gives each address its own group',
    async run(env) {
      const ips = ['2001:db8::1', '2001:db8::ffff:2', '2001:db8:0:1::1'];
      expect(await groupsSeen(env, 'ipv6-64', ips, { ipv6Subnet: 64 })).toEqual(['2001:db8::/64', '2001:db8:0:1::/64']);
      expect(await groupsSeen(env, 'ipv6-off', ips, { ipv6Subnet: false })).toEqual(ips);
    },
  },
];

export const CASES: readonly HttpCase[] = [
  {
    title: 'a class function puts the request in its class, and RateLimit-Policy names it (else the default class)',
    redis: true,
    async run(env) {
      const limiter = createLimiter(limiterOptions(env, 'classes', { limit: 4, tuning: { burst: 4, reserve: 1 }, classes: { vip: { share: 0.5 } } }));
      const app = env.h.app({ '/': { limiter, group: tenant, class: (group) => (group.startsWith('vip') ? 'vip' : undefined) } });
      const vip = await get(app, '/?tenant=vip-a');
      expect(vip.status).toBe(200);
      expect(vip.headers['ratelimit-policy']).toMatch(new RegExp(`^"${limiter.name}";q=\\d+;w=60;class="vip"$`));
      const anon = await get(app, '/?tenant=anon');
      expect(anon.headers['ratelimit-policy']).toMatch(/;class="default"$/);
    },
  },
  {
    title: 'allowed requests carry RateLimit-Policy and RateLimit (draft syntax)',
    redis: true,
    async run(env) {
      const limiter = createLimiter(limiterOptions(env, 'ok'));
      const app = env.h.app({ '/': { limiter, group: tenant } });
      const res = await get(app, '/?tenant=a');
      expect(res.status).toBe(200);
      expect(res.text).toBe('ok');
      expect(res.headers['ratelimit-policy']).toBe(`"${limiter.name}";q=3;w=60`);
      expect(res.headers['ratelimit']).toBe(`"${limiter.name}";r=2;t=60`);
      expect(res.headers['retry-after']).toBeUndefined();
    },
  },
  {
    title: 'over the limit: 429, Retry-After ≥ 1 whole seconds, headers, problem+json body',
    redis: true,
    async run(env) {
      const limiter = createLimiter(limiterOptions(env, 'deny'));
      const app = env.h.app({ '/': { limiter, group: tenant } });
      for (let i = 0; i < 3; i++) expect((await get(app, '/?tenant=a')).status).toBe(200);
      const res = await get(app, '/?tenant=a');
      expect(res.status).toBe(429);
      const retry = expectRetryAfter(res);
      expect(res.headers['ratelimit-policy']).toBe(`"${limiter.name}";q=3;w=60`);
      expect(res.headers['ratelimit']).toBe(`"${limiter.name}";r=0;t=${retry}`);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const body = JSON.parse(res.text) as Record<string, unknown>;
      expect(body).toMatchObject({
        type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
        title: 'Too Many Requests',
        status: 429,
        'violated-policies': [limiter.name],
      });
      expect(body.detail).toBe(`Too many requests; retry in ${retry} s.`);
      // The 429 body comes from a template: it must be exactly what JSON.stringify(problem) gives.
      expect(res.text).toBe(
        JSON.stringify({
          type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
          title: 'Too Many Requests',
          status: 429,
          detail: `Too many requests; retry in ${retry} s.`,
          'violated-policies': [limiter.name],
        }),
      );
    },
  },
  {
    title: "headers: 'legacy' sends X-RateLimit-* with an epoch-seconds reset; false sends only Retry-After",
    async run(env) {
      const legacy = createLimiter(limiterOptions(env, 'legacy', { limit: 1, tuning: { burst: 1 } }));
      const none = createLimiter(limiterOptions(env, 'none', { limit: 1, tuning: { burst: 1 } }));
      const app = env.h.app({
        '/legacy': { limiter: legacy, group: tenant, headers: 'legacy' },
        '/none': { limiter: none, group: tenant, headers: false },
      });
      const ok = await get(app, '/legacy?tenant=a');
      expect(ok.status).toBe(200);
      expect(ok.headers['x-ratelimit-limit']).toBe('1');
      expect(ok.headers['x-ratelimit-remaining']).toBe('0');
      expect(Number(ok.headers['x-ratelimit-reset'])).toBe(Math.ceil((FROZEN_NOW + 60_000) / 1000));
      expect(ok.headers['ratelimit']).toBeUndefined();
      expect((await get(app, '/legacy?tenant=a')).headers['retry-after']).toBeDefined();
      const first = await get(app, '/none?tenant=a');
      expect(first.status).toBe(200);
      expect(Object.keys(first.headers).filter((k) => /ratelimit|retry-after/.test(k))).toEqual([]);
      const denied = await get(app, '/none?tenant=a');
      expect(denied.status).toBe(429);
      expectRetryAfter(denied);
      expect(denied.headers['ratelimit']).toBeUndefined();
    },
  },
  {
    title: 'two limiters on two routes keep separate budgets',
    redis: true,
    async run(env) {
      const a = createLimiter(limiterOptions(env, 'route-a', { limit: 1, tuning: { burst: 1 } }));
      const b = createLimiter(limiterOptions(env, 'route-b', { limit: 2, tuning: { burst: 2 } }));
      const app = env.h.app({ '/a': { limiter: a, group: tenant }, '/b': { limiter: b, group: tenant } });
      expect((await get(app, '/a?tenant=t')).status).toBe(200);
      expect((await get(app, '/a?tenant=t')).status).toBe(429);
      const res = await get(app, '/b?tenant=t');
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit']).toBe(`"${b.name}";r=1;t=60`);
      expect((await get(app, '/b?tenant=t')).status).toBe(200);
      expect((await get(app, '/b?tenant=t')).status).toBe(429);
    },
  },
  {
    title: 'skip: skipped requests are not counted and get no headers',
    async run(env) {
      const limiter = createLimiter(limiterOptions(env, 'skip', { limit: 1, tuning: { burst: 1 } }));
      const app = env.h.app({ '/': { limiter, group: tenant, skip: (c) => c.query.internal === '1' } });
      for (let i = 0; i < 5; i++) {
        const res = await get(app, '/?tenant=a&internal=1');
        expect(res.status).toBe(200);
        expect(res.headers['ratelimit']).toBeUndefined();
      }
      expect((await get(app, '/?tenant=a')).status).toBe(200);
      expect((await get(app, '/?tenant=a')).status).toBe(429);
    },
  },
  {
    title: "missingGroup 'shared': requests without a group share one budget, warned once",
    async run(env) {
      const logger = recordingLogger();
      const app = env.h.app({ '/': { ...limiterOptions(env, 'shared', { limit: 2, tuning: { burst: 2 }, logger }), group: tenant } });
      expect((await get(app, '/')).status).toBe(200);
      expect((await get(app, '/?tenant=')).status).toBe(200);
      expect((await get(app, '/')).status).toBe(429);
      expect(logger.lines.filter((l) => l.startsWith('WRN_BL_MISSING_GROUP'))).toHaveLength(1);
      // A request cannot name the shared group (nor the metrics' rest): request data, a 400.
      for (const reserved of ['(missing)', '*other*']) {
        const res = await get(app, `/?tenant=${encodeURIComponent(reserved)}`);
        expect({ reserved, status: res.status, detail: JSON.parse(res.text).detail }).toEqual({
          reserved,
          status: 400,
          detail: expect.stringContaining('names a group shared between ids'),
        });
      }
    },
  },
  {
    title: "missingGroup 'reject': 400 problem+json, nothing counted",
    async run(env) {
      const limiter = createLimiter(limiterOptions(env, 'reject', { limit: 1, tuning: { burst: 1 } }));
      const app = env.h.app({ '/': { limiter, group: tenant, missingGroup: 'reject' } });
      const res = await get(app, '/');
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.text)).toMatchObject({ status: 400, title: 'Bad Request' });
      expect((await get(app, '/?tenant=a')).status).toBe(200);
    },
  },
  {
    title: 'hostile group ids (10 KB, repeated, unicode, braces, colons) are answered without touching other tenants',
    redis: true,
    async run(env) {
      const limiter = createLimiter(limiterOptions(env, 'hostile', { limit: 100, tuning: { burst: 100 } }));
      const app = env.h.app({ '/': { limiter, group: tenant } });
      const tooLong = await get(app, `/?tenant=${'x'.repeat(10_240)}`);
      expect(tooLong.status).toBe(400);
      expect(JSON.parse(tooLong.text).detail).toContain('bytes');
      // 43 × 3 bytes = 129 > 128: counted in UTF-8 bytes, not characters.
      expect((await get(app, `/?tenant=${encodeURIComponent('한'.repeat(43))}`)).status).toBe(400);
      expect((await get(app, '/?tenant=a&tenant=b')).status).toBe(400);
      for (const id of ['테넌트', '{', '}', ':', '{bl:other}:meta', '\u0000', 'é'.repeat(64)]) {
        const res = await get(app, `/?tenant=${encodeURIComponent(id)}`);
        expect([id, res.status]).toEqual([id, 200]);
      }
      const good = await get(app, '/?tenant=good');
      expect(good.status).toBe(200);
      expect(good.headers['ratelimit']).toMatch(/;r=[1-9][0-9]*;t=/);
    },
  },
  {
    title: "onLimit 'next': the 429 reaches the app's error handler with headers on the error and the response",
    async run(env) {
      const limiter = createLimiter(limiterOptions(env, 'next', { limit: 1, tuning: { burst: 1 } }));
      const app = env.h.app({ '/': { limiter, group: tenant, onLimit: 'next' } }, 'app');
      expect((await get(app, '/?tenant=a')).status).toBe(200);
      const res = await get(app, '/?tenant=a');
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({ handled: true, status: 429, hasDecision: true });
      const retry = expectRetryAfter(res);
      expect(res.body.errHeaders).toMatchObject({ 'Retry-After': String(retry), RateLimit: `"${limiter.name}";r=0;t=${retry}` });
      expect(res.headers['ratelimit']).toBe(`"${limiter.name}";r=0;t=${retry}`);
    },
  },
  {
    title: "onLimit 'next' with the framework's default error handler still sends the headers",
    async run(env) {
      const limiter = createLimiter(limiterOptions(env, 'next-default', { limit: 1, tuning: { burst: 1 } }));
      const app = env.h.app({ '/': { limiter, group: tenant, onLimit: 'next' } }, 'default');
      expect((await get(app, '/?tenant=a')).status).toBe(200);
      const res = await get(app, '/?tenant=a');
      expect(res.status).toBe(429);
      expectRetryAfter(res);
      expect(res.headers['ratelimit-policy']).toBe(`"${limiter.name}";q=1;w=60`);
    },
  },
  {
    title: 'cost and weight functions are applied per request',
    async run(env) {
      const limiter = createLimiter(limiterOptions(env, 'cost', { limit: 4, tuning: { burst: 4 } }));
      const weighed: string[] = [];
      const weight = (group: string): number => {
        weighed.push(group);
        return 2;
      };
      const app = env.h.app({ '/': { limiter, group: tenant, cost: (c) => Number(c.query.cost ?? 1), weight } });
      // Two of four units used; the bucket refills one unit per window (strict, burst = limit).
      expect((await get(app, '/?tenant=a&cost=2')).headers['ratelimit']).toBe(`"${limiter.name}";r=2;t=120`);
      expect((await get(app, '/?tenant=a&cost=2')).status).toBe(200);
      expect((await get(app, '/?tenant=a&cost=1')).status).toBe(429);
      expect(weighed).toEqual(['a', 'a', 'a']);
    },
  },
  ...MISCONFIGURED_CASES,
  ...CLIENT_IP_CASES,
  {
    title: "store outage, onStoreError 'allow': requests pass, warned once, no quota headers",
    async run(env) {
      const logger = recordingLogger();
      const app = env.h.app({ '/': { store: throwingStore, name: env.name('allow'), limit: 1, onStoreError: 'allow', logger, group: tenant } });
      for (let i = 0; i < 3; i++) {
        const res = await get(app, '/?tenant=a');
        expect(res.status).toBe(200);
        expect(res.headers['ratelimit']).toBeUndefined();
      }
      expect(logger.lines).toHaveLength(1);
      expect(logger.lines[0]).toMatch(/^WRN_BL_STORE_FAIL_OPEN/);
    },
  },
  {
    title: "store outage, onStoreError 'deny' on a hanging store: 503 after timeoutMs, Retry-After, problem+json",
    async run(env) {
      const logger = recordingLogger();
      const app = env.h.app({
        '/': { store: hangingStore, name: env.name('deny'), limit: 10, onStoreError: 'deny', timeoutMs: 50, logger, group: tenant },
      });
      for (let i = 0; i < 2; i++) {
        const res = await get(app, '/?tenant=a');
        expect(res.status).toBe(503);
        expectRetryAfter(res);
        expect(res.headers['ratelimit']).toBeUndefined();
        expect(JSON.parse(res.text)).toMatchObject({
          type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
          status: 503,
        });
      }
      expect(logger.lines.filter((l) => l.startsWith('WRN_BL_STORE_FAIL_CLOSED'))).toHaveLength(1);
    },
  },
  {
    title: "store outage, onStoreError 'local': an in-process limiter of limit / instances still limits",
    async run(env) {
      const logger = recordingLogger();
      const clock = new ManualScheduler();
      const limiter = createLimiter(
        withScheduler(
          { store: throwingStore, name: env.name('local'), limit: 4, windowMs: 1000, instances: 2, onStoreError: 'local', timeoutMs: 40, logger },
          clock,
        ),
      );
      const app = env.h.app({ '/': { limiter, group: tenant } });
      // The failure that opens the breaker: the fallback admits nothing for timeoutMs + windowMs (one limit with the store).
      const first = await get(app, '/?tenant=a');
      expect(first.status).toBe(503);
      expectRetryAfter(first);
      await clock.advance(1040);
      expect((await get(app, '/?tenant=a')).status).toBe(200);
      const second = await get(app, '/?tenant=b');
      expect(second.status).toBe(200);
      expect(second.headers['ratelimit']).toMatch(/;r=0;t=/);
      const third = await get(app, '/?tenant=c');
      expect(third.status).toBe(429);
      expectRetryAfter(third);
      expect(logger.lines.filter((l) => l.startsWith('WRN_BL_STORE_FAIL_LOCAL'))).toHaveLength(1);
    },
  },
];

/** The frozen store clock every case runs on. */
export const FROZEN_NOW = 1_800_000_000_000;
