/**
 * `dashboard({ limiters, authorize })`, shared by both adapters, which only translate a request in and an
 * answer out. Routes under the mount:
 *   GET  /                    the page (./page.ts): one self-contained HTML string
 *   GET  /data                the JSON it polls (./data.ts)
 *   POST /dead/retry?limiter=<name>&id=<id>   and   POST /dead/remove?…   dead-letter actions
 *   POST /overrides/set?limiter=<name>&group=<id>[&settings=<JSON>][&plan=&weight=&concurrency=&groupConcurrency=
 *        &blocked=true&rules=<JSON>][&ttlMs=<ms>][&reason=<text>]   (the page's form sends the fields)   and
 *   POST /overrides/remove?limiter=<name>&group=<id>   override actions (limiter.setOverride, deleteOverride)
 * The actions are checked here, on every call, against `authorize` (403 without it or when it says no) and
 * need an `X-Requested-With` header, which a cross-site form cannot send. A refused action is an RFC 9457
 * problem (application/problem+json). Anything else is the app's (next()).
 */
import { STATUS_CODES } from 'node:http';
import { BulkLimiterError, ConfigError, StoreError, describeValue } from '../errors';
import type { Limiter } from '../limiter/limiter';
import { refuseUnknownOptions, type OptionNames } from '../util/option-names';
import { readLimiter, type ActionsState, type DashboardData } from './data';
import { PAGE_HEADERS, PAGE_HTML } from './page';
import { LimiterTraffic } from './traffic';
import { func, integer, optional, optionsObject, refuse } from '../util/validate';

type MaybePromise<T> = T | Promise<T>;

/** Every path the handler answers under its mount, for adapters that declare routes one by one (Fastify). */
export const DASHBOARD_PATHS = ['/', '/data', '/dead/retry', '/dead/remove', '/overrides/set', '/overrides/remove'] as const;

export interface DashboardOptions<Ctx> {
  /** The limiters to show (names must differ). */
  readonly limiters: readonly Limiter[];
  /**
   * Whether this request may retry and remove dead letters and set and remove overrides (`true` only). Without it
   * the page is read-only.
   * Reading the page is not checked: put your own access control in front of the mount.
   */
  readonly authorize?: (ctx: Ctx) => MaybePromise<boolean>;
  /** A group's plan or tier, shown next to it (e.g. `(g) => plans[g]`); its weight is what the store is told. */
  readonly plan?: (group: string) => string | number | undefined | null;
  /** Busiest groups shown per limiter, 1 … 100 (the rest are counted together). @defaultValue `10` */
  readonly topGroups?: number;
}

/** A request as the adapters see it; `path` is relative to the mount ('/' for the page). */
export interface DashboardRequest {
  readonly method: string;
  readonly path: string;
  /** The query string, without '?'. */
  readonly search: string;
  header(name: string): string | undefined;
}

export interface DashboardAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export type DashboardHandler<Ctx> = (ctx: Ctx, req: DashboardRequest) => Promise<DashboardAnswer | undefined>;

const OPTIONS: OptionNames<DashboardOptions<unknown>> = { limiters: true, authorize: true, plan: true, topGroups: true };
export const DASHBOARD_OPTION_NAMES: readonly string[] = Object.keys(OPTIONS);
const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };
const PROBLEM_HEADERS = { ...JSON_HEADERS, 'Content-Type': 'application/problem+json; charset=utf-8' };
const MAX_PLAN_LENGTH = 40;

export function createDashboard<Ctx>(options: DashboardOptions<Ctx>, extraNames: readonly string[] = []): DashboardHandler<Ctx> {
  const { limiters, authorize, plan, topGroups } = validate(options, extraNames);
  const traffic = limiters.map((limiter) => new LimiterTraffic(limiter, topGroups));
  const planOf =
    plan === undefined
      ? undefined
      : (group: string): string | undefined => {
          const label = plan(group);
          return label === undefined || label === null ? undefined : String(label).slice(0, MAX_PLAN_LENGTH);
        };
  const actionsFor = async (ctx: Ctx): Promise<ActionsState> => {
    if (authorize === undefined) return 'none';
    return (await authorize(ctx)) === true ? 'allowed' : 'locked';
  };

  return async (ctx, req) => {
    const path = req.path === '' ? '/' : req.path;
    const method = req.method.toUpperCase();
    if ((method === 'GET' || method === 'HEAD') && path === '/') return { status: 200, headers: PAGE_HEADERS, body: PAGE_HTML };
    if ((method === 'GET' || method === 'HEAD') && path === '/data') {
      const data: DashboardData = {
        now: Date.now(),
        actions: await actionsFor(ctx),
        limiters: await Promise.all(traffic.map((t) => readLimiter(t, planOf))),
      };
      return json(200, data);
    }
    const overrides = path === '/overrides/set' || path === '/overrides/remove';
    if (path !== '/dead/retry' && path !== '/dead/remove' && !overrides) return undefined;
    if (method !== 'POST') {
      const refused = problem(405, 'Use POST');
      return { ...refused, headers: { ...refused.headers, Allow: 'POST' } };
    }
    if ((await actionsFor(ctx)) !== 'allowed') return problem(403, `Not authorized to change ${overrides ? 'overrides' : 'dead letters'}`);
    if (req.header('x-requested-with') === undefined) return problem(403, 'Missing the X-Requested-With header');
    const query = new URLSearchParams(req.search);
    const limiter = limiters.find((l) => l.name === query.get('limiter'));
    if (limiter === undefined) return problem(404, 'No such limiter');
    if (overrides) return overrideAction(limiter, path, query);
    const id = query.get('id');
    if (id === null || id === '') return problem(400, 'Missing the job id (?id=)');
    const done = path === '/dead/retry' ? await limiter.retryDead(id) : await limiter.removeDead(id);
    return done ? json(200, { ok: true }) : problem(404, 'No such dead job');
  };
}

