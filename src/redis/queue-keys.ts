/**
 * The queue key block: every queue script receives these keys in this order (`-- @keyblock queue` in
 * lua/includes/job.lua, read into the generated bindings). All under the limiter's one hash tag.
 */
import type { LimiterKeys } from './keys';
import { enqueueScript } from './lua-sources.generated';

export function queueKeyBlock(keys: LimiterKeys): string[] {
  return enqueueScript.keys(keys);
}
