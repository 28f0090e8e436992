/**
 * jobStatus and the dashboard as Fastify routes: translation only; the logic is in ./job-status.ts and
 * ../dashboard/handler.ts.
 */
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { createDashboard, DASHBOARD_PATHS, type DashboardHandler, type DashboardOptions } from '../dashboard/handler';
import { NO_PARAM, createJobStatusReader, type JobStatusOptions } from './job-status';
import { markAsFastifyPlugin, pluginOptionsOf } from './fastify-plugin-meta';
import { PROBLEM_CONTENT_TYPE } from './rejection';

/** GET handler for a deferred job's status URL: `app.get('/jobs/:id', jobStatus({ limiter, group }))`. */
export function jobStatus(options: JobStatusOptions<FastifyRequest>): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  const read = createJobStatusReader<FastifyRequest>(options, (request, param) => {
    const params = request.params as Record<string, unknown> | undefined;
    if (typeof params !== 'object' || params === null || !(param in params)) return NO_PARAM;
    const value = params[param];
    return typeof value === 'string' ? value : undefined;
  });
  return async function jobStatusHandler(request, reply) {
    const answer = await read(request);
    if (answer.status === 200) return reply.send(answer.body);
    return reply.code(answer.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(answer.problem));
  };
}

/** The dashboard's options, with Fastify's `prefix` where it lives. */
export type FastifyDashboardOptions = DashboardOptions<FastifyRequest> & { readonly prefix?: string };

/** The paths under the mount that the dashboard answers (./handler.ts); anything else is the app's. */

function dashboardPlugin(fastify: FastifyInstance, registered: FastifyDashboardOptions, done: (err?: Error) => void): void {
  try {
    addDashboardRoutes(fastify, registered);
  } catch (error) {
    return done(error as Error);
  }
  done();
}

function addDashboardRoutes(fastify: FastifyInstance, registered: FastifyDashboardOptions): void {
  const handle: DashboardHandler<FastifyRequest> = createDashboard<FastifyRequest>(pluginOptionsOf(registered));
  for (const path of DASHBOARD_PATHS) {
    fastify.route({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      url: path,
      // the dashboard is the operators' page: not limited by a bulkLimiter registered around it
      config: { bulkLimiter: false },
      handler: async (request, reply) => {
        const query = request.url.indexOf('?');
        const answer = await handle(request, {
          method: request.method,
          path,
          search: query < 0 ? '' : request.url.slice(query + 1),
          header: (name) => {
            const value = request.headers[name];
            return Array.isArray(value) ? value[0] : value;
          },
        });
        if (answer === undefined) return reply.callNotFound();
        return reply.code(answer.status).headers(answer.headers).send(answer.body);
      },
    });
  }
}

/**
 * The live dashboard page and its JSON under a prefix: `app.register(dashboard, { prefix: '/dashboard', limiters })`.
 * Dead-letter actions answer 403 unless `authorize(request)` resolves to true. Encapsulated (its routes only).
 */
export const dashboard: FastifyPluginCallback<FastifyDashboardOptions> = markAsFastifyPlugin(dashboardPlugin, 'bulk-limiter-dashboard', true);
