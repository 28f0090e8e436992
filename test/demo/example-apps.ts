/** The example apps as supertest request listeners: each framework's createApp result, served in-process. */
import type { RequestListener, Server } from 'node:http';

/** Fastify: the app's own server gets the request once the app is ready. */
function fastifyListener(app: unknown): RequestListener {
  const fastify = app as { ready(): Promise<unknown>; server: Server };
  const ready = fastify.ready();
  return (req, res) => void ready.then(() => fastify.server.emit('request', req, res));
}

/** Nest: createApp resolves to the initialised app; its HTTP server gets the request. */
function nestListener(app: unknown): RequestListener {
  const nest = app as Promise<{ getHttpServer(): Server }>;
  return (req, res) => void nest.then((a) => a.getHttpServer().emit('request', req, res));
}

/** [name, module path from test/demo, createApp result → listener] */
export const EXAMPLE_APPS: ReadonlyArray<readonly [string, string, (app: unknown) => RequestListener]> = [
  ['Express', '../../examples/express/app', (app) => app as RequestListener],
  ['Koa', '../../examples/koa/app', (app) => (app as { callback(): RequestListener }).callback()],
  ['Fastify', '../../examples/fastify/app', fastifyListener],
  ['NestJS', '../../examples/nest/app', nestListener],
];