/** The settings a form field sets; each non-empty one is added to `settings` (the JSON, when given). */
const SETTING_FIELDS = ['plan', 'weight', 'concurrency', 'groupConcurrency', 'blocked', 'rules'] as const;
const NUMBER = /^-?\d+(\.\d+)?$/;

/**
 * An override set or removed. The limiter validates: a mistake is a 400 problem naming the setting and its value,
 * the cap on overrides a 409, a store failure a 503 (the client did nothing wrong: retry).
 */
async function overrideAction(limiter: Limiter, path: string, query: URLSearchParams): Promise<DashboardAnswer> {
  const group = query.get('group');
  if (group === null || group === '') return problem(400, 'Missing the group (?group=)');
  try {
    if (path === '/overrides/remove')
      return (await limiter.deleteOverride(group)) ? json(200, { ok: true }) : problem(404, `No override for group ${JSON.stringify(group)}`);
    const { settings, mistake } = readSettings(query);
    if (mistake !== undefined) return problem(400, mistake, 'ERR_BL_OVERRIDE');
    const ttl = query.get('ttlMs');
    const reason = query.get('reason');
    const options = { ...(ttl === null || ttl === '' ? {} : { ttlMs: numberOrText(ttl) }), ...(reason === null || reason === '' ? {} : { reason }) };
    return json(200, { ok: true, override: await limiter.setOverride(group, settings as never, options as never) });
  } catch (error) {
    if (error instanceof StoreError) return problem(503, `The store did not answer (${error.message}); try again`, error.code);
    if (!(error instanceof BulkLimiterError)) throw error;
    const status = error.code === 'ERR_BL_TOO_MANY_OVERRIDES' ? 409 : error.code === 'ERR_BL_NO_OVERRIDES' ? 501 : 400;
    return problem(status, error.message, error.code);
  }
}

/** `settings` (JSON) with the form's fields on top, or what is wrong with them. */
function readSettings(query: URLSearchParams): { settings?: unknown; mistake?: string } {
  const text = query.get('settings');
  let settings: unknown = {};
  if (text !== null && text !== '') {
    const parsed = parseJson(text);
    if (parsed === undefined) return { mistake: `Expected \`settings\` to be a JSON object, got ${describeValue(text)}` };
    settings = parsed;
  }
  // not an object: setOverride names it
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) return { settings };
  const out: Record<string, unknown> = { ...settings };
  for (const name of SETTING_FIELDS) {
    const value = query.get(name);
    if (value === null || value === '') continue;
    if (name === 'plan') out.plan = value;
    else if (name === 'blocked') out.blocked = value === 'true' ? true : value;
    else if (name === 'rules') {
      const rules = parseJson(value);
      if (rules === undefined) return { mistake: `Expected \`settings.rules\` to be a JSON array of rules, got ${describeValue(value)}` };
      out.rules = rules;
    } else out[name] = numberOrText(value);
  }
  return { settings: out };
}

/** A number typed in a field; anything else stays text, so the limiter's error shows what was typed. */
function numberOrText(value: string): number | string {
  return NUMBER.test(value) ? Number(value) : value;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function json(status: number, body: unknown): DashboardAnswer {
  return { status, headers: JSON_HEADERS, body: JSON.stringify(body) };
}

/** An action's failure as an RFC 9457 problem (`code`: the error's, when it has one). */
function problem(status: number, detail: string, code?: string): DashboardAnswer {
  const body = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail, ...(code === undefined ? {} : { code }) };
  const headers = status === 503 ? { ...PROBLEM_HEADERS, 'Retry-After': '1' } : PROBLEM_HEADERS;
  return { status, headers, body: JSON.stringify(body) };
}

function validate<Ctx>(options: DashboardOptions<Ctx>, extraNames: readonly string[]) {
  refuseUnknownOptions(optionsObject(options), [...DASHBOARD_OPTION_NAMES, ...extraNames], 'dashboard()');
  const { limiters, authorize, plan } = options;
  const isLimiter = (l: unknown): l is Limiter => typeof (l as Limiter | undefined)?.observe === 'function';
  if (!Array.isArray(limiters) || limiters.length === 0 || !limiters.every(isLimiter)) {
    refuse('limiters', 'a non-empty array of limiters from createLimiter', limiters);
  }
  const names = limiters.map((l) => l.name);
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated !== undefined) throw new ConfigError('ERR_BL_LIMITERS', `Expected \`limiters\` to have different names, got "${repeated}" twice`);
  func('authorize', authorize, optional);
  func('plan', plan, optional);
  const topGroups = integer('topGroups', options.topGroups, { max: 100, fallback: 10 });
  return { limiters, authorize, plan, topGroups };
}
