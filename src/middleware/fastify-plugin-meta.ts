/**
 * What `fastify-plugin` sets on a plugin, without depending on it (three symbols, read by avvio and Fastify; a
 * runtime dependency would install for Express and Koa users too): `skip-override` makes the plugin's hooks
 * and decorators apply to the scope that registers it (not encapsulated); the display name and meta name it in
 * Fastify's plugin tree and in `dependencies` checks of other plugins.
 */
export function markAsFastifyPlugin<F extends object>(plugin: F, name: string, encapsulate: boolean): F {
  const fn = plugin as Record<symbol, unknown>;
  fn[Symbol.for('skip-override')] = !encapsulate;
  fn[Symbol.for('fastify.display-name')] = name;
  fn[Symbol.for('plugin-meta')] = { name, fastify: '5.x' };
  return plugin;
}

/** What Fastify's `register` adds to a plugin's options (they are not the plugin's). */
const REGISTER_OPTION_NAMES = new Set(['prefix', 'logLevel', 'logSerializers']);

/** A plugin's own options: those given to `register`, less Fastify's. */
export function pluginOptionsOf<T extends object>(registered: T | undefined): T {
  return Object.fromEntries(Object.entries(registered ?? {}).filter(([name]) => !REGISTER_OPTION_NAMES.has(name))) as T;
}
