/**
 * The operator's Prometheus metrics (a registry of its own, like every Hearth process), served with
 * its probes on METRICS_PORT (operator.ts).
 */
import client from 'prom-client';
import { registerProcessMetrics, type ProcessMetricsDeps } from '@hearth/core/process';
import { NotReadyObjects } from './not-ready';
import { TerminatingObjects } from './terminating';

/** What the lag gauge reads of a kind's work queue (KeyedQueue). */
export interface QueueAge {
  oldestAgeSeconds(): number;
}

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
  /** kind → its controller's queue (the newest controller of a kind replaces the one before). */
  private readonly queues = new Map<string, QueueAge>();
  readonly queueOldest = new client.Gauge({
    name: 'hearth_operator_queue_oldest_seconds',
    help: 'Reconcile lag: seconds since the oldest event not yet served by a finished reconcile (waiting or in a reconcile) was queued, by kind (0: none)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
    collect: () => {
      this.queueOldest.reset();
      for (const [kind, queue] of this.queues) this.queueOldest.set({ kind }, queue.oldestAgeSeconds());
    },
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
  readonly terminating = new TerminatingObjects(this.registry);
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

  /** The lag of a kind's queue is read from `queue` at each scrape. */
  observeQueue(kind: string, queue: QueueAge): void {
    this.queues.set(kind, queue);
  }

  /** Stops observing the pool and Redis. */
  readonly stopProcessMetrics: () => void;
}
