import client from 'prom-client';
import { declareMetrics, registerProcessMetrics, type ProcessMetricsDeps } from '@hearth/core/process';

/** The realtime process's Prometheus metrics, in a registry of its own (served on METRICS_PORT). */
export class RealtimeMetrics {
  readonly registry = new client.Registry();
  private readonly declare = declareMetrics(client, this.registry);
  readonly connections = this.declare.gauge('hearth_realtime_connections', 'Open sockets, by state (pending: not yet authorized)', ['state']);
  readonly framesIn = this.declare.counter('hearth_realtime_frames_in_total', 'Client frames received, by type (invalid: refused as malformed)', ['type']);
  readonly framesOut = this.declare.counter('hearth_realtime_frames_out_total', 'Server frames sent, by type', ['type']);
  readonly closes = this.declare.counter(
    'hearth_realtime_closes_total',
    'Sockets closed, by close code (the server’s when it closed them, else the client’s; 1006 when dropped)',
    ['code'],
  );
  readonly events = this.declare.counter('hearth_realtime_session_events_total', 'Session events received from the API processes');
  readonly lateEvents = this.declare.counter(
    'hearth_realtime_session_events_late_total',
    'Session events that arrived after a newer state of their session: no session frame was sent for them',
  );
  readonly eventLag = this.declare.histogram(
    'hearth_realtime_event_lag_seconds',
    'From the API committing a session change to this process handing its frames to the sockets',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  );
  readonly upgradesRefused = this.declare.counter(
    'hearth_realtime_upgrades_refused_total',
    'Upgrades answered with an HTTP error instead of a socket, by reason (rate-limited: the per-address limit; origin: a browser page no environment allows)',
    ['reason'],
  );
  readonly rateLimitFailOpen = this.declare.counter(
    'hearth_realtime_rate_limit_fail_open_total',
    'Upgrades let through unchecked because the rate-limit store could not be reached',
  );

  private watching = false;

  constructor(private readonly collectDefaults = true) {}

  /** Starts Node's own metrics and the pool's and Redis's (instruments.ts), once; the answer stops them. */
  watch(deps: Omit<ProcessMetricsDeps, 'defaults'>): () => void {
    if (this.watching) throw new Error('these realtime metrics already watch a process');
    this.watching = true;
    return registerProcessMetrics(client, this.registry, { ...deps, defaults: this.collectDefaults });
  }
}
