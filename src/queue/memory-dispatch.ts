/**
 * The dispatcher move on in-memory structures: lua/dispatch.lua step for step (research/fairness.md §4.2).
 * Due jobs get SFQ start tags (start = max(vt, ftag_g), ftag_g = start + cost/weight); pending jobs go to
 * ready in tag order through the same admission core and budget as live requests (decide, no promise).
 */
import { closeFairShare, decide, FS_EPS, fsGroup, type FairShare } from '../core/fair-share';
import { parseMember } from './job-record';
import type { SortedSet } from './sorted-set';
import type { DispatchOptions, DispatchResult } from './types';

export interface DispatchParts {
  readonly delayed: SortedSet;
  readonly pending: SortedSet;
  readonly ready: string[];
}

const PAGE = 32;

export function dispatchInMemory(parts: DispatchParts, fs: FairShare, options: DispatchOptions): DispatchResult {
  const { delayed, pending, ready } = parts;
  const now = fs.nowMs;
  const meta = fs.meta;

  // vt never trails the oldest pending tag (see lua/dispatch.lua): a reset meta must not let new jobs overtake.
  const head = pending.first();
  if (head && head.score > meta.vt) meta.vt = head.score;

  // (1) due → pending with fair tags; an idle group gets no credit (start ≥ vt).
  const due = delayed.rangeToScore(now, options.promoteMax);
  for (const { member } of due) {
    const { cost, weight, group } = parseMember(member);
    const [, st] = fsGroup(fs, group, weight);
    const start = Math.max(meta.vt, st.ftag);
    st.ftag = start + cost / weight;
    pending.add(member, start);
    delayed.remove(member);
  }

  // (2) pending → ready in tag order, through the shared budget.
  const room = Math.min(options.readyMax - ready.length, options.moveMax);
  let moved = 0;
  let rank = 0;
  let scanned = 0;
  let wakeUs = Infinity;
  const blocked = new Set<string>();
  outer: while (moved < room && scanned < options.scanMax && meta.gt >= 1 - FS_EPS) {
    const page = pending.range(rank, PAGE);
    if (page.length === 0) break;
    for (const { member, score: tag } of page) {
      if (moved >= room || scanned >= options.scanMax || meta.gt < 1 - FS_EPS) break outer;
      scanned += 1;
      const { cost, weight, group } = parseMember(member);
      if (blocked.has(group)) {
        rank += 1;
        continue;
      }
      const r = decide(fs, group, weight, cost, false);
      if (r.allowed) {
        ready.push(member);
        pending.remove(member);
        moved += 1;
        if (tag > meta.vt) meta.vt = tag;
      } else {
        blocked.add(group);
        // wake when it may borrow again (hint), not at its guaranteed slot: the backlog drains at the free rate
        if (r.hintUs < wakeUs) wakeUs = r.hintUs;
        rank += 1;
      }
    }
  }
  if (meta.gt < 1 - FS_EPS) wakeUs = Math.min(wakeUs, (1 - meta.gt) * fs.cfg.T);
  closeFairShare(fs);

  // (3) when to call again: never spin, never requeue.
  const readyFull = ready.length >= options.readyMax;
  let wakeMs = -1;
  if (readyFull) wakeMs = -1;
  else if ((room > 0 && moved >= room) || due.length >= options.promoteMax) wakeMs = 0;
  else if (pending.size > 0) wakeMs = wakeUs === Infinity ? 1 : Math.max(1, Math.ceil(wakeUs / 1000));
  const next = delayed.first();
  if (!readyFull && next) {
    const d = Math.max(0, Math.ceil(next.score - now));
    if (wakeMs < 0 || d < wakeMs) wakeMs = d;
  }
  return { moved, promoted: due.length, wakeMs, readyFull };
}
