/** Typed access to the demo's plain-JS recorder, summary, report and dashboard probe. */
/* eslint-disable @typescript-eslint/no-require-imports */

export interface DemoTenant {
  name: string;
  weight: number;
  route: string;
  rate: number;
  role: string;
}

export interface RecorderLike {
  count(outcome: string, tenant: string, atMs: number): void;
  work(event: { tenant: string; at: number }): void;
  jobDone(event: { tenant: string; at: number }): void;
}

export interface DemoSystem {
  key: 'ours' | 'baseline';
  title: string;
  deferring: boolean;
  recorder: RecorderLike;
}

export interface SpecLike {
  limit: number;
  windowMs: number;
  burst: number;
  sustained: boolean;
}

export const { Recorder } = require('../../examples/demo/recorder') as {
  Recorder: new (options: { tenants: DemoTenant[]; startMs: number; bucketMs?: number }) => RecorderLike;
};

export const { summarize, formatSummary, strictCapacityPerS } = require('../../examples/demo/summary') as {
  summarize(input: {
    systems: DemoSystem[];
    tenants: DemoTenant[];
    spec: SpecLike;
    durationMs: number;
    drainedAtMs: Record<string, number>;
    storeKind: string;
  }): unknown;
  formatSummary(summary: unknown): string;
  strictCapacityPerS(spec: SpecLike): number;
};

export const { renderReport } = require('../../examples/demo/report') as {
  renderReport(input: { summary: unknown; systems: DemoSystem[]; endMs: number }): string;
};

export const { probeDashboard } = require('../../examples/demo/dashboard-probe') as {
  probeDashboard(port: number, options?: { timeoutMs?: number }): Promise<string | null>;
};
