/**
 * The fault tests' harness: processes started and killed by pid (busy CPU loops, redis-server stalls), a
 * burst of deferrable checks whose every answer is recorded, and the tally of what Redis holds afterwards
 * against what each request was told. Counts, not speeds: a slow machine changes how many calls fail, never
 * what the tally must be.
 *
 * The tally (issue 19):
 * - orphans: jobs written for requests answered 429 or allowed live (the client was told nothing was queued);
 * - lost: requests answered 202 (a job) whose job is not in Redis;
 * - twice: requests with more than one job (a retry that did not find its first job);
 * - mostPerWindow: the most requests let through in any window of the limiter's clock (the decisions' `at`, store and fallback);
 * - slowestMs: the slowest answer (reported, never asserted: speed is measured in bench/).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import type Redis from 'ioredis';
import type { Limiter } from '../../src/limiter/limiter';
import type { Decision } from '../../src/types';
import { limiterKeys } from '../../src/redis/keys';
import { decodeRecord } from '../../src/queue/job-record';
import { killChild } from '../helpers/redis-server';

/**
 * `n` busy loops in their own processes, at the lowest priority: they take every idle cycle of the machine,
 * yet leave the other test files running beside this one (jest's other worker) their share. What starves the
 * client for certain is `starveEventLoop`; the loops add the load a busy host puts on Redis and the client.
 */
export function busyLoops(n: number): { readonly pids: number[]; stop(): Promise<void> } {
  const children: ChildProcess[] = Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  for (const child of children) setPriority(child.pid!, 19);
  return {
    pids: children.map((c) => c.pid!),
    stop: async () => {
      await Promise.all(children.map((c) => killChild(c, 'SIGKILL')));
    },
  };
}

/** Blocks this process's event loop: timers that fall due meanwhile fire before any reply is read (a starved client). */
export function starveEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: the point is that nothing else runs
  }
}

export type AnswerKind = 'allowed' | 'deferred' | 'refused' | 'unknown';

export interface Answer {
  readonly i: number;
  readonly kind: AnswerKind;
  readonly decision: Decision;
  readonly ms: number;
  /** When it was answered (performance.now()). */
  readonly at: number;
}

/** 202 (a job), allowed live, 503 with a key to retry with (outcome unknown), or refused with nothing queued. */
export function kindOf(d: Decision): AnswerKind {
  if (d.allowed) return 'allowed';
  if (d.job !== undefined) return 'deferred';
  if (d.reason === 'store-error' && d.idempotencyKey !== undefined) return 'unknown';
  return 'refused';
}

export interface BurstRequest {
  readonly i: number;
  readonly group: string;
  /** The client's own key; undefined: the limiter generates one. */
  readonly key?: string;
}

/** Sends every request's deferrable check at once (payload `{ i }`); `during` runs right after they are sent. */
export async function burst(limiter: Limiter, requests: readonly BurstRequest[], during?: () => void): Promise<Answer[]> {
  const pending = requests.map(({ i, group, key }) => {
    const started = performance.now();
    return limiter
      .check(group, { defer: { type: 'fault', payload: { i }, ...(key === undefined ? {} : { idempotencyKey: key }) } })
      .then((decision): Answer => {
        const at = performance.now();
        return { i, kind: kindOf(decision), decision, ms: at - started, at };
      });
  });
  during?.();
  return Promise.all(pending);
}

/**
 * What a client told 503 + Idempotency-Key does: once the store answers again (health 'up'), it retries with
 * that key, until no answer is left unknown (at most `rounds` times).
 */
export async function retryUnknown(limiter: Limiter, answers: readonly Answer[], groupOf: (i: number) => string, rounds = 10): Promise<Answer[]> {
  let current = [...answers];
  for (let round = 0; round < rounds && current.some((a) => a.kind === 'unknown'); round++) {
    await until('the store answers again', async () => (await limiter.health()).status === 'up');
    current = await Promise.all(
      current.map(async (a) => {
        if (a.kind !== 'unknown') return a;
        const started = performance.now();
        const decision = await limiter.check(groupOf(a.i), {
          defer: { type: 'fault', payload: { i: a.i }, idempotencyKey: a.decision.idempotencyKey! },
        });
        const at = performance.now();
        return { i: a.i, kind: kindOf(decision), decision, ms: at - started, at };
      }),
    );
  }
  return current;
}

/** Jobs in Redis by the request (payload `i`) they carry: every record in the limiter's jobs hash (a Redis or a Cluster client). */
export async function jobsByRequest(client: Pick<Redis, 'hvals'>, name: string, prefix = 'bl'): Promise<Map<number, string[]>> {
  const records = await client.hvals(limiterKeys(prefix, name).jobs);
  const jobs = new Map<number, string[]>();
  for (const raw of records) {
    const record = decodeRecord(raw);
    if (record.type !== 'fault') continue;
    const { i } = JSON.parse(record.payload) as { i: number };
    jobs.set(i, [...(jobs.get(i) ?? []), record.id]);
  }
  return jobs;
}

export interface Tally {
  readonly answers: Record<AnswerKind, number>;
  readonly orphans: number;
  readonly lost: number;
  readonly twice: number;
  readonly mostPerWindow: number;
  readonly slowestMs: number;
}

export function tally(answers: readonly Answer[], jobs: ReadonlyMap<number, readonly string[]>, windowMs: number): Tally {
  const counts: Record<AnswerKind, number> = { allowed: 0, deferred: 0, refused: 0, unknown: 0 };
  let orphans = 0;
  let lost = 0;
  let twice = 0;
  for (const a of answers) {
    counts[a.kind] += 1;
    const held = jobs.get(a.i) ?? [];
    if ((a.kind === 'allowed' || a.kind === 'refused') && held.length > 0) orphans += 1;
    if (a.kind === 'deferred' && !held.includes(a.decision.job!.id)) lost += 1;
    if (held.length > 1) twice += 1;
  }
  // On the limiter's clock (each decision's `at`: Redis TIME for the store, the local clock for the fallback, one
  // clock on one machine), where the bound is promised: not when the answers reached the client, whose jitter
  // (an event-loop turn on a busy machine) packs a window's worth of steady admissions into a little less.
  const admittedAt = answers
    .filter((a) => a.kind === 'allowed')
    .map((a) => a.decision.at)
    .sort((x, y) => x - y);
  let mostPerWindow = 0;
  for (let i = 0, j = 0; i < admittedAt.length; i++) {
    while (admittedAt[i]! - admittedAt[j]! >= windowMs) j++;
    mostPerWindow = Math.max(mostPerWindow, i - j + 1);
  }
  const slowestMs = Math.round(Math.max(0, ...answers.map((a) => a.ms)));
  return { answers: counts, orphans, lost, twice, mostPerWindow, slowestMs };
}

/** One line per fault run in the test output (FAULTS_REPORT=1), the figures docs/redis-deployment.md quotes. */
export function report(label: string, t: Tally, extra: Record<string, number | string> = {}): void {
  if (process.env.FAULTS_REPORT) console.log(JSON.stringify({ fault: label, ...t, ...extra }));
}

/** Waits until `predicate` holds, polling every 50 ms; throws after `timeoutMs` (a bound on set-up, not on the fault). */
export async function until(what: string, predicate: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
