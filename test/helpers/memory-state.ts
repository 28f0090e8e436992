/**
 * The MemoryStore's admission state of one limiter, undefined before its first check. Tests compare the stores
 * by it (conformance snapshots, the middleware suite's probation sightings); it is no part of the package's API,
 * so it is read here, from the private field, and not through a method of the public class.
 */
import type { FairShareState } from '../../src/core/fair-share';
import type { MemoryStore } from '../../src/memory/memory-store';

export function admissionState(store: MemoryStore, name: string): FairShareState | undefined {
  return store['limiters'].get(name);
}
