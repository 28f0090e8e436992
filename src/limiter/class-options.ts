/**
 * The `classes` option (docs/algorithm.md §2.11, docs/guide.md "Priority classes"): validated once at
 * construction into name → share. Each class is guaranteed its share of the limit and lends what it leaves
 * unused; a check names its class (`check(group, { class })`, a plan's `class`, the middleware's `class`),
 * and one that names none is decided in the class 'default', whose share is the remainder 1 − Σshares unless
 * `classes` names it.
 */
import { ConfigError, describeValue } from '../errors';
import { refuseUnknownOptions } from '../util/option-names';
import { plainObject, refuse } from '../util/validate';
import { DEFAULT_CLASS } from '../core/fair-share-class';

/** A class of the limiter: e.g. `{ critical: { share: 0.2 } }`. */
export interface ClassOptions {
  /** The fraction of the limit the class is guaranteed, in (0, 1]; the classes' shares sum to at most 1. */
  readonly share: number;
}

/** Letters, digits and `._-`, at most 64: a class name is config, shown in headers, metrics labels and logs. */
const CLASS_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** Most classes on one limiter: each is a config block (and, on Redis, its own batch of checks) per rule set. */
export const MAX_CLASSES = 16;

const code = 'ERR_BL_CLASSES';
const fail = (message: string): never => {
  throw new ConfigError(code, message);
};

/** `classes` resolved: name → share, 'default' always in it (a Map: names never reach a prototype). */
export function resolveClasses(value: unknown): ReadonlyMap<string, number> | undefined {
  if (value === undefined) return undefined;
  const given = plainObject('classes', value, { code, expected: 'an object of { [name]: { share } }' });
  const entries = Object.entries(given);
  if (entries.length === 0) fail('Expected `classes` to name at least one class, got {}');
  if (entries.length > MAX_CLASSES) fail(`Expected \`classes\` to hold at most ${MAX_CLASSES} classes, got ${entries.length}`);
  const classes = new Map<string, number>();
  let sum = 0;
  for (const [name, cls] of entries) {
    if (!CLASS_NAME.test(name)) fail(`Expected each class name to be 1–64 letters, digits or ._-, got ${describeValue(name)}`);
    const at = `classes.${name}`;
    const c = plainObject<ClassOptions>(at, cls, { code, expected: '{ share }' });
    refuseUnknownOptions(c, ['share'], 'createLimiter()', `${at}.`);
    const share = c.share;
    if (typeof share !== 'number' || !Number.isFinite(share) || share <= 0 || share > 1) {
      refuse(`${at}.share`, 'a number in (0, 1]', share, code);
    }
    sum += share;
    classes.set(name, share);
  }
  // a float sum of shares written as tenths may pass 1 by a rounding error
  if (sum > 1 + 1e-9) fail(`Expected the shares of \`classes\` to sum to at most 1, got ${sum}`);
  if (!classes.has(DEFAULT_CLASS)) classes.set(DEFAULT_CLASS, Math.max(0, 1 - sum));
  return classes;
}

/** The class a check names: one of the limiter's, else the server's mistake (ConfigError, never a client's 400). */
export function checkClass(classes: ReadonlyMap<string, number> | undefined, name: unknown): string {
  if (typeof name !== 'string' || classes?.has(name) !== true) {
    const known = classes === undefined ? 'the limiter has no `classes`' : `one of ${[...classes.keys()].map((n) => JSON.stringify(n)).join(', ')}`;
    return refuse('class', `the name of a class of the limiter (${known})`, name, 'ERR_BL_UNKNOWN_CLASS');
  }
  return name;
}
