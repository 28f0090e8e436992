/**
 * The contract, at the bottom of every import chain: the public types a limiter answers in, and what a store
 * implements (`Store`, `LimiterStore`, `QueueStore`), published as `bulk-limiter/store`. Every store (Redis,
 * memory) passes one conformance suite (test/conformance).
 */
export * from './limiter-spec';
export * from './decision';
export * from './limiter-store';
export * from './queue-store';
export * from './overrides';
