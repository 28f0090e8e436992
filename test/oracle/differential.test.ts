/**
 * Differential: the scripts in lua/ (the specification), as the package ships them, run in the Lua oracle through
 * RedisStore and RedisQueue, against their TypeScript port (MemoryStore, MemoryQueue): the same operations on the
 * same injected clock, with idle gaps long enough for trimming and key expiry, must look the same to a caller.
 * ORACLE_RUNS=<n> runs each property n times (longer local runs); the default keeps `npm test` quick.
 * ORACLE_SEED=<seed> (and ORACLE_PATH=<path>) replays the run a failure printed.
 */
import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import { LUA_DIR } from '../../src/redis/script-loader';
import { LUA_SOURCES } from '../../src/redis/lua-sources.generated';
import { adaptiveSpecArb, runBoth, specArb, timedStepsArb, ttlOf, type Setup, type Timed } from './differential';
import { OPERATIONS, stepOf, type OperationName } from './operations';
import { SPEC_DEFAULTS } from '../helpers/spec';
import { resolveRules } from '../../src/limiter/rule-options';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { shippedSources } = require('../../scripts/build-lua') as { shippedSources: (edit: (lua: string) => string) => Map<string, string> };

const RUNS = Number(process.env.ORACLE_RUNS ?? 30);
const REPLAY = process.env.ORACLE_SEED === undefined ? {} : { seed: Number(process.env.ORACLE_SEED), path: process.env.ORACLE_PATH };
/**
 * A property's settings under a test timeout of `timeoutMs`: a failure's shrinking stops a minute before it, so the
 * failure is reported with its seed and path (shrunk as far as time allowed) rather than as a timeout.
 */
const settings = (timeoutMs: number) => ({ numRuns: RUNS, interruptAfterTimeLimit: timeoutMs - 60_000, ...REPLAY });
/** Every operation but report (adaptive limiters only: their own property below, so the others' seeds draw as before). */
/** Overrides have a property of their own: in ALL they would change the steps every other property's fixed seed draws. */
const OVERRIDES: OperationName[] = ['setOverride', 'getOverride', 'deleteOverride', 'listOverrides'];
const ALL: OperationName[] = (Object.keys(OPERATIONS) as OperationName[]).filter((name) => name !== 'report' && !OVERRIDES.includes(name));

let expiredKeys = 0;
/** The scripts the properties ran, by file ('admit-defer-many'). */
const scriptsRun = new Set<string>();
const property = (setups: fc.Arbitrary<Setup>, maxSteps = 60, specs = specArb, names: readonly OperationName[] = ALL) =>
  fc.asyncProperty(
    setups,
    specs.chain((spec) => fc.tuple(fc.constant(spec), timedStepsArb(spec, names, maxSteps))),
    async (setup, [spec, steps]) => {
      const report = await runBoth(spec, steps, setup);
      expiredKeys += report.expiredKeys;
      for (const command of report.commands) scriptsRun.add(command.replace(/^bl_(.*)_v\d+_[0-9a-f]{8}$/, '$1').replace(/_/g, '-'));
    },
  );

test('the store: admit, admit-defer, their batches and the whole queue match the Lua scripts step by step', async () => {
  expiredKeys = 0;
  await fc.assert(property(fc.constant({})), settings(300_000));
  expect(expiredKeys).toBeGreaterThan(0); // the long gaps did outlive the limiter's keys
}, 300_000);

test('the queue on its own, with a small dead-letter cap: enqueue, dispatch, claim, acks, reclaim, dead letters', async () => {
  await fc.assert(property(fc.integer({ min: 1, max: 3 }).map((queueOnlyMaxDead) => ({ queueOnlyMaxDead }))), settings(300_000));
}, 300_000);

test('with an adaptive limit: reports (report.lua) between admissions, batches and the queue match step by step', async () => {
  await fc.assert(property(fc.constant({}), 60, adaptiveSpecArb, [...ALL, 'report']), settings(300_000));
}, 300_000);

test('with overrides: set, get, delete and list between admissions (every admission script reads them), batches and the queue match step by step', async () => {
  await fc.assert(property(fc.constant({}), 60, specArb, [...ALL, ...OVERRIDES]), settings(600_000));
}, 600_000);

