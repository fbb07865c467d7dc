import client from 'prom-client';

/** The API's Prometheus metrics, in a registry of its own (served on METRICS_PORT). */
export class ApiMetrics {
  readonly registry = new client.Registry();
  readonly requests = new client.Counter({
    name: 'hearth_http_requests_total',
    help: 'HTTP requests by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly duration = new client.Histogram({
    name: 'hearth_http_request_duration_seconds',
    help: 'HTTP request duration by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly rateLimited = new client.Counter({
    name: 'hearth_rate_limit_refusals_total',
    help: 'Requests refused with 429, by the limit that refused them',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });
  readonly rateLimitFailOpen = new client.Counter({
    name: 'hearth_rate_limit_fail_open_total',
    help: 'Requests let through unchecked because the rate-limit store could not be reached',
    registers: [this.registry],
  });

  /** Every refusal by route template and error code (the crash uploads' refusals by reason among them). */
  readonly refusals = new client.Counter({
    name: 'hearth_http_refusals_total',
    help: 'Requests refused, by route template and error code',
    labelNames: ['route', 'error'] as const,
    registers: [this.registry],
  });
  readonly crashUploadsAccepted = new client.Counter({
    name: 'hearth_crash_uploads_accepted_total',
    help: 'Crash uploads kept and queued (refusals: hearth_http_refusals_total{route="/crash-reports/:appKey"})',
    registers: [this.registry],
  });
  readonly crashUploadBytes = new client.Counter({
    name: 'hearth_crash_upload_bytes_total',
    help: 'Bytes of the crash uploads kept',
    registers: [this.registry],
  });

  constructor(collectDefaults = true) {
    if (collectDefaults) client.collectDefaultMetrics({ register: this.registry });
  }
}
