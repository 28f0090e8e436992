/**
 * BulkLimiterModule.forRoot(options) / forRootAsync({ imports, inject, useFactory }): the limiter (injected as
 * BULK_LIMITER), the guard (BulkLimiterGuard: `@UseGuards(BulkLimiterGuard)` on routes or controllers, or
 * `globalGuard: true` for every route), and the lifecycle (./lifecycle.ts). Global by default, as one limiter
 * usually guards one backend.
 */
import { Module, type DynamicModule, type ModuleMetadata, type Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { BulkLimitFilter } from './filter';
import { BulkLimiterGuard } from './guard';
import { BulkLimiterLifecycle } from './lifecycle';
import { resolveModuleOptions, type BulkLimiterModuleOptions, type ResolvedModuleOptions } from './options';
import { BULK_LIMITER, BULK_LIMITER_OPTIONS } from './tokens';
import { oneOf, optional } from '../util/validate';

/** How the module is set up (not part of the limiter's options, so known before any factory runs). */
export interface BulkLimiterModuleSetup {
  /** Run the guard on every HTTP route (`@SkipBulkLimit()` leaves one out). @defaultValue `false` */
  readonly globalGuard?: boolean;
  /** Provide the limiter and guard to every module. @defaultValue `true` */
  readonly isGlobal?: boolean;
  /**
   * `'respond'`: the module answers a rejected or deferred request (BulkLimitFilter, an APP_FILTER: problem+json as
   * on Express), unless a filter of the app comes first in Nest's order (a route's, a controller's, or a catch-all
   * passed to `app.useGlobalFilters`); `'next'`: the BulkLimitException goes to the app's filters. @defaultValue `'respond'`
   */
  readonly onLimit?: 'respond' | 'next';
}

export interface BulkLimiterModuleAsyncOptions extends BulkLimiterModuleSetup, Pick<ModuleMetadata, 'imports'> {
  readonly useFactory: (...args: never[]) => BulkLimiterModuleOptions | Promise<BulkLimiterModuleOptions>;
  readonly inject?: readonly unknown[];
}

// eslint-disable-next-line @typescript-eslint/no-extraneous-class -- a Nest module is a class with static factories
export class BulkLimiterModule {
  static forRoot(options: BulkLimiterModuleOptions & BulkLimiterModuleSetup): DynamicModule {
    const { globalGuard, isGlobal, onLimit, ...limiterOptions } = options ?? ({} as BulkLimiterModuleOptions);
    // checked now: a wrong option fails where it is written
    const resolved = resolveModuleOptions(limiterOptions);
    return moduleOf({ globalGuard, isGlobal, onLimit }, { provide: BULK_LIMITER_OPTIONS, useValue: resolved });
  }

  static forRootAsync(options: BulkLimiterModuleAsyncOptions): DynamicModule {
    const { useFactory, inject = [], imports = [], ...setup } = options;
    const provider: Provider = {
      provide: BULK_LIMITER_OPTIONS,
      useFactory: async (...args: unknown[]) => resolveModuleOptions(await (useFactory as (...a: unknown[]) => BulkLimiterModuleOptions)(...args)),
      inject: [...inject] as never[],
    };
    return moduleOf(setup, provider, imports);
  }
}

function moduleOf(setup: BulkLimiterModuleSetup, options: Provider, imports: ModuleMetadata['imports'] = []): DynamicModule {
  const providers: Provider[] = [
    options,
    { provide: BULK_LIMITER, useFactory: (resolved: ResolvedModuleOptions) => resolved.limiter, inject: [BULK_LIMITER_OPTIONS] },
    BulkLimiterGuard,
    BulkLimiterLifecycle,
  ];
  oneOf('globalGuard', setup.globalGuard, [true, false], optional);
  oneOf('isGlobal', setup.isGlobal, [true, false], optional);
  if (oneOf('onLimit', setup.onLimit, ['respond', 'next'], { fallback: 'respond' }) === 'respond') {
    providers.push({ provide: APP_FILTER, useClass: BulkLimitFilter });
  }
  if (setup.globalGuard === true) providers.push({ provide: APP_GUARD, useExisting: BulkLimiterGuard });
  return {
    module: BulkLimiterModule,
    global: setup.isGlobal ?? true,
    imports: [DiscoveryModule, ...imports],
    providers,
    exports: [BULK_LIMITER, BULK_LIMITER_OPTIONS, BulkLimiterGuard],
  };
}

Module({})(BulkLimiterModule);
