/**
 * In-process claim notices per queue: a Worker reports the jobs it claimed, so a Dispatcher of the same
 * queue object that sleeps on a full ready list refills it as soon as there is room, not after a poll.
 * Claims by other processes are not seen here; the Dispatcher's short ready-full sleep covers those.
 */
import type { QueueStore } from '../types';

type Listener = (claimed: number) => void;

const listeners = new WeakMap<QueueStore, Set<Listener>>();

/** Calls `listener` with the count of every claim reported on `queue`; returns the unsubscribe. */
export function onClaimed(queue: QueueStore, listener: Listener): () => void {
  let set = listeners.get(queue);
  if (!set) listeners.set(queue, (set = new Set()));
  set.add(listener);
  return () => void set.delete(listener);
}

export function reportClaimed(queue: QueueStore, claimed: number): void {
  if (claimed <= 0) return;
  listeners.get(queue)?.forEach((listener) => listener(claimed));
}
