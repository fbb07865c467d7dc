import client from 'prom-client';
import { registerProcessMetrics, type ProcessMetricsDeps } from '@hearth/core/process';

/** The realtime process's Prometheus metrics, in a registry of its own (served on METRICS_PORT). */
export class RealtimeMetrics {
  readonly registry = new client.Registry();
  readonly connections = new client.Gauge({
    name: 'hearth_realtime_connections',
    help: 'Open sockets, by state (pending: not yet authorized)',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly framesIn = new client.Counter({
    name: 'hearth_realtime_frames_in_total',
    help: 'Client frames received, by type (invalid: refused as malformed)',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly framesOut = new client.Counter({
    name: 'hearth_realtime_frames_out_total',
    help: 'Server frames sent, by type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly closes = new client.Counter({
    name: 'hearth_realtime_closes_total',
    help: 'Sockets closed, by close code (the server’s when it closed them, else the client’s; 1006 when dropped)',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  readonly events = new client.Counter({
    name: 'hearth_realtime_session_events_total',
    help: 'Session events received from the API processes',
    registers: [this.registry],
  });
  readonly eventLag = new client.Histogram({
    name: 'hearth_realtime_event_lag_seconds',
    help: 'From the API committing a session change to this process handing its frames to the sockets',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });

  readonly upgradesRefused = new client.Counter({
    name: 'hearth_realtime_upgrades_refused_total',
    help: 'Upgrades answered with an HTTP error instead of a socket, by reason (rate-limited: the per-address limit; origin: a browser page no environment allows)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly rateLimitFailOpen = new client.Counter({
    name: 'hearth_realtime_rate_limit_fail_open_total',
    help: 'Upgrades let through unchecked because the rate-limit store could not be reached',
    registers: [this.registry],
  });

  private watching = false;

  constructor(private readonly collectDefaults = true) {}

  /** Starts Node's own metrics and the pool's and Redis's (instruments.ts), once; the answer stops them. */
  watch(deps: Omit<ProcessMetricsDeps, 'defaults'>): () => void {
    if (this.watching) throw new Error('these realtime metrics already watch a process');
    this.watching = true;
    return registerProcessMetrics(client, this.registry, { ...deps, defaults: this.collectDefaults });
  }
}
