/**
 * What the module does with the app's lifecycle: at boot, finds the `@JobHandler` providers and every route's
 * settings (a wrong one fails the boot, not a request), and starts a worker and a dispatcher when there are
 * handlers; at shutdown, lets the running jobs finish (up to the worker's close timeout), stops both, and closes
 * a limiter the module made.
 */
import {
  Inject,
  Injectable,
  Logger,
  type Type,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { ConfigError } from '../errors';
import { Dispatcher } from '../queue/dispatcher';
import { Worker } from '../queue/worker';
import type { JobHandler as Handler } from '../queue/worker-options';
import { BulkLimiterGuard } from './guard';
import type { ResolvedModuleOptions } from './options';
import { BULK_LIMITER_OPTIONS, JOB_HANDLER } from './tokens';

/** How long shutdown waits for running jobs before it aborts them. */
const CLOSE_TIMEOUT_MS = 10_000;

export class BulkLimiterLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private worker: Worker | undefined;
  private dispatcher: Dispatcher | undefined;

  constructor(
    private readonly options: ResolvedModuleOptions,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly guard: BulkLimiterGuard,
  ) {}

  /** The job handlers the module found, by type. */
  readonly handlers: Record<string, Handler> = {};

  onApplicationBootstrap(): void {
    this.checkRoutes();
    this.findHandlers();
    const { limiter, worker, dispatcher } = this.options;
    const hasHandlers = Object.keys(this.handlers).length > 0;
    const logger = new Logger('BulkLimiter');
    if (dispatcher !== false && (hasHandlers || dispatcher !== undefined)) {
      this.dispatcher = new Dispatcher({ logger, ...dispatcher, limiter });
      this.dispatcher.start();
    }
    if (worker !== false && hasHandlers) {
      this.worker = new Worker({ logger, ...worker, limiter, handlers: this.handlers });
      this.worker.start();
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker?.close(CLOSE_TIMEOUT_MS);
    await this.dispatcher?.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.options.owned) await this.options.limiter.close();
  }

  private findHandlers(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const { instance, metatype } = wrapper;
      if (!instance || !metatype || typeof metatype !== 'function') continue;
      const type = this.reflector.get<string | undefined>(JOB_HANDLER, metatype);
      if (type === undefined) continue;
      const handle = (instance as { handle?: unknown }).handle;
      if (typeof handle !== 'function') {
        throw new ConfigError('ERR_BL_JOB_HANDLER', `@JobHandler('${type}') ${metatype.name} has no handle(job, signal) method`);
      }
      if (type in this.handlers) throw new ConfigError('ERR_BL_JOB_HANDLER', `Two @JobHandler providers for job type '${type}'`);
      this.handlers[type] = handle.bind(instance) as Handler;
    }
  }

  /** Makes every route's runner now, so that a wrong `@BulkLimit` fails the boot. */
  private checkRoutes(): void {
    for (const wrapper of this.discovery.getControllers()) {
      const { metatype, instance } = wrapper;
      if (!instance || typeof metatype !== 'function') continue;
      const prototype = Object.getPrototypeOf(instance) as Record<string, (...args: never[]) => unknown>;
      for (const name of this.scanner.getAllMethodNames(prototype)) this.guard.runnerOf(metatype as Type<unknown>, prototype[name]!);
    }
  }
}

Injectable()(BulkLimiterLifecycle);
Inject(BULK_LIMITER_OPTIONS)(BulkLimiterLifecycle, undefined, 0);
Inject(DiscoveryService)(BulkLimiterLifecycle, undefined, 1);
Inject(MetadataScanner)(BulkLimiterLifecycle, undefined, 2);
Inject(Reflector)(BulkLimiterLifecycle, undefined, 3);
Inject(BulkLimiterGuard)(BulkLimiterLifecycle, undefined, 4);
