/**
 * Receiving a crash upload (spec §4 Crash reports, §8; docs/crashes.md "Uploading crash reports"):
 * the body is streamed into object storage as it arrives, then one transaction records the upload
 * and queues its job, so an upload is kept and queued, or nothing of it is kept.
 */
import type { Readable } from 'node:stream';
import type PgBoss from 'pg-boss';
import type { RateCheck } from '../coord/coordination';
import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { Refusal, refuse } from '../errors';
import { randomId } from '../ids';
import type { EnvironmentContext } from '../tenancy/environments';
import { ObjectTooLarge, type ObjectStore } from '../storage/object-store';
import { crashQueueSender, enqueueCrashUpload } from './queue';
import { CRASH_PARAMETER_KEPT_CHARS, type CrashReporterQuery } from '../shapes/crashes';

/** Spec §8: more than 10 uploads per 10 minutes from one address to one environment are refused. */
export const CRASH_UPLOADS_PER_ADDRESS = { limit: 10, windowSeconds: 600 } as const;
/** Spec §8: more than 600 uploads per hour to one environment, from everybody together, are refused. */
export const CRASH_UPLOADS_PER_ENVIRONMENT = { limit: 600, windowSeconds: 3600 } as const;

/**
 * The crash-upload windows of a request from `ip` into `env`, counted together (the request passes
 * only when neither would be passed, and only then counts in both). Both counters carry the
 * environment's hash tag, so one atomic call checks them on Redis Cluster too.
 */
export function crashUploadChecks(env: EnvironmentContext, ip: string): RateCheck[] {
  const tag = `{e${env.id}}`;
  return [
    { name: 'crash-uploads-address', key: `${tag}:crash:a:${ip}`, ...CRASH_UPLOADS_PER_ADDRESS },
    { name: 'crash-uploads-environment', key: `${tag}:crash:h`, ...CRASH_UPLOADS_PER_ENVIRONMENT },
  ];
}

export interface ReceivedCrashUpload {
  uploadId: string;
  storageKey: string;
  sizeBytes: number;
  sha256: string;
}

/**
 * The queue's depth as the chart's KEDA ScaledObject counts it (charts/hearth _helpers.tpl
 * `hearth.crashQueueDepthQuery`, the same text; test/chart checks they agree): jobs waiting for a
 * worker, new or waiting to be retried.
 */
export const CRASH_QUEUE_DEPTH_SQL = "SELECT count(*) FROM pgboss.job WHERE name = 'crash-upload' AND state IN ('created', 'retry')";

/** Where an upload's body is kept (the contract with the crash worker). */
export function crashUploadKey(environmentId: number, uploadId: string): string {
  return `crash-uploads/${environmentId}/${uploadId}.zlib`;
}

/** Senders by pool: a boss that only sends holds no connection of its own, one per pool will do. */
const senders = new WeakMap<object, PgBoss>();
function senderFor(db: Queryable): PgBoss {
  let sender = senders.get(db);
  if (!sender) senders.set(db, (sender = crashQueueSender(db)));
  return sender;
}

/**
 * Streams `body` into `store` (at most `maxBytes`), then records the upload (state `queued`) and
 * queues its job in one transaction on `db`. Refusals: an empty body (invalid-request), past
 * `maxBytes` (payload-too-large); an Refusal the body stream fails with (the API's own limit, a
 * body cut short) is passed on as it is. No store, a store that fails, or a database or queue that
 * fails is 503 `unavailable`, and the stored object is removed: nothing is half kept.
 */
async function receiveCrashUpload(
  db: Queryable,
  store: ObjectStore | undefined,
  upload: { environment: EnvironmentContext; body: Readable; maxBytes: number; clientAddress: string; reporter: CrashReporterQuery },
): Promise<ReceivedCrashUpload> {
  if (!store) throw refuse.unavailable('Crash reports cannot be collected here: no object storage is set up.');
  const uploadId = randomId();
  const storageKey = crashUploadKey(upload.environment.id, uploadId);
  let stored: { sizeBytes: number; sha256: string };
  try {
    stored = await store.put(storageKey, upload.body, { maxBytes: upload.maxBytes, contentType: 'application/octet-stream' });
  } catch (err) {
    if (err instanceof Refusal) throw err;
    if (err instanceof ObjectTooLarge) throw refuse.tooLarge(err.maxBytes);
    throw unavailable('Crash reports cannot be stored right now; retry later.', err);
  }
  if (stored.sizeBytes === 0) {
    await store.delete(storageKey).catch(() => undefined);
    throw refuse.invalid('body', 'The crash report is empty.');
  }
  const cut = (value: string | undefined) => (value === undefined ? null : value.slice(0, CRASH_PARAMETER_KEPT_CHARS));
  const { reporter } = upload;
  try {
    await inTransaction(db, async (trx) => {
      await trx('crash_uploads').insert({
        id: uploadId,
        environment_id: upload.environment.id,
        storage_key: storageKey,
        size_bytes: stored.sizeBytes,
        sha256: stored.sha256,
        app_id: cut(reporter.AppID),
        app_version: cut(reporter.AppVersion),
        app_environment: cut(reporter.AppEnvironment),
        upload_type: cut(reporter.UploadType),
        user_id: cut(reporter.UserID),
        client_address: upload.clientAddress,
        state: 'queued',
      });
      await enqueueCrashUpload(senderFor(db), trx, { uploadId });
    });
  } catch (err) {
    // Neither row nor job was kept: the object goes too. Should this delete fail, the object is an
    // orphan no row names (the worker never sees it); docs/crashes.md says how such are swept.
    await store.delete(storageKey).catch(() => undefined);
    throw unavailable('Crash reports cannot be recorded right now; retry later.', err);
  }
  return { uploadId, storageKey, ...stored };
}

/** 503 `unavailable`, keeping what caused it for the log. */
function unavailable(message: string, cause: unknown): Refusal {
  const error = refuse.unavailable(message);
  (error as Error & { cause?: unknown }).cause = cause;
  return error;
}

/** Crash uploads (POST /crash-reports/:appKey): streamed into the process's object storage, then recorded and queued. */
export class CrashUploadService {
  constructor(private readonly store: ObjectStore | undefined) {}

  receive(
    db: Queryable,
    upload: { environment: EnvironmentContext; body: Readable; maxBytes: number; clientAddress: string; reporter: CrashReporterQuery },
  ): Promise<ReceivedCrashUpload> {
    return receiveCrashUpload(db, this.store, upload);
  }
}
