/**
 * The operator's Prometheus metrics (a registry of its own, like every Hearth process), served with
 * its probes on METRICS_PORT (operator.ts).
 */
import client from 'prom-client';
import { registerProcessMetrics, type ProcessMetricsDeps } from '@hearth/core';
import { NotReadyObjects } from './not-ready';

export type Outcome = 'ready' | 'refused' | 'error' | 'removed' | 'gone';

export class OperatorMetrics {
  readonly registry = new client.Registry();
  readonly reconciles = new client.Counter({
    name: 'hearth_operator_reconciles_total',
    help: 'Reconciles by kind and outcome (ready, refused: the spec was refused, error: retried, removed: a deletion cleaned up, gone: the object no longer existed)',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly duration = new client.Histogram({
    name: 'hearth_operator_reconcile_duration_seconds',
    help: 'Reconcile duration by kind',
    labelNames: ['kind'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly queueDepth = new client.Gauge({
    name: 'hearth_operator_queue_depth',
    help: 'Objects waiting for or in a reconcile, by kind',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly retries = new client.Counter({
    name: 'hearth_operator_retries_total',
    help: 'Reconciles scheduled again after a backoff, by kind',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly watchRestarts = new client.Counter({
    name: 'hearth_operator_watch_restarts_total',
    help: 'Watches started over, by kind and reason (relist: the interval, gone: 410, error, closed)',
    labelNames: ['kind', 'reason'] as const,
    registers: [this.registry],
  });
  readonly notReady = new NotReadyObjects(this.registry);
  readonly leader = new client.Gauge({
    name: 'hearth_operator_leader',
    help: '1 while this replica holds the Lease and reconciles, else 0',
    registers: [this.registry],
  });

  /** `process`: the pool and Redis the reconcilers use (instruments.ts), with Node's own metrics unless `collectDefaults` is false. */
  constructor(collectDefaults = true, process: Omit<ProcessMetricsDeps, 'defaults'> = {}) {
    this.stopProcessMetrics = registerProcessMetrics(client, this.registry, { ...process, defaults: collectDefaults });
    this.leader.set(0);
  }

  /** Stops observing the pool and Redis. */
  readonly stopProcessMetrics: () => void;
}
