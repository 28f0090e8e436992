'use strict';
/**
 * The example app of ../express/app.js, in NestJS (plain JavaScript, so decorators are applied as functions):
 * same routes, same limiter, same deferred imports. BulkLimiterModule guards every route (globalGuard); the
 * imports route defers by `@BulkLimit`; the job handler is a provider the module finds and runs (`worker: true`).
 *   GET  /api/reports/:id   an ordinary request
 *   GET  /api/export        the bulk endpoint a flooding client hammers
 *   POST /api/imports       bulk import: run now when admitted, otherwise deferred → 202 + Location
 *   GET  /jobs/:id          status of a deferred import
 *   GET  /metrics           Prometheus metrics (../operations.js)
 *   GET  /health            the limiter's store: up, degraded or down
 *   GET  /dashboard         the live dashboard (read-only; retry / remove dead jobs with DASHBOARD_TOKEN set)
 * On platform-express, or platform-fastify with `platform: 'fastify'` (NEST_PLATFORM=fastify for the server).
 */
require('reflect-metadata');
const { Controller, Get, Header, HttpCode, Injectable, Module, Post, Req, Res } = require('@nestjs/common');
const { HttpAdapterHost, NestFactory } = require('@nestjs/core');
const bulk = require('bulk-limiter');
const { BulkLimit, BulkLimiterModule, JobHandler, dashboardController, jobStatusController } = require('bulk-limiter/nest');
const { createJobHandlers, PLANS } = require('../express/app');
const { createMetrics, healthAnswer, dashboardOptions, NO_METRICS } = require('../operations');

const WORK_MS = 5;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const tenantOf = (req) => req.headers['x-tenant'] || 'anonymous';

/** `@Decorator() method(@Req() req, @Res() res)` in plain JavaScript. */
function route(Class, name, decorators, params = []) {
  const descriptor = Object.getOwnPropertyDescriptor(Class.prototype, name);
  for (const decorate of decorators) decorate(Class.prototype, name, descriptor);
  params.forEach((param, index) => param(Class.prototype, name, index));
}
/** Constructor injection by hand: `constructor(@Inject(token) a, …)`. */
const inject = (Class, tokens) => Reflect.defineMetadata('design:paramtypes', tokens, Class);

/**
 * @param {object} [options]  as ../express/app.js's createApp, and:
 * @param {'express' | 'fastify'} [options.platform]
 * @param {boolean} [options.worker]  run the deferred imports in this process (the module's worker and dispatcher)
 * @returns {Promise<import('@nestjs/common').INestApplication>} the initialised app (`app.listen(port)` to serve)
 */
async function createApp({ store, limiter, limit = 100, windowMs = 1000, plans = PLANS, onWork, platform = 'express', worker = false } = {}) {
  limiter ??= bulk.createLimiter({ store: store ?? new bulk.MemoryStore(), name: 'api', limit, windowMs });
  const metrics = createMetrics(limiter);
  const work = async (req, kind) => {
    onWork?.({ tenant: tenantOf(req), kind, at: Date.now() });
    await sleep(WORK_MS);
  };

  class ApiController {
    async report(req) {
      await work(req, 'request');
      return { id: req.params.id, tenant: tenantOf(req) };
    }
    async export(req) {
      await work(req, 'request');
      return { rows: [] };
    }
    async import(req) {
      await work(req, 'request');
      return { imported: req.body?.rows ?? 1 };
    }
  }
  Controller('api')(ApiController);
  route(ApiController, 'report', [Get('reports/:id')], [Req()]);
  route(ApiController, 'export', [Get('export')], [Req()]);
  const defer = { type: 'import', payload: (req) => ({ tenant: tenantOf(req), rows: req.body?.rows ?? 1 }), statusUrl: (id) => `/jobs/${id}` };
  route(ApiController, 'import', [Post('imports'), HttpCode(201), BulkLimit({ defer })], [Req()]);

  class OperationsController {
    constructor(host) {
      this.host = host;
    }
    async metrics(res) {
      const { status, type, body } = metrics ? await metrics.scrape() : NO_METRICS;
      this.host.httpAdapter.setHeader(res, 'Content-Type', type);
      this.host.httpAdapter.reply(res, body, status);
    }
    async health(res) {
      const { status, body } = await healthAnswer(limiter);
      this.host.httpAdapter.reply(res, body, status);
    }
  }
  Controller()(OperationsController);
  BulkLimit({ enabled: false })(OperationsController);
  inject(OperationsController, [HttpAdapterHost]);
  route(OperationsController, 'metrics', [Get('metrics')], [Res()]);
  route(OperationsController, 'health', [Get('health'), Header('Cache-Control', 'no-store')], [Res()]);

  /** The deferred imports' handler, found by the module at boot (as @nestjs/bullmq finds processors). */
  class ImportJob {
    constructor() {
      this.run = createJobHandlers({ onWork }).import;
    }
    handle(job) {
      return this.run(job);
    }
  }
  JobHandler('import')(ImportJob);
  Injectable()(ImportJob);

  const dashboard = dashboardOptions(limiter, plans, (req, name) => req.headers[name]);
  // eslint-disable-next-line @typescript-eslint/no-extraneous-class -- a Nest module is a decorated class
  class AppModule {}
  Module({
    imports: [
      BulkLimiterModule.forRoot({
        limiter,
        group: tenantOf,
        weight: (tenant) => plans[tenant] ?? 1,
        globalGuard: true,
        // on Redis the worker may run elsewhere (`npm run example:worker`)
        ...(worker ? {} : { worker: false, dispatcher: false }),
      }),
    ],
    controllers: [
      ApiController,
      OperationsController,
      jobStatusController({ group: tenantOf }),
      ...(dashboard ? [dashboardController(dashboard)] : []),
    ],
    providers: worker ? [ImportJob] : [],
  })(AppModule);

  const options = { logger: ['error', 'warn'] };
  const app =
    platform === 'fastify'
      ? await NestFactory.create(AppModule, new (require('@nestjs/platform-fastify').FastifyAdapter)(), options)
      : await NestFactory.create(AppModule, options);
  app.enableShutdownHooks();
  await app.init();
  return app;
}

module.exports = { createApp, createJobHandlers };
