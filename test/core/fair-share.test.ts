/** The TypeScript core directly: repeated decisions inside one open/close, the vt field, bounded state. */
import { closeFairShare, fairShareConfig, openFairShare } from '../../src/core/fair-share';
import { createFairShareState } from '../../src/core/fair-share-state';
import { FS_TRIM_PAGE } from '../../src/core/constants.generated';
import { decide } from '../../src/core/fair-share-decide';
import type { LimiterSpec } from '../../src/types';
import { SPEC_DEFAULTS } from '../helpers/spec';

const spec: LimiterSpec = {
  ...SPEC_DEFAULTS,
  name: 'c',
  limit: 100,
  windowMs: 1000,
  burst: 10,
  reserve: 2,
  idleMs: 2000,
  epochMs: 250,
  sustained: false,
};
const T0 = 1_700_000_000_000_000;

test('several decisions in one open/close equal the same decisions one call each', () => {
  const cfg = fairShareConfig(spec);
  const batched = createFairShareState();
  const fs = openFairShare(batched, cfg, T0);
  const inOne = ['a', 'b', 'a', 'a', 'c', 'a'].map((g) => decide(fs, g, 1, 2, true));
  closeFairShare(fs);

  const single = createFairShareState();
  const oneByOne = ['a', 'b', 'a', 'a', 'c', 'a'].map((g) => {
    const f = openFairShare(single, cfg, T0);
    const r = decide(f, g, 1, 2, true);
    closeFairShare(f);
    return r;
  });
  expect(inOne).toEqual(oneByOne);
  expect(batched.meta).toEqual(single.meta);
});

test('the dispatcher virtual time is kept across calls; promise=false leaves retry slots alone', () => {
  const cfg = fairShareConfig(spec);
  const state = createFairShareState();
  let fs = openFairShare(state, cfg, T0);
  fs.meta.vt = 42;
  while (decide(fs, 'a', 1, 1, false).allowed);
  const promiseBefore = state.groups.get('a')!.promise;
  decide(fs, 'a', 1, 1, false);
  expect(state.groups.get('a')!.promise).toBe(promiseBefore);
  closeFairShare(fs);
  fs = openFairShare(state, cfg, T0 + 1000);
  expect(fs.meta.vt).toBe(42);
});

test('an abandoned limiter is dropped once idle + window + epoch have passed, like an expired key', () => {
  const cfg = fairShareConfig(spec);
  const state = createFairShareState();
  const fs = openFairShare(state, cfg, T0);
  decide(fs, 'a', 1, 1, true);
  closeFairShare(fs);
  const later = openFairShare(state, cfg, T0 + (spec.idleMs + spec.windowMs + spec.epochMs) * 1000);
  expect(later.meta.gn).toBe(0);
  expect(state.groups.size).toBe(0);
});

test('meta lost alone (as after an eviction): the groups are forgotten with it, shares stay exact', () => {
  const cfg = fairShareConfig(spec);
  const state = createFairShareState();
  let fs = openFairShare(state, cfg, T0);
  decide(fs, 'a', 1, 1, true);
  expect(decide(fs, 'b', 3, 1, true).guaranteed).toBe(75);
  closeFairShare(fs);
  state.meta = undefined;
  fs = openFairShare(state, cfg, T0 + 1000);
  const a = decide(fs, 'a', 1, 1, true);
  expect(a).toMatchObject({ guaranteed: 100, active: 1 });
  expect(decide(fs, 'b', 3, 1, true)).toMatchObject({ guaranteed: 75, active: 2 });
  closeFairShare(fs);
});

test('after a backward clock step the state expires on the clock as read, like a Redis TTL on real time', () => {
  const cfg = fairShareConfig(spec);
  const state = createFairShareState();
  let fs = openFairShare(state, cfg, T0);
  decide(fs, 'a', 1, 1, true);
  closeFairShare(fs);
  const back = T0 - 3_600_000_000;
  fs = openFairShare(state, cfg, back); // time stands still at T0 ...
  expect(fs.nowUs).toBe(T0);
  decide(fs, 'a', 1, 1, true);
  closeFairShare(fs);
  expect(state.expiresAtMs).toBe(back / 1000 + cfg.ttlMs); // ... but the expiry was renewed from the clock
  fs = openFairShare(state, cfg, back + cfg.ttlMs * 1000 + 999);
  expect(fs.meta.gn).toBe(1); // like a Redis key (now > when, in ms): still there in the TTL's last ms ...
  fs = openFairShare(state, cfg, back + cfg.ttlMs * 1000 + 1000); // (not closed: the expiry was not renewed)
  expect(fs.meta.gn).toBe(0); // ... gone once the clock's ms is past it
});

test('a group with 1/10 of Σw takes a clump of FS_GREEN_MIN requests green (its green bucket was 1 token)', () => {
  const cfg = fairShareConfig(spec);
  const state = createFairShareState();
  let fs = openFairShare(state, cfg, T0);
  for (let i = 0; i < 9; i++) decide(fs, `other-${i}`, 1, 1, true);
  closeFairShare(fs);
  // a second later every bucket is full again; the small group sends 4 requests at one instant
  fs = openFairShare(state, cfg, T0 + 1_000_000);
  const colours = [0, 1, 2, 3].map(() => decide(fs, 'light', 1, 1, true).colour);
  closeFairShare(fs);
  expect(colours).toEqual([0, 0, 0, 0]);
});

test('a trim page takes the idle groups in Redis ZSET order: by last-seen ms, then by group bytes', () => {
  const cfg = fairShareConfig(spec);
  const state = createFairShareState();
  let fs = openFairShare(state, cfg, T0);
  for (let i = 0; i <= FS_TRIM_PAGE; i++) decide(fs, `c${i}`, 1, 1, false); // one ms: all tie on last-seen
  closeFairShare(fs);
  fs = openFairShare(state, cfg, T0 + spec.idleMs * 1000); // one page of 100 trimmed, one group left
  // ZRANGEBYSCORE breaks the tie by member bytes: c0, c1, c10, c100, c11, …, c98, c99 — c99 is the one left
  expect([...state.groups.keys()]).toEqual(['c99']);
  expect(fs.meta.gn).toBe(1);
});
