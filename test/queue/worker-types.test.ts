/**
 * Typed payloads: a Worker typed with a map of job types to payloads checks its handlers at compile time
 * (`npm run typecheck` compiles this file; the @ts-expect-error lines fail the build if they stop erring).
 */
import { createLimiter } from '../../src/limiter/limiter';
import { Worker } from '../../src/queue/worker';

interface Jobs {
  import: { rows: string[] };
  email: { to: string };
}

test('handlers see their own payload type; a missing or unknown handler does not compile', async () => {
  const limiter = createLimiter({ limit: 10 });
  const seen: string[] = [];
  const worker = new Worker<Jobs>({
    limiter,
    handlers: {
      import: async (job) => {
        seen.push(...job.payload.rows);
      },
      email: async (job) => {
        seen.push(job.payload.to.toUpperCase());
      },
    },
  });
  // @ts-expect-error — the email handler is missing
  void new Worker<Jobs>({ limiter, handlers: { import: async () => undefined } });
  // @ts-expect-error — `rows` is a string[], not a number
  void new Worker<Jobs>({ limiter, handlers: { import: async (job) => job.payload.rows + 1, email: async () => undefined } });
  // Untyped workers take any handlers, as before.
  void new Worker({ limiter, handlers: { anything: async (job) => job.payload } });
  expect(worker.running).toBe(0);
  await limiter.close();
});
