/**
 * The crash-upload job queue: pg-boss over Hearth's own PostgreSQL (docs/crashes.md: the database is the
 * system of record, the job queue included). The API queues a job in the transaction that records
 * the upload (`enqueueCrashUpload` with the caller's transaction); crash workers are competing
 * consumers. The schema and the queue are made by the migrations, never by a process at start.
 */
import PgBoss from 'pg-boss';
import type { Queryable } from '../db/knex';

export const CRASH_QUEUE_SCHEMA = 'pgboss';
export const CRASH_UPLOAD_QUEUE = 'crash-upload';

/**
 * Retries with backoff for what may pass (storage or database trouble); a job a worker stopped
 * holding (killed mid-job) expires after `expireInSeconds` and is retried by another. An upload that
 * cannot be parsed is poison: the worker records it so and completes the job, it is never retried.
 */
export const CRASH_UPLOAD_QUEUE_OPTIONS = {
  policy: 'standard',
  retryLimit: 8,
  retryDelay: 5,
  retryBackoff: true,
  expireInSeconds: 300,
  retentionMinutes: 60 * 24 * 14,
} as const;

/** The statements that make pg-boss's schema, for the migration (the processes never make it). */
export function crashQueueSchemaSql(): string {
  return PgBoss.getConstructionPlans(CRASH_QUEUE_SCHEMA);
}

export interface CrashUploadJob {
  uploadId: string;
}

/** pg-boss's database adapter over a knex pool or transaction: its statements join that transaction. */
export function bossDb(db: Queryable): PgBoss.Db {
  return {
    executeSql: async (text: string, values: unknown[] = []) => {
      const result = await db.raw(...knexBindings(text, values));
      return { rows: (result as { rows: unknown[] }).rows };
    },
  };
}

/**
 * pg-boss writes `$n` placeholders (one value may be used twice); knex.raw takes `?` in order. Each
 * `$n` becomes a `?` bound to its value, and a literal `?` (a jsonb operator) is escaped for knex.
 */
export function knexBindings(text: string, values: unknown[]): [string, never[]] {
  const bindings: unknown[] = [];
  const sql = text.replace(/\?|\$(\d+)/g, (match, n: string | undefined) => {
    if (n === undefined) return '\\?';
    bindings.push(values[Number(n) - 1] ?? null); // pg sends undefined as NULL; knex refuses it
    return '?';
  });
  return [sql, bindings as never[]];
}

/**
 * Queues the processing of a recorded upload, in `db`'s transaction. A boss that is never started
 * only writes jobs (no polling, no maintenance): pass the one made by `crashQueueSender`.
 */
export async function enqueueCrashUpload(sender: PgBoss, db: Queryable, job: CrashUploadJob): Promise<string> {
  const id = await sender.send(CRASH_UPLOAD_QUEUE, job, { db: bossDb(db) });
  if (!id) throw new Error('the crash-upload queue refused the job');
  return id;
}

/** A boss for sending only, over `db`: nothing is started, so it opens no pool of its own. */
export function crashQueueSender(db: Queryable): PgBoss {
  return new PgBoss({ db: bossDb(db), schema: CRASH_QUEUE_SCHEMA, migrate: false, supervise: false, schedule: false });
}