test('every script in lua/ ran in the properties above (a new script needs an entry in ./operations.ts)', () => {
  const scripts = readdirSync(LUA_DIR)
    .filter((f) => f.endsWith('.lua'))
    .map((f) => f.replace(/\.lua$/, ''));
  expect(scripts.filter((s) => !scriptsRun.has(s))).toEqual([]);
});

test('an expired completed job keeps its idempotency key until a trim (every 8th completion) in both stores', async () => {
  const spec = { ...SPEC_DEFAULTS, name: 'oracle', limit: 100, windowMs: 1000, burst: 10, reserve: 1, idleMs: 1000, epochMs: 100, sustained: false };
  const job = (idempotencyKey?: string) =>
    stepOf('enqueue', {
      group: 'g0',
      weight: 1,
      cost: 1,
      type: 't',
      payload: '{}',
      maxBacklog: 10,
      delayMs: 0,
      maxDeferMs: 1e9,
      idempotencyKey,
      settle: false,
    });
  const steps: Timed[] = [
    { gapMs: 0, step: job('k1') },
    { gapMs: 0, step: job() },
    { gapMs: 0, step: stepOf('dispatch', { readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 }) },
    { gapMs: 0, step: stepOf('claim', { leaseMs: 1000, max: 2 }) },
    { gapMs: 0, step: stepOf('complete', { at: 0, which: 'latest', result: undefined, keepMs: 1 }) },
    { gapMs: 10, step: stepOf('complete', { at: 1, which: 'latest', result: undefined, keepMs: 1 }) }, // the 2nd claim's: no trim
    { gapMs: 0, step: stepOf('getJob', 0) },
    { gapMs: 0, step: job('k1') },
  ];
  const { results } = await runBoth(spec, steps);
  expect(results.slice(4, 8)).toEqual([true, true, null, { status: 'duplicate', id: expect.any(String), runAt: expect.any(Number) }]);
});

test('a naming asked for after the limiter lapsed finds no description in either store (the hash expired with them)', async () => {
  // ttl = idleMs + window + epoch = 2.2 s; a retried naming waits RETRY_MS (5 s)
  const spec = { ...SPEC_DEFAULTS, name: 'oracle', limit: 100, windowMs: 1000, burst: 10, reserve: 2, idleMs: 1000, epochMs: 200, sustained: false };
  const input = { group: 'g0', weight: 1, cost: 1, plan: undefined };
  const steps: Timed[] = [
    // the other process checks first: this one sees its fingerprint before it is described, and describes itself
    {
      gapMs: 0,
      step: stepOf('drift', [
        { fromOther: true, dtMs: 0, input },
        { fromOther: false, dtMs: 0, input },
      ]),
    },
    // the other sees this one's and publishes its own description
    { gapMs: 10, step: stepOf('drift', [{ fromOther: true, dtMs: 0, input }]) },
    // nothing sent past the TTL: a peek asks this process's naming again, on a limiter without state
    { gapMs: 6000, step: stepOf('peek', { group: 'g0', weight: 1 }) },
    { gapMs: 0, step: stepOf('drift', [{ fromOther: true, dtMs: 0, input }]) },
  ];
  const { results } = await runBoth(spec, steps);
  const mismatches = (r: unknown) => (r as unknown[]).slice(-2);
  expect(mismatches(results[1])).toEqual([
    { options: [], since: expect.any(Number) },
    { options: ['limit: this process 101, another 100'], since: expect.any(Number) },
  ]);
  expect(mismatches(results[3])).toEqual([
    { options: [], since: expect.any(Number) },
    { options: ['limit: this process 101, another 100'], since: expect.any(Number) },
  ]);
});

