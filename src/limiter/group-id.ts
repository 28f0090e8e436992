/** The group ids the limiter accepts from a request (untrusted input): bounded, well-formed, never a shared group's name. */
import { InputError, describeValue } from '../errors';
import { NEWCOMERS_GROUP, OVERFLOW_GROUP } from '../core/fair-share';

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
  if (group === OVERFLOW_GROUP || group === NEWCOMERS_GROUP) {
    throw new InputError(
      'ERR_BL_GROUP_RESERVED',
      `The group id ${JSON.stringify(group)} names a group the limiter shares between ids (over maxGroups, or on probation); a request cannot name it`,
    );
  }
  // One UTF-16 unit is at most 3 UTF-8 bytes: short ids skip the byte count.
  if (group.length * 3 > maxBytes && Buffer.byteLength(group, 'utf8') > maxBytes) {
    throw new InputError(
      'ERR_BL_GROUP_TOO_LONG',
      `Expected the group id to be at most ${maxBytes} bytes (UTF-8), got ${Buffer.byteLength(group, 'utf8')} bytes`,
    );
  }
}

/** String.prototype.isWellFormed (Node 20; not in the ES2022 lib the package compiles against). */
interface WellFormed {
  isWellFormed(): boolean;
}
