/**
 * The operator's Prometheus metrics (a registry of its own, like every Hearth process), served with
 * its probes on METRICS_PORT (operator.ts).
 */
import client from 'prom-client';
import { declareMetrics, registerProcessMetrics, type ProcessMetricsDeps } from '@hearth/core/process';
import { NotReadyObjects } from './not-ready';
import { TerminatingObjects } from './terminating';

/** What the lag gauge reads of a kind's work queue (KeyedQueue). */
export interface QueueAge {
  oldestAgeSeconds(): number;
}

export type Outcome = 'ready' | 'refused' | 'error' | 'removed' | 'gone';

export class OperatorMetrics {
  readonly registry = new client.Registry();
  private readonly declare = declareMetrics(client, this.registry);
  readonly reconciles = this.declare.counter(
    'hearth_operator_reconciles_total',
    'Reconciles by kind and outcome (ready, refused: the spec was refused, error: retried, removed: a deletion cleaned up, gone: the object no longer existed)',
    ['kind', 'outcome'],
  );
  readonly duration = this.declare.histogram(
    'hearth_operator_reconcile_duration_seconds',
    'Reconcile duration by kind',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ['kind'],
  );
  readonly queueDepth = this.declare.gauge('hearth_operator_queue_depth', 'Objects waiting for or in a reconcile, by kind', ['kind']);
  /** kind → its controller's queue (the newest controller of a kind replaces the one before). */
  private readonly queues = new Map<string, QueueAge>();
  readonly queueOldest = this.declare.gauge(
    'hearth_operator_queue_oldest_seconds',
    'Reconcile lag: seconds since the oldest event not yet served by a finished reconcile (waiting or in a reconcile) was queued, by kind (0: none)',
    ['kind'],
    () => {
      this.queueOldest.reset();
      for (const [kind, queue] of this.queues) this.queueOldest.set({ kind }, queue.oldestAgeSeconds());
    },
  );
  readonly retries = this.declare.counter('hearth_operator_retries_total', 'Reconciles scheduled again after a backoff, by kind', ['kind']);
  readonly watchRestarts = this.declare.counter(
    'hearth_operator_watch_restarts_total',
    'Watches started over, by kind and reason (relist: the interval, gone: 410, error, closed)',
    ['kind', 'reason'],
  );
  readonly notReady = new NotReadyObjects(this.declare);
  readonly terminating = new TerminatingObjects(this.declare);
  readonly leader = this.declare.gauge('hearth_operator_leader', '1 while this replica holds the Lease and reconciles, else 0');

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
