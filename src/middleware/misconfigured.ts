/**
 * A function option (`group`, `weight`, `cost`, `plan`, `skip`, `defer.*`, jobStatus's route parameter) that gives
 * the middleware a value it cannot use is the server's bug, not the client's: the request is answered 500
 * (problem+json, nothing about the server in it), and the first such request per option logs one coded
 * warning, through the limiter's logger, naming the option and the value. Invalid *request data* (a group id
 * read from a header that is too long) stays a 400.
 *
 * Codes: warning WRN_BL_OPTION_RESULT (WRN_BL_ROUTE_PARAM for jobStatus's `param`); the 500's http-error carries `code` ERR_BL_OPTION_RESULT and the
 * ConfigError as `cause`.
 */
import createError from 'http-errors';
import { ConfigError, describeValue, type WarningCode } from '../errors';
import type { Logger } from '../types';
import { isIntegerIn } from '../util/validate';
import type { LimitError, ProblemDetails, Rejection } from './rejection';

export const OPTION_RESULT = 'ERR_BL_OPTION_RESULT';

const PROBLEM: ProblemDetails = Object.freeze({
  type: 'about:blank',
  title: 'Internal Server Error',
  status: 500,
  detail: 'The rate limiter is misconfigured; the server log says how.',
});
const BODY = JSON.stringify(PROBLEM);

/**
 * Answers requests whose options gave unusable values: `misconfigured(option, value, expected)` → a 500
 * Rejection, warned once per option. `detail` replaces "gave <value>; expected <expected>" when given.
 */
export type Misconfigured = (option: string, value: unknown, expected: string, detail?: { code: WarningCode; message: string }) => Rejection;

export function createMisconfigured(logger: Logger, limiterName: string): Misconfigured {
  const warned = new Set<string>();
  return (option, value, expected, detail) => {
    const message = detail?.message ?? `\`${option}\` gave ${describeValue(value)}; expected ${expected}`;
    const error = new ConfigError(OPTION_RESULT, message);
    if (!warned.has(option)) {
      warned.add(option);
      logger.warn(
        `${detail?.code ?? 'WRN_BL_OPTION_RESULT'}: ${message}. Such requests are answered 500 until this is fixed (limiter "${limiterName}")`,
      );
    }
    const httpError = createError(500, PROBLEM.detail, {
      expose: false,
      headers: {},
      problem: PROBLEM,
      code: OPTION_RESULT,
      cause: error,
    }) as LimitError;
    return { kind: 'reject', status: 500, headers: httpError.headers, body: BODY, error: httpError };
  };
}

/** An integer from 1 to `max`. */
export const isIntUpTo = (value: unknown, max: number): value is number => isIntegerIn(value, 1, max);
