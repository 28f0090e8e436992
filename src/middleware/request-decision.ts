/**
 * `request.rateLimit` on a Node request (Express's middleware, the Nest guard on platform-express), made cheap where
 * Express swapped the request's prototype (see keepDecision).
 */
import { IncomingMessage } from 'node:http';
import type { Decision } from '../types';

/**
 * `req.rateLimit` without a property added to each request. Express swaps every request's prototype (to
 * `app.request`), and V8 then gives each property added to it a new hidden class: ~18,000 instructions per
 * request, a quarter of the middleware's cost on Express (bench/http/server-instructions.js). So the decision is
 * kept in a WeakMap, read through an accessor on Express's base request prototype (`express.request`, the
 * documented place to extend requests; every app and mounted sub-app inherits it). A request outside Express, or
 * a prototype that already has its own `rateLimit` (another copy of this package, the app's own), gets an own
 * property.
 */
const decisions = new WeakMap<object, unknown>();
/** A request's prototype → the prototype that holds the accessor, or null for an own property. */
const holders = new WeakMap<object, object | null>();

export function keepDecision(req: object, decision: Decision): void {
  const proto: unknown = Object.getPrototypeOf(req);
  let holder = typeof proto === 'object' && proto !== null ? holders.get(proto) : null;
  if (holder === undefined) {
    holder = accessorHolder(proto as object);
    holders.set(proto as object, holder);
  }
  if (holder === null) (req as { rateLimit?: Decision }).rateLimit = decision;
  else decisions.set(req, decision);
}

/** The prototype right above IncomingMessage's in the chain (express.request), with the accessor; null if none. */
function accessorHolder(proto: object): object | null {
  let base: object | null = proto;
  while (base !== null && Object.getPrototypeOf(base) !== IncomingMessage.prototype) base = Object.getPrototypeOf(base) as object | null;
  // none, or right under the request's own prototype: not a request whose prototype was swapped (no cost to avoid)
  if (base === null || base === proto) return null;
  const own = Object.getOwnPropertyDescriptor(base, 'rateLimit');
  if (own !== undefined) return own.get === readDecision ? base : null;
  Object.defineProperty(base, 'rateLimit', { configurable: true, enumerable: false, get: readDecision, set: writeDecision });
  return base;
}

function readDecision(this: object): unknown {
  return decisions.get(this);
}

function writeDecision(this: object, value: unknown): void {
  decisions.set(this, value);
}
