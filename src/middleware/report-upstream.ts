/**
 * reportUpstream(limiter, response): the adaptive limit fed from what an upstream answered (docs/adaptive.md).
 * 429 and 503 are 'throttled' (with the response's Retry-After, seconds or an HTTP date), any other status below
 * 500 is 'ok'; other 5xx say nothing about capacity and are not reported. Takes a fetch Response, an
 * http.IncomingMessage, an axios-like response ({ status, headers }), or a status and a Retry-After.
 */
import type { Limiter } from '../limiter/limiter-api';

/** What reportUpstream reads of a response: its status and its headers (a fetch Headers or a plain object). */
export interface UpstreamResponse {
  readonly status?: number;
  readonly statusCode?: number;
  readonly headers?: { get(name: string): string | null } | Readonly<Record<string, unknown>>;
}

/** Retry-After as ms: delay-seconds or an HTTP date (relative to `nowMs`); 0 when absent or unreadable. */
export function retryAfterMs(value: unknown, nowMs: number = Date.now()): number {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? Math.ceil(value * 1000) : 0;
  if (Array.isArray(value)) value = value[0];
  if (typeof value !== 'string' || value.trim() === '') return 0;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : 0;
}

function headerOf(response: UpstreamResponse): unknown {
  const headers = response.headers;
  if (!headers) return undefined;
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(name: string): string | null }).get('retry-after');
  const plain = headers as Readonly<Record<string, unknown>>;
  return plain['retry-after'] ?? plain['Retry-After'];
}

/**
 * Reports one upstream answer to `limiter`'s adaptive limit; resolves to the limit in force after it (undefined when the
 * answer was not reported: no status, or a 5xx other than 503). `retryAfter`
 * (seconds, or the header's text) overrides the response's header; with a bare status, it is the only one.
 */
export function reportUpstream(
  limiter: Pick<Limiter, 'report'>,
  response: UpstreamResponse | number,
  retryAfter?: string | number | null,
): Promise<number | undefined> {
  const status = typeof response === 'number' ? response : (response?.status ?? response?.statusCode);
  if (typeof status !== 'number') return Promise.resolve(undefined);
  if (status === 429 || status === 503) {
    const header = retryAfter ?? (typeof response === 'number' ? undefined : headerOf(response));
    return limiter.report('throttled', { retryAfterMs: retryAfterMs(header) });
  }
  if (status < 500) return limiter.report('ok');
  return Promise.resolve(undefined);
}
