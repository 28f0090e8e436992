/** Fastify apps as supertest's request listeners: the app's routing handler, called once the app is ready. */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { createServer, type RequestListener } from 'node:http';

/** A Fastify app built by `build`, served to supertest through its own routing handler. */
export function fastifyListener(build: (app: FastifyInstance) => void, options: FastifyServerOptions = {}): RequestListener {
  let handler: RequestListener | undefined;
  const app = Fastify({
    ...options,
    serverFactory: (h) => {
      handler = h as RequestListener;
      return createServer(h);
    },
  });
  build(app);
  const ready = app.ready();
  return (req, res) => {
    ready.then(
      () => handler!(req, res),
      (error: unknown) => {
        res.statusCode = 599;
        res.end(String(error));
      },
    );
  };
}
