/**
 * The crash worker's Prometheus metrics (a registry of its own, like every Hearth process), served
 * on METRICS_PORT by `hearth crash-worker`. The queue figures are read from pg-boss's job table when
 * scraped, so every worker answers the same depth and age (a KEDA or HPA rule may read any of them).
 */
import client from 'prom-client';
import { CRASH_QUEUE_SCHEMA, CRASH_UPLOAD_QUEUE } from '@hearth/core/crashes';
import { declareMetrics, registerProcessMetrics, type MetricDeclarations } from '@hearth/core/process';
import { reportCursorLags, type ProjectRunOutcome, type StoreReportObserver } from '@hearth/core/commerce';
import type { Db } from '@hearth/core/db';
import type { OrderStatus } from '@hearth/core/shapes';

export type JobOutcome = 'recorded' | 'poison' | 'already-finished' | 'gone' | 'retry';

export class CrashWorkerMetrics {
  readonly registry = new client.Registry();
  private readonly declare = declareMetrics(client, this.registry);
  readonly jobs = this.declare.counter(
    'hearth_crash_jobs_total',
    'Crash-upload jobs by outcome (recorded; poison: finished with a reason, never retried; already-finished: another worker or an earlier attempt finished the upload; gone: the upload no longer exists; retry: failed, left to pg-boss to retry)',
    ['outcome'],
  );
  readonly poison = this.declare.counter('hearth_crash_poison_total', 'Uploads finished as poison, by reason (docs/crashes.md)', ['reason']);
  readonly parseDuration = this.declare.histogram(
    'hearth_crash_parse_duration_seconds',
    'Inflating and parsing one upload (poison ones included)',
    [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  readonly jobDuration = this.declare.histogram(
    'hearth_crash_job_duration_seconds',
    'One job from start to finish: read, parse, store files, record',
    [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  );
  readonly storedBytes = this.declare.counter('hearth_crash_file_bytes_total', "Bytes of crashes' files written to object storage");

  /** The commerce report job's (store-report.ts). */
  readonly storeReport: StoreReportMetrics;

  constructor(db: Db, collectDefaults = true) {
    this.storeReport = new StoreReportMetrics(this.declare, db);
    // Node's own metrics and the pool's (instruments.ts); the worker uses no Redis.
    registerProcessMetrics(client, this.registry, { db, defaults: collectDefaults });
    const sample = queueSampler(db);
    this.declare.gauge(
      'hearth_crash_queue_depth',
      'Crash-upload jobs waiting (created, or waiting for a retry) or held by a worker (active)',
      ['state'],
      async function collect() {
        const s = await sample();
        this.set({ state: 'waiting' }, s.waiting);
        this.set({ state: 'active' }, s.active);
      },
    );
    this.declare.gauge('hearth_crash_queue_oldest_age_seconds', 'Age of the oldest waiting crash-upload job (0 when none waits)', [], async function collect() {
      this.set((await sample()).oldestAgeSeconds);
    });
  }
}

/** The commerce report job's metrics (docs/observability.md): what it did, and how far its cursors lag. */
export class StoreReportMetrics implements StoreReportObserver {
  readonly runs: client.Counter<'outcome'>;
  readonly orders: client.Counter<'action' | 'status'>;
  readonly storeErrors: client.Counter<'call' | 'reason'>;
  readonly lastSuccess: client.Gauge;

  constructor(declare: MetricDeclarations, db: Db) {
    this.runs = declare.counter(
      'hearth_commerce_report_runs_total',
      "Projects' report runs by outcome (succeeded; failed: the store or an order could not be read or applied, tried again next tick; skipped: another runner held the project; unconfigured: no publisher key for it on this deployment)",
      ['outcome'],
    );
    this.orders = declare.counter(
      'hearth_commerce_report_orders_total',
      'Orders the report job moved, by action (settled, expired, revoked) and the status they reached',
      ['action', 'status'],
    );
    this.storeErrors = declare.counter('hearth_commerce_report_store_errors_total', "The store's failures met by the report job, by call and reason", [
      'call',
      'reason',
    ]);
    this.lastSuccess = declare.gauge(
      'hearth_commerce_report_last_success_timestamp_seconds',
      'When this process last finished a report tick in which no project failed, or else started the job (0: the job is off here)',
    );
    declare.gauge(
      'hearth_commerce_report_cursor_lag_seconds',
      "Seconds since a project's store report was last read to its end (read from the database: every worker answers the same)",
      ['project'],
      async function collect() {
        this.reset();
        for (const { project, lagSeconds } of await reportCursorLags(db)) this.set({ project }, lagSeconds);
      },
    );
  }

  projectRun(outcome: ProjectRunOutcome): void {
    this.runs.inc({ outcome });
  }

  order(action: 'settled' | 'expired' | 'revoked', status: OrderStatus): void {
    this.orders.inc({ action, status });
  }

  storeError(call: string, reason: string): void {
    this.storeErrors.inc({ call, reason });
  }

  started(at: Date): void {
    this.lastSuccess.set(at.getTime() / 1000);
  }

  tickSucceeded(at: Date): void {
    this.lastSuccess.set(at.getTime() / 1000);
  }
}

/** One query per scrape for both gauges (the second collect within a second reuses it). */
function queueSampler(db: Db) {
  let last: { at: number; value: Promise<{ waiting: number; active: number; oldestAgeSeconds: number }> } | null = null;
  return () => {
    if (last && Date.now() - last.at < 1000) return last.value;
    const value = db
      .raw(
        `SELECT count(*) FILTER (WHERE state IN ('created', 'retry'))::int AS waiting,
                count(*) FILTER (WHERE state = 'active')::int AS active,
                coalesce(extract(epoch FROM now() - min(created_on) FILTER (WHERE state IN ('created', 'retry'))), 0)::float8 AS age
           FROM ${CRASH_QUEUE_SCHEMA}.job WHERE name = ? AND state IN ('created', 'retry', 'active')`,
        [CRASH_UPLOAD_QUEUE],
      )
      .then((r: { rows: { waiting: number; active: number; age: number }[] }) => ({
        waiting: r.rows[0].waiting,
        active: r.rows[0].active,
        oldestAgeSeconds: r.rows[0].age,
      }));
    last = { at: Date.now(), value };
    value.catch(() => (last = null));
    return value;
  };
}
