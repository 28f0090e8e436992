/**
 * The dispatcher move and the claim on in-memory structures: lua/dispatch.lua and lua/includes/claim.lua step
 * for step (docs/algorithm.md §3.3, §3.4). Due jobs get SFQ start tags (start = max(vt, ftag_g), ftag_g =
 * start + cost/weight) and go to ready in tag order while it has room; a claim takes jobs from the head of
 * ready through the same admission core and budget as live requests (decide, no promise).
 */
import { closeFairShare, fsClass } from '../core/fair-share';
import { fsGroup } from '../core/fair-share-groups';
import { FS_EPS } from '../core/constants.generated';
import type { FairShare } from '../core/fair-share-state';
import { decide } from '../core/fair-share-decide';
import { ovRead } from '../core/overrides';
import type { RuleConfig } from '../core/rules';
import { heldMember, parseMember, type JobRecord } from '../queue/job-record';
import type { SortedSet } from '../core/sorted-set';
import type { ClaimedJob, ClaimResult, DispatchOptions, DispatchResult } from '../types';

export interface DispatchParts {
  readonly delayed: SortedSet;
  readonly pending: SortedSet;
  readonly ready: string[];
  /** group → its capped jobs in ready or active. */
  readonly inflight: Map<string, number>;
  /** Capped jobs waiting for a slot of their group (heldMember → score 0). */
  readonly held: SortedSet;
}

const PAGE = 64;

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

  // (2) pending → ready in tag order, while ready has room; the budget is spent at the claim (claimInMemory).
  // A capped job whose group has `cap` jobs in flight goes to held instead.
  const room = Math.min(options.readyMax - ready.length, options.moveMax);
  let moved = 0;
  let scanned = 0;
  const taken: string[] = [];
  outer: for (let rank = 0; moved < room && scanned < options.scanMax; rank += PAGE) {
    const page = pending.range(rank, PAGE);
    if (page.length === 0) break;
    for (const { member, score: tag } of page) {
      if (moved >= room || scanned >= options.scanMax) break outer;
      scanned += 1;
      const { group, cap } = parseMember(member);
      let admit = true;
      if (cap > 0) {
        const n = parts.inflight.get(group) ?? 0;
        admit = n < cap;
        if (admit) parts.inflight.set(group, n + 1);
      }
      taken.push(member);
      if (admit) {
        ready.push(member);
        moved += 1;
        if (tag > meta.vt) meta.vt = tag;
      } else {
        parts.held.add(heldMember(group, member), 0);
      }
    }
  }
  for (const member of taken) pending.remove(member);
  closeFairShare(fs);

  // (3) when to call again: never spin, never requeue.
  const readyFull = ready.length >= options.readyMax;
  let wakeMs = -1;
  if (readyFull) wakeMs = -1;
  else if ((room > 0 && moved >= room) || due.length >= options.promoteMax || scanned >= options.scanMax) wakeMs = 0;
  const next = delayed.first();
  if (!readyFull && next) {
    const d = Math.max(0, Math.ceil(next.score - now));
    if (wakeMs < 0 || d < wakeMs) wakeMs = d;
  }
  return { moved, promoted: due.length, wakeMs, readyFull };
}

/** CLAIM_SCAN: most ready jobs one claim looks at (lua/includes/constants.lua). */
import { CLAIM_SCAN } from '../core/constants.generated';

export interface ClaimParts {
  readonly ready: string[];
  /** The record of a ready member's job while it is waiting; undefined when it is gone or no longer waiting. */
  waitingJob(id: string): JobRecord | undefined;
  /** Leases a waiting job to the caller. */
  lease(record: JobRecord, now: number, leaseUntil: number): ClaimedJob;
  /** A ready member whose job is gone or no longer waiting was dropped (job_flight_done). */
  dropped(group: string, cap: number): void;
  /** The rules of each plan as the core runs them (claim_rules: a plan not here decides under the config's). */
  readonly planRules: ReadonlyMap<string, readonly RuleConfig[] | false>;
  /** The group's stored override (ov_read reads it), undefined: none. */
  override(group: string, clockMs: number): string | undefined;
  /** claim_hold_back: a blocked group's ready job back to delayed, due at `due`, its in-flight slot given up. */
  holdBack(r: JobRecord, member: string, due: number, group: string, cap: number): void;
  /** A job enqueued with `settle` starts with a reservation (st_reserve); returns its id. */
  reserve(fs: FairShare, group: string, cost: number, colour: number, plan: string | undefined, rules?: readonly RuleConfig[] | false): string;
  /** After a claim that reserved: a page of lapsed reservations is forgotten (st_sweep). */
  sweep(fs: FairShare): void;
}

