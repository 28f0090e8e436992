/** From the core's result to the reply both stores give (whole ms), and from that to the public Decision. */
import type { FairShareResult } from './fair-share';
import type { Decision } from '../types';

const COLOURS = ['green', 'yellow', 'red'] as const;

/** The reply both stores give, in whole ms (durations ceil'd, like admit.lua's reply). */
export interface AdmitReply {
  allowed: boolean; colour: 0 | 1 | 2; remaining: number; limit: number; guaranteed: number;
  retryMs: number; hintMs: number; resetMs: number; active: number; atMs: number; group: string;
  /** Floor'd (a lower bound), unlike the other durations. */
  emptyMs: number;
}

export function toAdmitReply(r: FairShareResult, nowMs: number): AdmitReply {
  return {
    allowed: r.allowed, colour: r.colour, remaining: r.remaining, limit: r.limit, guaranteed: r.guaranteed,
    retryMs: Math.ceil(r.retryUs / 1000), hintMs: Math.ceil(r.hintUs / 1000), resetMs: Math.ceil(r.resetUs / 1000),
    active: r.active, atMs: nowMs, group: r.group, emptyMs: Math.floor(r.emptyUs / 1000),
  };
}

/** The public Decision for one admission reply. */
export function toDecision(r: AdmitReply): Decision {
  if (r.allowed) {
    return {
      allowed: true, group: r.group, limit: r.limit, guaranteed: r.guaranteed, remaining: r.remaining,
      retryAfterMs: 0, resetMs: r.resetMs, activeGroups: r.active, colour: COLOURS[r.colour], at: r.atMs,
    };
  }
  return {
    allowed: false, group: r.group, limit: r.limit, guaranteed: r.guaranteed, remaining: r.remaining,
    retryAfterMs: r.retryMs, resetMs: r.resetMs, activeGroups: r.active, colour: COLOURS[r.colour], at: r.atMs,
    reason: 'limit', hintMs: Math.min(r.hintMs, r.retryMs), globalWaitMs: r.emptyMs,
  };
}
