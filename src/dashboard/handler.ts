/**
 * `dashboard({ limiters, authorize })`, shared by both adapters, which only translate a request in and an
 * answer out. Routes under the mount:
 *   GET  /                    the page (./page.ts): one self-contained HTML string
 *   GET  /data                the JSON it polls (./data.ts)
 *   POST /dead/retry?limiter=<name>&id=<id>   and   POST /dead/remove?…   dead-letter actions
 *   POST /overrides/set?limiter=<name>&group=<id>&settings=<JSON>[&ttlMs=<ms>][&reason=<text>]   and
 *   POST /overrides/remove?limiter=<name>&group=<id>   override actions (limiter.setOverride, deleteOverride)
 * The actions are checked here, on every call, against `authorize` (403 without it or when it says no) and
 * need an `X-Requested-With` header, which a cross-site form cannot send. Anything else is the app's (next()).
 */
import { BulkLimiterError, ConfigError, StoreError } from '../errors';
import type { Limiter } from '../limiter/limiter';
import { refuseUnknownOptions, type OptionNames } from '../util/option-names';
import { readLimiter, type ActionsState, type DashboardData } from './data';
import { PAGE_HEADERS, PAGE_HTML } from './page';
import { LimiterTraffic } from './traffic';
import { func, integer, optional, optionsObject, refuse } from '../util/validate';

type MaybePromise<T> = T | Promise<T>;

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
    if (method !== 'POST') return { ...json(405, { error: 'Use POST' }), headers: { ...JSON_HEADERS, Allow: 'POST' } };
    if ((await actionsFor(ctx)) !== 'allowed') return json(403, { error: `Not authorized to change ${overrides ? 'overrides' : 'dead letters'}` });
    if (req.header('x-requested-with') === undefined) return json(403, { error: 'Missing the X-Requested-With header' });
    const query = new URLSearchParams(req.search);
    const limiter = limiters.find((l) => l.name === query.get('limiter'));
    if (limiter === undefined) return json(404, { error: 'No such limiter' });
    if (overrides) return overrideAction(limiter, path, query);
    const id = query.get('id');
    if (id === null || id === '') return json(400, { error: 'Missing the job id (?id=)' });
    const done = path === '/dead/retry' ? await limiter.retryDead(id) : await limiter.removeDead(id);
    return done ? json(200, { ok: true }) : json(404, { error: 'No such dead job' });
  };
}

/** An override set or removed: the limiter validates (a mistake is a 400 with its code and message). */
async function overrideAction(limiter: Limiter, path: string, query: URLSearchParams): Promise<DashboardAnswer> {
  const group = query.get('group');
  if (group === null || group === '') return json(400, { error: 'Missing the group (?group=)' });
  try {
    if (path === '/overrides/remove')
      return (await limiter.deleteOverride(group)) ? json(200, { ok: true }) : json(404, { error: 'No such override' });
    let settings: unknown;
    try {
      settings = JSON.parse(query.get('settings') ?? '');
    } catch {
      return json(400, { error: 'Expected `settings` to be JSON (?settings=)' });
    }
    const ttl = query.get('ttlMs');
    const reason = query.get('reason');
    const options = { ...(ttl === null || ttl === '' ? {} : { ttlMs: Number(ttl) }), ...(reason === null || reason === '' ? {} : { reason }) };
    return json(200, { ok: true, override: await limiter.setOverride(group, settings as never, options) });
  } catch (error) {
    if (error instanceof BulkLimiterError && !(error instanceof StoreError)) return json(400, { error: error.message, code: error.code });
    throw error;
  }
}

function json(status: number, body: unknown): DashboardAnswer {
  return { status, headers: JSON_HEADERS, body: JSON.stringify(body) };
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