/**
 * job_claim in lua/includes/claim.lua: jobs start from the head of ready through the admission core (the
 * budget is spent here); a refused group is skipped for the rest of the call. `lastWakeAt` is the last
 * staggered wake slot given (the counters field 'cw'); the result carries the new one. `stagger` false (the claim of
 * complete-and-claim, whose caller never sleeps on the wake) takes no slot.
 */
export function claimInMemory(
  parts: ClaimParts,
  fs: FairShare,
  leaseMs: number,
  max: number,
  lastWakeAt: number,
  stagger = true,
): ClaimResult & { wakeAt: number } {
  const { ready } = parts;
  const now = fs.nowMs;
  const meta = fs.meta;
  const leaseUntil = now + leaseMs;
  const claimed: ClaimedJob[] = [];
  const items = ready.slice(0, CLAIM_SCAN);
  if (items.length === 0) return { claimed, wakeMs: -1, wakeAt: lastWakeAt };
  const blocked = new Set<string>();
  let reserved = false;
  const first = (fs.baseCfg ?? fs.cfg).cls;
  const others = first ? first.others : undefined;
  const later: string[] = [];
  let head = 0;
  let contiguous = true;
  let wakeUs = Infinity;
  for (const m of items) {
    if (claimed.length >= max || meta.gt < 1 - FS_EPS) break;
    const { id, cost, weight, group, cap, plan } = parseMember(m);
    const r = parts.waitingJob(id);
    let taken = false;
    if (!r) {
      taken = true;
      parts.dropped(group, cap);
    } else if (!blocked.has(group)) {
      let rules = (plan === undefined ? undefined : parts.planRules.get(plan)) ?? fs.cfg.rules;
      // with classes, a job is decided in its own class (claim.lua's fs_class; none, or one gone: the first)
      if (others && first) {
        const share = r.cl === undefined ? undefined : others.get(r.cl);
        if (share !== undefined) fsClass(fs, r.cl!, share);
        else fsClass(fs, first.name, first.share);
      }
      let w = weight;
      const ov = ovRead(fs, parts.override(group, Math.floor(fs.clockUs / 1000)));
      if (ov) {
        if (ov.w > 0) w = ov.w;
        if (ov.rules !== undefined) rules = ov.rules;
      }
      const d = ov && ov.b === 1 ? undefined : decide(fs, group, w, cost, false, rules);
      if (!d) {
        // held back (claim_hold_back): nothing decided, nothing kept in ready
        parts.holdBack(r, m, ov!.expires > 0 ? ov!.expires : now + Math.ceil(fs.cfg.windowUs / 1000), group, cap);
        taken = true;
      } else if (d.allowed) {
        const job = parts.lease(r, now, leaseUntil);
        if (r.st === 1) {
          claimed.push({ ...job, reservation: parts.reserve(fs, d.group, cost, d.colour, plan, ov?.rules) });
          reserved = true;
        } else claimed.push(job);
        taken = true;
      } else {
        blocked.add(group);
        if (d.hintUs < wakeUs) wakeUs = d.hintUs;
      }
    }
    if (taken && contiguous) head += 1;
    else if (taken) later.push(m);
    else contiguous = false;
  }
  ready.splice(0, head);
  for (const m of later) ready.splice(ready.indexOf(m), 1);
  if (reserved) parts.sweep(fs);

  if (claimed.length >= max) return { claimed, wakeMs: 0, wakeAt: lastWakeAt };
  if (ready.length === 0) return { claimed, wakeMs: -1, wakeAt: lastWakeAt };
  if (meta.gt < 1 - FS_EPS) wakeUs = Math.min(wakeUs, (1 - meta.gt) * fs.cfg.T);
  if (wakeUs === Infinity) return { claimed, wakeMs: 0, wakeAt: lastWakeAt };
  let at = now + Math.max(1, Math.ceil(wakeUs / 1000));
  // a claim whose caller does not sleep on the wake (complete-and-claim) takes no staggered slot
  if (!stagger) return { claimed, wakeMs: at - now, wakeAt: lastWakeAt };
  if (lastWakeAt >= at && lastWakeAt - at < fs.cfg.windowUs / 1000) at = lastWakeAt + Math.max(1, Math.ceil(fs.cfg.T / 1000));
  return { claimed, wakeMs: at - now, wakeAt: at };
}
