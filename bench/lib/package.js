'use strict';
/**
 * Loads the built package by its own name (package.json "exports" → dist/). Sections that need a part
 * that has not landed yet report "skipped: <why>" instead of failing the whole run.
 */
function tryRequire(specifier) {
  try {
    return { module: require(specifier), error: undefined };
  } catch (error) {
    return { module: undefined, error: `${specifier}: ${String(error && error.message).split('\n')[0]}` };
  }
}

/** `BENCH_CORE=<path>` benchmarks another build of the package (e.g. a release) against the same peers. */
const CORE = process.env.BENCH_CORE || 'bulk-limiter';

function loadCore() {
  const { module, error } = tryRequire(CORE);
  if (module && typeof module.createLimiter !== 'function') return { error: 'bulk-limiter: no createLimiter export yet' };
  return module ? { core: module } : { error };
}

/** The core module or a thrown error (child processes, where a failure is reported over IPC). */
function requireCore() {
  const { core, error } = loadCore();
  if (!core) throw new Error(error);
  return core;
}

/** A framework adapter (`express`, `koa`, `fastify`) of the same build as the core: BENCH_CORE's own dist/middleware/. */
function requireAdapter(name) {
  return process.env.BENCH_CORE
    ? require(require('node:path').join(require('node:path').dirname(CORE), 'middleware', name))
    : require(`bulk-limiter/${name}`);
}

module.exports = { tryRequire, loadCore, requireCore, requireAdapter };