test('a limiter a peek saw lapsed is gone in both stores, even for a call whose clock then stepped back behind the expiry', async () => {
  // idleMs 22 trims an idle group at once; the keys live ttlOf(spec) after the first check
  const spec = {
    ...SPEC_DEFAULTS,
    name: 'oracle',
    limit: 6,
    windowMs: 56,
    burst: 1,
    reserve: 0,
    idleMs: 22,
    epochMs: 997,
    maxGroups: 3,
    probationMs: 298,
    sustained: true,
    rules: resolveRules([
      { name: 'r0', limit: 1, windowMs: 2892, algorithm: 'sliding-window' },
      { name: 'r1', limit: 3, windowMs: 2157, algorithm: 'token-bucket' },
    ]),
  };
  const input = (group: string) => ({ group, weight: 1, cost: 1, plan: undefined });
  const steps: Timed[] = [
    { gapMs: 0, step: stepOf('admitMany', [input('g0'), input('g0')]) },
    // past the TTL: Redis drops the keys when the peek reads them
    { gapMs: ttlOf(spec) + 1, step: stepOf('peek', { group: 'g0', weight: 1 }) },
    // the clock steps back 6 ms, behind the expiry: the limiter is fresh (its first epoch: g2 registers at once)
    { gapMs: -6, step: stepOf('admitMany', [input('g0'), input('g2')]) },
  ];
  const { results } = await runBoth(spec, steps);
  expect((results[2] as Array<{ activeGroups: number }>).map((d) => d.activeGroups)).toEqual([1, 2]);
});

