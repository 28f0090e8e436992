/**
 * What registerMetrics counts of workers and dispatchers (their events), per limiter: the totals it reads at
 * scrape time (src/metrics/prometheus.ts).
 */
import { HistogramCounts } from './collector';
import type { Dispatcher } from '../queue/dispatcher';
import type { Worker, WorkerJob } from '../queue/worker';

const RUN_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** One limiter's job totals, from the events of its workers and dispatchers. */
export interface JobTotals {
  completed: number;
  failed: number;
  retriedError: number;
  retriedSnooze: number;
  dead: number;
  stalled: number;
  moved: number;
  promoted: number;
  readonly runs: Map<string, HistogramCounts>;
  /** When a dispatcher last moved a job to ready (ms). */
  lastMoveAt: number;
  hasDispatcher: boolean;
}

/** Counts a worker's job events into `t`; returns the function that stops counting. */
export function countWorker(worker: Worker, t: JobTotals): () => void {
  const startedAt = new WeakMap<WorkerJob, number>();
  const ran = (job: WorkerJob): void => {
    const started = startedAt.get(job);
    if (started === undefined) return;
    startedAt.delete(job);
    let h = t.runs.get(job.type);
    if (h === undefined) t.runs.set(job.type, (h = new HistogramCounts(RUN_BUCKETS)));
    h.observe((performance.now() - started) / 1000);
  };
  const listeners = {
    active: (job: WorkerJob) => {
      startedAt.set(job, performance.now());
    },
    completed: (job: WorkerJob) => {
      t.completed += 1;
      ran(job);
    },
    failed: (job: WorkerJob) => {
      t.failed += 1;
      ran(job);
    },
    retrying: (job: WorkerJob, info: { kind: 'error' | 'snooze' }) => {
      if (info.kind === 'error') t.retriedError += 1;
      else t.retriedSnooze += 1;
      ran(job);
    },
    dead: (job: WorkerJob) => {
      t.dead += 1;
      ran(job);
    },
  };
  worker
    .on('active', listeners.active)
    .on('completed', listeners.completed)
    .on('failed', listeners.failed)
    .on('retrying', listeners.retrying)
    .on('dead', listeners.dead);
  return () => {
    worker
      .off('active', listeners.active)
      .off('completed', listeners.completed)
      .off('failed', listeners.failed)
      .off('retrying', listeners.retrying)
      .off('dead', listeners.dead);
  };
}

/** Counts a dispatcher's moves and reclaims into `t`; returns the function that stops counting. */
export function countDispatcher(dispatcher: Dispatcher, t: JobTotals): () => void {
  t.hasDispatcher = true;
  const dispatched = (r: { moved: number; promoted: number }): void => {
    t.moved += r.moved;
    t.promoted += r.promoted;
    if (r.moved > 0) t.lastMoveAt = Date.now();
  };
  const reclaimed = (r: { requeued: number; dead: number }): void => {
    t.stalled += r.requeued + r.dead;
    t.dead += r.dead;
  };
  dispatcher.on('dispatched', dispatched).on('reclaimed', reclaimed);
  return () => {
    dispatcher.off('dispatched', dispatched).off('reclaimed', reclaimed);
  };
}
