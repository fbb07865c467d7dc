import client from 'prom-client';
import type { HearthCore } from '@hearth/core/hearth';
import { SeriesCounter, SeriesHistogram, declareMetrics, registerProcessMetrics, type CounterSeries, type HistogramSeries } from '@hearth/core/process';

/**
 * The API's Prometheus metrics, in a registry of its own (served on METRICS_PORT). Labels are closed
 * sets: a route is its template (`/players/:playerId`), never the path; a limit, a credential outcome,
 * an error code or a move kind is a name the code gives. No metric is labelled by environment, project
 * or player (tenants are unbounded); docs/operations.md lists every metric.
 */
export class ApiMetrics {
  readonly registry = new client.Registry();
  private readonly declare = declareMetrics(client, this.registry);
  // The per-request metrics are series metrics (core process/series-metrics.ts): found once by their
  // label values and kept, so a request does not pay prom-client's label checks and hashing.
  readonly requests = this.declare.series(
    new SeriesCounter('hearth_http_requests_total', 'HTTP requests by route template, method and status', ['route', 'method', 'status']),
  );
  readonly duration = this.declare.series(
    new SeriesHistogram(
      'hearth_http_request_duration_seconds',
      'HTTP request duration by route template, method and status',
      ['route', 'method', 'status'],
      // 1 ms (a cached read) to 5 s (past any client's patience).
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    ),
  );
  readonly rateLimited = this.declare.counter('hearth_rate_limit_refusals_total', 'Requests refused with 429, by the limit that refused them', ['limit']);
  readonly rateLimitFailOpen = this.declare.counter(
    'hearth_rate_limit_fail_open_total',
    'Requests let through unchecked because the rate-limit store could not be reached',
  );

  /** Every refusal by route template and error code (the crash uploads' refusals by reason among them). */
  readonly refusals = this.declare.counter('hearth_http_refusals_total', 'Requests refused, by route template and error code', ['route', 'error']);
  readonly crashUploadsAccepted = this.declare.counter(
    'hearth_crash_uploads_accepted_total',
    'Crash uploads kept and queued (refusals: hearth_http_refusals_total{route="/crash-reports/:appKey"})',
  );
  readonly crashUploadBytes = this.declare.counter('hearth_crash_upload_bytes_total', 'Bytes of the crash uploads kept');

  readonly rateLimitChecks = this.declare.series(
    new SeriesCounter('hearth_rate_limit_checks_total', 'Rate-limit windows checked, by limit (a request checks each limit that applies to it once)', [
      'limit',
    ]),
  );
  readonly credentials = this.declare.series(
    new SeriesCounter(
      'hearth_credential_checks_total',
      'Bearer credentials checked, by kind (server, player, licence, dashboard; unknown when refused before its kind was known) and outcome (accepted, missing, malformed, invalid, wrong-kind, no-permission)',
      ['kind', 'outcome'],
    ),
  );
  readonly idempotency = this.declare.counter(
    'hearth_idempotency_requests_total',
    'Requests with an Idempotency-Key, by outcome (first: ran, replayed: answered from the record, conflict: the key was used for another request)',
    ['outcome'],
  );
  readonly ledgerMoves = this.declare.series(
    new SeriesCounter(
      'hearth_ledger_moves_total',
      'Ledger entries committed, by move kind (credit, debit, refund, consume) and source (move, purchase: a purchase’s charge)',
      ['kind', 'source'],
    ),
  );
  readonly saveWrites = this.declare.counter('hearth_save_writes_total', 'Save slots written, by outcome (created, replaced)', ['outcome']);
  readonly saveBytes = this.declare.counter('hearth_save_bytes_written_total', 'Bytes of save data written (each write’s stored size)');

  /**
   * Each answered request's series, by route template, then method, then status (closed sets). Found
   * by nested maps rather than a key made per request: the templates and methods are the same
   * strings every time (the route table's, node's), so each lookup reuses a hash V8 keeps.
   */
  private readonly answered = new Map<string, Map<string, Map<number, { count: CounterSeries; time: HistogramSeries }>>>();

  /** One answered request: its count and its duration. */
  countAnswer(route: string, method: string, status: number, seconds: number): void {
    let ofRoute = this.answered.get(route);
    if (!ofRoute) this.answered.set(route, (ofRoute = new Map()));
    let ofMethod = ofRoute.get(method);
    if (!ofMethod) ofRoute.set(method, (ofMethod = new Map()));
    let series = ofMethod.get(status);
    if (!series) {
      const labels = [route, method, String(status)];
      ofMethod.set(status, (series = { count: this.requests.series(...labels), time: this.duration.series(...labels) }));
    }
    series.count.inc();
    series.time.observe(seconds);
  }

  /** Each limit a request checks, once (the series kept by limit name: a few names, every request). */
  countRateLimitChecks(checks: readonly { name: string }[]): void {
    for (const check of checks) {
      let series = this.checkSeries.get(check.name);
      if (!series) this.checkSeries.set(check.name, (series = this.rateLimitChecks.series(check.name)));
      series.inc();
    }
  }
  private readonly checkSeries = new Map<string, CounterSeries>();

  /** A credential checked: its kind and the outcome (closed sets, found by kind then outcome). */
  countCredential(kind: string, outcome: string): void {
    let ofKind = this.credentialSeries.get(kind);
    if (!ofKind) this.credentialSeries.set(kind, (ofKind = new Map()));
    let series = ofKind.get(outcome);
    if (!series) ofKind.set(outcome, (series = this.credentials.series(kind, outcome)));
    series.inc();
  }
  private readonly credentialSeries = new Map<string, Map<string, CounterSeries>>();

  private watching = false;

  constructor(private readonly collectDefaults = true) {}

  /**
   * Starts hearing the core: its domain events (ledger, saves), its pool and queries, its Redis
   * commands, and Node's own metrics. Once per registry; the answer stops it.
   */
  watch(core: HearthCore): () => void {
    if (this.watching) throw new Error('these API metrics already watch a core');
    this.watching = true;
    const stopProcess = registerProcessMetrics(client, this.registry, { defaults: this.collectDefaults, db: core.db, coordination: core.coordination });
    const detach = core.telemetry.attach({
      ledgerMove: (kind, source) => this.ledgerMoves.series(kind, source).inc(),
      saveWritten: (bytes, created) => {
        this.saveWrites.inc({ outcome: created ? 'created' : 'replaced' });
        this.saveBytes.inc(bytes);
      },
    });
    return () => {
      stopProcess();
      detach();
    };
  }
}
