/**
 * The job record both queue stores keep (one cjson object per job in Redis, one object in memory),
 * the member format of delayed/pending/ready, and the conversion to the public JobInfo.
 */
import type { JobInfo, JobState } from '../types';

/** `waiting` covers delayed, pending and ready: the store tells which from where the member sits. */
export type RecordState = 'waiting' | 'active' | 'completed' | 'dead';

export interface JobRecord {
  id: string;
  type: string;
  group: string;
  weight: number;
  cost: number;
  /** JSON text. */
  payload: string;
  state: RecordState;
  attempts: number;
  stalls: number;
  snoozes: number;
  createdAt: number;
  runAt: number;
  token?: string;
  /** JSON text. */
  result?: string;
  error?: string;
  finishedAt?: number;
  /** The idempotency key that names this job, deleted with the record. */
  idem?: string;
  /** The job's group concurrency cap; absent = none. */
  gc?: number;
  /** The job's own maxAttempts (over the worker's); absent = the worker's. */
  ma?: number;
  /** The job's plan: a claim decides it under that plan's rules; absent = none (the limiter's). */
  pl?: string;
  /** 1: the job's cost is an estimate: its claim records a reservation its handler settles. */
  st?: 1;
  /** The job's priority class (absent: 'default'): its claim decides it in that class. */
  cl?: string;
}

/**
 * `<id> <cost> <weight> <cap> <group>`: the group last, since it may hold any bytes; cap 0 = none. A job of a
 * plan has `<cap>,<plan length>:<plan>` in cap's place (a plan name may hold spaces).
 */
export function jobMember(r: Pick<JobRecord, 'id' | 'cost' | 'weight' | 'group' | 'gc' | 'pl'>): string {
  const cap = r.pl === undefined ? `${r.gc ?? 0}` : `${r.gc ?? 0},${r.pl.length}:${r.pl}`;
  return `${r.id} ${r.cost} ${r.weight} ${cap} ${r.group}`;
}

export interface ParsedMember {
  readonly id: string;
  readonly cost: number;
  readonly weight: number;
  /** The job's group concurrency cap; 0 = none. */
  readonly cap: number;
  readonly group: string;
  /** The job's plan; undefined = none. */
  readonly plan?: string;
}

export function parseMember(member: string): ParsedMember {
  const match = /^(\S+) (\d+) (\d+) (\d+)(?:,(\d+):)?/.exec(member);
  if (!match) throw new Error(`malformed job member ${JSON.stringify(member)}`);
  const base = { id: match[1]!, cost: Number(match[2]), weight: Number(match[3]), cap: Number(match[4]) };
  const at = match[0].length;
  if (match[5] === undefined) return { ...base, group: member.slice(at + 1) };
  // plan names are printable ASCII: their length in UTF-16 units is their length in bytes (job_parse)
  const n = Number(match[5]);
  return { ...base, plan: member.slice(at, at + n), group: member.slice(at + n + 1) };
}

/** A held member (job_held_prefix in lua/includes/job.lua): the group's UTF-8 length, the group, the member. */
export function heldMember(group: string, member: string): string {
  return `${heldPrefix(group)}${member}`;
}

export function heldPrefix(group: string): string {
  return `${Buffer.byteLength(group, 'utf8')}:${group} `;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function toJobInfo(r: JobRecord, state: JobState, runAt: number): JobInfo {
  return {
    id: r.id,
    type: r.type,
    group: r.group,
    state,
    attempts: r.attempts,
    stalls: r.stalls,
    snoozes: r.snoozes,
    createdAt: r.createdAt,
    runAt,
    payload: parseJson(r.payload),
    ...(r.result !== undefined ? { result: parseJson(r.result) } : {}),
    ...(r.error !== undefined ? { error: r.error } : {}),
    ...(r.finishedAt !== undefined ? { finishedAt: r.finishedAt } : {}),
    ...(r.pl !== undefined ? { plan: r.pl } : {}),
    ...(r.cl !== undefined ? { class: r.cl } : {}),
  };
}

/** A record as it sits in Redis (cjson; absent fields decode as missing). */
export function decodeRecord(raw: string): JobRecord {
  return JSON.parse(raw) as JobRecord;
}
