/**
 * Metrics that a prom-client Registry formats but that count in plain numbers: the request path adds to
 * arrays, and the values are read only when Prometheus scrapes (`get()`). The Registry reads nothing but
 * `name`, `help`, `type`, `aggregator` and `get()`, so the user's own prom-client (whatever its version)
 * formats them, and this package needs no prom-client at run time.
 */
export type MetricType = 'counter' | 'gauge' | 'histogram';
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  readonly labels: Labels;
  readonly value: number;
  /** For histograms: `<name>_bucket`, `<name>_sum`, `<name>_count`. */
  readonly metricName?: string;
}

export class Collector {
  constructor(
    public name: string,
    readonly help: string,
    readonly type: MetricType,
    private readonly read: () => Sample[] | Promise<Sample[]>,
    /** How prom-client's AggregatorRegistry combines cluster workers. */
    readonly aggregator: 'sum' | 'max' = 'sum',
  ) {}

  async get(): Promise<{ name: string; help: string; type: MetricType; aggregator: string; values: Sample[] }> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: await this.read() };
  }

  /** `registry.resetMetrics()`: these values belong to the limiters, not to the registry. */
  reset(): void {}
}

/** A histogram's counts: `observe` is a short scan and two additions, no allocation. */
export class HistogramCounts {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length).fill(0);
  }

  observe(value: number): void {
    this.sum += value;
    this.count += 1;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]! += 1;
        return;
      }
    }
  }

  samples(name: string, labels: Labels): Sample[] {
    const out: Sample[] = [];
    let cumulative = 0;
    this.bounds.forEach((le, i) => {
      cumulative += this.counts[i]!;
      out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: String(le) }, value: cumulative });
    });
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: this.count });
    out.push({ metricName: `${name}_sum`, labels, value: this.sum });
    out.push({ metricName: `${name}_count`, labels, value: this.count });
    return out;
  }
}
