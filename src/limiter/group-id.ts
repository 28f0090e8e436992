/** The group ids the limiter accepts from a request (untrusted input): bounded, well-formed, never a shared group's name. */
import { InputError, describeValue } from '../errors';
import { NEWCOMERS_GROUP, OVERFLOW_GROUP } from '../core/fair-share-state';

/** The metrics' group label of every group without a series of its own (src/metrics/top-groups.ts). */
export const OTHER_GROUP = '*other*';
/** Names the limiter and its metrics give to groups shared between ids: no request may name one. */
const RESERVED_GROUPS: ReadonlySet<string> = new Set([OVERFLOW_GROUP, NEWCOMERS_GROUP, OTHER_GROUP]);

/**
 * A group id: a non-empty string of at most `maxBytes` UTF-8 bytes (any characters but a lone surrogate, which
 * UTF-8 would turn into U+FFFD: '\ud800' and '\udbff' would share one quota), and never the name of a group the limiter shares between ids.
 */
export function checkGroup(group: unknown, maxBytes: number): asserts group is string {
  if (typeof group !== 'string') {
    throw new InputError('ERR_BL_BAD_GROUP', `Expected the group id to be a string, got ${describeValue(group)}`);
  }
  if (group.length === 0) throw new InputError('ERR_BL_GROUP_EMPTY', 'Expected a non-empty group id, got ""');
  if (!(group as unknown as WellFormed).isWellFormed()) {
    throw new InputError(
      'ERR_BL_GROUP_MALFORMED',
      `Expected the group id to be well-formed UTF-16 (no lone surrogate), got ${JSON.stringify(group.slice(0, 64))}`,
    );
  }
  if (RESERVED_GROUPS.has(group)) throw reservedGroup(group);
  // One UTF-16 unit is at most 3 UTF-8 bytes: short ids skip the byte count.
  if (group.length * 3 > maxBytes && Buffer.byteLength(group, 'utf8') > maxBytes) {
    throw new InputError(
      'ERR_BL_GROUP_TOO_LONG',
      `Expected the group id to be at most ${maxBytes} bytes (UTF-8), got ${Buffer.byteLength(group, 'utf8')} bytes`,
    );
  }
}

/** The 400 for a group id that names a group shared between ids. */
export function reservedGroup(group: string): InputError {
  return new InputError(
    'ERR_BL_GROUP_RESERVED',
    `The group id ${JSON.stringify(group)} names a group shared between ids (over maxGroups, on probation, the metrics' rest, or requests without a group); a request cannot name it`,
  );
}

/** String.prototype.isWellFormed (Node 20; not in the ES2022 lib the package compiles against). */
interface WellFormed {
  isWellFormed(): boolean;
}
