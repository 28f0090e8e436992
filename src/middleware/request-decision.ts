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
 * documented place to extend requests; every app and mounted sub-app inherits it, so `'rateLimit' in req` is true
 * on every Express request once a decision was kept). An own property instead: on a request outside Express, on
 * one that already has its own `rateLimit` (code before the middleware wrote one), and where a prototype of the
 * chain has a `rateLimit` that is not this accessor (the app's default on `app.request`, another copy of this
 * package: the write then goes through that copy's setter). A decision kept in the map is not an own property: a
 * Proxy of the request or `{ ...req }` does not carry it, and `delete req.rateLimit` keeps it.
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
  // an own rateLimit (written before the accessor existed) would hide the map: write over it, as before
  if (holder === null || Object.hasOwn(req, 'rateLimit')) (req as { rateLimit?: Decision }).rateLimit = decision;
  else decisions.set(req, decision);
}

/** The prototype right above IncomingMessage's in the chain (express.request), with the accessor; null if none. */
function accessorHolder(proto: object): object | null {
  let base: object | null = proto;
  while (base !== null && Object.getPrototypeOf(base) !== IncomingMessage.prototype) {
    // a rateLimit of the app's (or anyone's) between the request and the base would hide the accessor
    if (Object.hasOwn(base, 'rateLimit')) return null;
    base = Object.getPrototypeOf(base) as object | null;
  }
  // none, or right under the request's own prototype: not a request whose prototype was swapped (no cost to avoid)
  if (base === null || base === proto) return null;
  const own = Object.getOwnPropertyDescriptor(base, 'rateLimit');
  if (own !== undefined) return own.get === readDecision ? base : null;
  Object.defineProperty(base, 'rateLimit', { configurable: true, enumerable: false, get: readDecision, set: writeDecision });
  return base;
}

/** As a data property would read: the request's own decision, else one set on an object it inherits from. */
function readDecision(this: object): unknown {
  if (decisions.has(this)) return decisions.get(this);
  for (let o = Object.getPrototypeOf(this) as object | null; o !== null; o = Object.getPrototypeOf(o) as object | null) {
    if (decisions.has(o)) return decisions.get(o);
  }
  return undefined;
}

function writeDecision(this: object, value: unknown): void {
  decisions.set(this, value);
}
