/**
 * How every Hearth process declares its own metrics: each into the process's registry, one call a
 * metric, its label names typed from the call. The core does not load prom-client (serving.ts's rule):
 * only its types are read here, and each process passes the module it imported.
 */
import type * as PromClient from 'prom-client';
import type { SeriesCounter, SeriesHistogram } from './series-metrics';

export type PromClientModule = typeof PromClient;

export interface MetricDeclarations {
  counter<L extends string = never>(name: string, help: string, labelNames?: readonly L[]): PromClient.Counter<L>;
  /** `collect` runs at each scrape, before the gauge is read (a figure read from elsewhere then). */
  gauge<L extends string = never>(
    name: string,
    help: string,
    labelNames?: readonly L[],
    collect?: (this: PromClient.Gauge<L>) => void | Promise<void>,
  ): PromClient.Gauge<L>;
  /** A series metric (series-metrics.ts, the hot path's), registered as it is. */
  series<M extends SeriesCounter | SeriesHistogram>(metric: M): M;
  histogram<L extends string = never>(name: string, help: string, buckets: number[], labelNames?: readonly L[]): PromClient.Histogram<L>;
}

/** Declarations that register into `registry` (and no other: prom-client's global registry stays empty). */
export function declareMetrics(client: PromClientModule, registry: PromClient.Registry): MetricDeclarations {
  const registers = [registry];
  return {
    counter: (name, help, labelNames = []) => new client.Counter({ name, help, labelNames, registers }),
    gauge: (name, help, labelNames = [], collect) => new client.Gauge({ name, help, labelNames, registers, collect }),
    series: (metric) => {
      // prom-client's registry takes any object of its metrics' shape (name, get, reset).
      registry.registerMetric(metric as unknown as PromClient.Metric);
      return metric;
    },
    histogram: (name, help, buckets, labelNames = []) => new client.Histogram({ name, help, buckets, labelNames, registers }),
  };
}
