/**
 * Frees a request's concurrency slot when its response is done, in both adapters: on `finish` (sent) or `close`
 * (sent, or the client went away), and when the adapter says so (Koa: a downstream handler threw). Exactly once.
 */
import type { ServerResponse } from 'node:http';
import type { Limiter } from '../limiter/limiter';
import type { Decision } from '../types';

const NOTHING = (): void => {};

/** Returns the release, to call early; a no-op for a decision without a slot. */
export function releaseWhenDone(limiter: Limiter, decision: Decision | undefined, res: ServerResponse): () => void {
  if (decision?.concurrency?.lease === undefined) return NOTHING;
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    res.off('finish', release);
    res.off('close', release);
    // never rejects: a failed release leaves the slot to its lease
    void limiter.release(decision);
  };
  if (res.writableFinished || res.destroyed) release();
  else {
    res.once('finish', release);
    res.once('close', release);
  }
  return release;
}