test('a claim leaves the jobs of a refused group at the head of ready, in their order, in both stores', async () => {
  // g0 (weight 1 of 10) spends its 5 green units and its amber 3 more (docs/algorithm.md §2.4), then is refused
  // with 2 left, so its last job stays while g1's is admitted; the next claim must start g0's older one.
  const spec = {
    ...SPEC_DEFAULTS,
    name: 'oracle',
    limit: 100,
    windowMs: 1000,
    burst: 10,
    reserve: 5,
    idleMs: 60_000,
    epochMs: 100_000,
    sustained: false,
  };
  const job = (group: string, weight: number) =>
    stepOf('enqueue', {
      group,
      weight,
      cost: 1,
      type: 't',
      payload: '{}',
      maxBacklog: 10,
      delayMs: 0,
      maxDeferMs: 1e9,
      settle: false,
    });
  const dispatch = stepOf('dispatch', { readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
  const steps: Timed[] = [
    // amber: a new group is within its share, down to a quarter of the reserve max(5, ⌊10/2⌋)
    ...Array.from({ length: 9 }, () => ({ gapMs: 0, step: job('g0', 1) })),
    { gapMs: 0, step: dispatch },
    { gapMs: 0, step: job('g1', 9) },
    { gapMs: 0, step: dispatch },
    { gapMs: 0, step: stepOf('claim', { leaseMs: 100_000, max: 10 }) },
    { gapMs: 1000, step: stepOf('claim', { leaseMs: 100_000, max: 1 }) },
  ];
  const { results } = await runBoth(spec, steps);
  const ids = (r: unknown) => (r as { claimed: Array<{ id: string }> }).claimed.map((c) => c.id);
  const enqueued = (i: number) => (results[i] as { id: string }).id;
  expect(ids(results[12]).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 10].map(enqueued).sort()); // g0's first eight and g1's
  expect(ids(results[13])).toEqual([enqueued(8)]);
});

/**
 * The oracle's rewrite that runs each script as the build ships it after `edit` of its source (includes expanded):
 * the build writes a constant in where it is read, so a change to one is made before the build, not to the text
 * shipped. `applied`: how many script compilations it changed.
 */
function rebuiltWith(edit: (lua: string) => string): { rewrite: (lua: string) => string; applied: () => number } {
  const fileOf = new Map(Object.entries(LUA_SOURCES).map(([file, lua]) => [lua, file]));
  const changed = new Map([...shippedSources(edit)].filter(([file, lua]) => lua !== LUA_SOURCES[file]));
  let applied = 0;
  const rewrite = (lua: string): string => {
    const next = changed.get(fileOf.get(lua) ?? '');
    if (next === undefined) return lua;
    applied += 1;
    return next;
  };
  return { rewrite, applied: () => applied };
}

describe('the oracle notices a one-constant change in a script', () => {
  const mutations: Array<[string, string, string]> = [
    ['the smallest green burst (fair-share.lua)', 'local FS_GREEN_MIN = 4', 'local FS_GREEN_MIN = 3'],
    ['the attempts cap (fail.lua)', 'if r.attempts >= cap then', 'if r.attempts > cap then'],
    ['the sliding-window sub-windows (rules.lua)', 'local RL_SLOTS = 10', 'local RL_SLOTS = 9'],
    ["a sliding window's newest sub-window dropped when the window moves (rules.lua)", 'past[k] = v[o + 2]', 'past[k] = 0'],
    ["a new fixed-window rule clearing the next rule's key (rules.lua)", 'v[o], v[o + 1] = 0, 0', 'v[o], v[o + 1], v[o + 2] = 0, 0, 0'],
    [
      "a sliding window's reset from its newest sub-window only (rules.lua)",
      'if v[o + 2] > 0 then return RL_RING end',
      'if true then return RL_RING end',
    ],
    ['the expired leases swept per check (concurrency.lua)', 'local CC_SWEEP = 10', 'local CC_SWEEP = 9'],
    ['the concurrency cap (concurrency.lua)', 'held >= cap)', 'held > cap)'],
    [
      'a rule denial spending in the global bucket (fair-share.lua)',
      'retry, hint, policy = rwait, rwait, rbad',
      'retry, hint, policy = rwait, rwait, rbad; meta.gt = meta.gt - c',
    ],
    [
      "the plans' longest rule span in the keys' TTL (fair-share.lua)",
      "if plans_span_ms ~= '' and tonumber(plans_span_ms) > span_ms then",
      "if plans_span_ms ~= '' and tonumber(plans_span_ms) < span_ms then",
    ],
    ['a reset that leaves the group in the active count (fair-share-groups.lua)', 'math.max(0, gn - 1)', 'gn'],
    ['a peek that spends in the rules (fair-share.lua)', 'if allowed == 1 and rules and not fs.peek then', 'if allowed == 1 and rules then'],
    [
      "a claim deciding a job of a plan under the limiter's rules (claim.lua)",
      'local rules = plan and claim_rules(plans, plan)',
      'local rules = nil',
    ],
    ['a class meter that never pays for what its guarantee admitted (fair-share-class.lua)', 'local ct = fs.cls.ct - c', 'local ct = fs.cls.ct'],
    ['a lending floor no higher than a guaranteed borrower at its cap (fair-share-class.lua)', 'local f = (rho + 3 * b) / 4', 'local f = at_cap'],
  ];
  test.each(mutations)(
    '%s',
    async (_name, from, to) => {
      const { rewrite, applied } = rebuiltWith((lua) => lua.replace(from, to));
      const result = await fc.check(property(fc.constant({ rewrite })), { numRuns: 200, seed: 2, endOnFailure: true });
      expect(applied()).toBeGreaterThan(0);
      expect(result.failed).toBe(true);
      expect(String(result.errorInstance)).toMatch(/lua .*\n {2}memory /);
    },
    // a mutation the runs meet late takes ~30 s alone, several times that next to the other suites
    300_000,
  );
});

describe("the oracle notices an override's setting ignored", () => {
  const mutations: Array<[string, string, string]> = [
    ["an override's weight (the admission scripts)", 'if ov.w > 0 then weight = ov.w end', 'if false then weight = ov.w end'],
    ["an override's rules (the admission scripts)", 'rules = ov.rules', 'rules = nil'],
    ['a block (the admission scripts)', 'if ov and ov.b == 1 then', 'if false then'],
    ["an override's expiry (overrides.lua)", 'if expires > 0 and expires <= fs.now_ms then return false end', 'if false then return false end'],
  ];
  test.each(mutations)(
    '%s',
    async (_name, from, to) => {
      let applied = 0;
      const rewrite = (lua: string): string => {
        if (!lua.includes(from)) return lua;
        applied += 1;
        return lua.split(from).join(to);
      };
      const result = await fc.check(property(fc.constant({ rewrite }), 60, specArb, [...ALL, ...OVERRIDES]), {
        numRuns: 200,
        seed: 2,
        endOnFailure: true,
      });
      expect(applied).toBeGreaterThan(0);
      expect(result.failed).toBe(true);
      expect(String(result.errorInstance)).toMatch(/lua .*\n {2}memory /);
    },
    300_000,
  );
});
