/**
 * The operator's Prometheus metrics (a registry of its own, like every Hearth process) and its
 * probe endpoints, all on METRICS_PORT: /metrics, /healthz (the process answers), /readyz (it reached
 * the API server within the last few lease rounds, leader or standby).
 */
import http from 'node:http';
import client from 'prom-client';
import { closeServer, listen, shownHost } from '@hearth/core';

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
  readonly leader = new client.Gauge({
    name: 'hearth_operator_leader',
    help: '1 while this replica holds the Lease and reconciles, else 0',
    registers: [this.registry],
  });

  constructor(collectDefaults = true) {
    if (collectDefaults) client.collectDefaultMetrics({ register: this.registry });
    this.leader.set(0);
  }
}

/** /metrics, /healthz and /readyz on one port. */
export async function startProbeServer(
  metrics: OperatorMetrics,
  port: number,
  host: string,
  ready: () => boolean,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz') return ready() ? json(200, { status: 'ok' }) : json(503, { status: 'unavailable', reason: 'the Kubernetes API server has not answered recently' });
    if (path !== '/metrics') return json(404, { status: 'not-found' });
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  const bound = await listen(server, port, host);
  return { url: `http://${shownHost(host)}:${bound}`, close: () => closeServer(server, { dropAll: true }) };
}
