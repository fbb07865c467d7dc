/**
 * The crash worker (docs/crashes.md, "The worker"): a competing consumer of the crash-upload queue.
 * Each job takes a queued upload to a recorded crash or to poison:
 *
 *   load the upload (already finished or gone: the job completes without work, so a redelivered job
 *   is harmless) → read its body from object storage → inflate and parse (CrashPoison: finished as
 *   poison with the reason, the job completed, never retried) → store every file of the archive
 *   under `crashes/<environmentId>/<crashId>/<name>` (the crash id follows from the upload id, so a
 *   retry overwrites the same keys) → record the crash and finish the upload in one transaction.
 *
 * Anything else (storage, database) throws, and pg-boss retries with backoff; the attempt that
 * reaches the queue's retryLimit finishes the upload as poison `retries-exhausted` instead. A worker
 * killed mid-job leaves its job active until `expireInSeconds`, when pg-boss's maintenance (run by
 * every worker) hands it to another.
 */
import { Readable } from 'node:stream';
import PgBoss from 'pg-boss';
import type { Logger } from '@hearth/core';
import {
  CRASH_QUEUE_SCHEMA,
  CRASH_UPLOAD_QUEUE,
  crashFileKey,
  crashIdOf,
  finishAbandonedCrashUploads,
  loadCrashUpload,
  markCrashUploadPoison,
  recordCrash,
  storedFileName,
  type CrashFileRecord,
  type CrashUploadJob,
} from '@hearth/core/crashes';
import { ObjectNotFound, type ObjectStore } from '@hearth/core/storage';
import { processStopping } from '@hearth/core/process';
import type { Db } from '@hearth/core/db';
import { CrashPoison, parseCrashUpload, type ParsedCrash } from './archive';
import { CrashWorkerMetrics, type JobOutcome } from './metrics';
import type { CrashWorkerSettings } from './config';

/** Far above the API's 20 MB upload limit: a stored body larger than this is not one the API accepted. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export interface CrashWorkerDeps {
  db: Db;
  /** pg-boss opens its own small pool (concurrency + 2 connections) to fetch and finish jobs. */
  databaseUrl: string;
  objectStore: ObjectStore;
  logger: Logger;
  settings: CrashWorkerSettings;
  metrics?: CrashWorkerMetrics;
}

export interface CrashWorker {
  metrics: CrashWorkerMetrics;
  /** Stops taking jobs and waits (up to `timeoutMs`) for the ones in hand to finish. */
  stop(timeoutMs?: number): Promise<void>;
}

async function readBody(store: ObjectStore, key: string): Promise<Buffer> {
  let stream: Readable;
  try {
    stream = await store.get(key);
  } catch (err) {
    if (err instanceof ObjectNotFound) throw new CrashPoison('body-missing', `no object under ${key}`);
    throw err;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      stream.destroy();
      throw new Error(`the stored body ${key} is larger than ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Every file of the archive under the crash's folder; names made safe and, when two collide, told apart by index. */
async function storeFiles(
  store: ObjectStore,
  environmentId: string,
  crashId: string,
  parsed: ParsedCrash,
  metrics: CrashWorkerMetrics,
): Promise<CrashFileRecord[]> {
  const used = new Set<string>();
  const records: CrashFileRecord[] = [];
  for (const file of parsed.files) {
    let name = storedFileName(file.name);
    if (used.has(name)) name = `${file.index}-${name}`;
    used.add(name);
    const key = crashFileKey(environmentId, crashId, name);
    const stored = await store.put(key, Readable.from([file.data]), { maxBytes: file.data.length });
    metrics.storedBytes.inc(stored.sizeBytes);
    records.push({ name: file.name, kind: file.kind, key, sizeBytes: stored.sizeBytes, sha256: stored.sha256 });
  }
  return records;
}

/** What one job does; exported for the worker's tests (a job handled outside pg-boss). */
export async function processCrashUpload(
  deps: Omit<CrashWorkerDeps, 'databaseUrl'> & { metrics: CrashWorkerMetrics },
  job: PgBoss.JobWithMetadata<CrashUploadJob>,
): Promise<JobOutcome> {
  const { db, objectStore: store, logger, settings, metrics } = deps;
  const uploadId = job.data?.uploadId;
  if (typeof uploadId !== 'string') {
    logger.error({ jobId: job.id, data: job.data }, 'a crash-upload job without an upload id: completed without work');
    return 'gone';
  }
  const upload = await loadCrashUpload(db, uploadId);
  if (!upload) return 'gone'; // its environment was deleted since
  if (upload.state !== 'queued') return 'already-finished';

  const log = logger.child({ uploadId, jobId: job.id, attempt: job.retryCount + 1 });
  try {
    const body = await readBody(store, upload.storageKey);
    const parseTimer = metrics.parseDuration.startTimer();
    let parsed: ParsedCrash;
    try {
      parsed = await parseCrashUpload(body, settings.maxInflatedBytes);
    } finally {
      parseTimer();
    }
    const crashId = crashIdOf(uploadId);
    const files = await storeFiles(store, upload.environmentId, crashId, parsed, metrics);
    if (settings.testHoldMs > 0) await new Promise((r) => setTimeout(r, settings.testHoldMs));
    const c = parsed.context;
    const outcome = await recordCrash(db, {
      uploadId,
      layout: parsed.archive.layout,
      crashGuid: c.crashGuid,
      type: c.type,
      errorMessage: c.errorMessage,
      callstack: c.callstack,
      portableCallstack: c.portableCallstack,
      engineVersion: c.engineVersion,
      buildVersion: c.buildVersion,
      buildConfiguration: c.buildConfiguration,
      platform: c.platform,
      gameName: c.gameName,
      executableName: c.executableName,
      userId: c.loginId,
      userName: c.userName,
      epicAccountId: c.epicAccountId,
      claimedPlayerId: c.claimedPlayerId,
      gameData: c.gameData,
      crashedAt: c.crashedAt,
      files,
    });
    if (!outcome.recorded) return 'already-finished';
    log.info({ crashId: outcome.crashId, issueId: outcome.issueId }, 'crash recorded');
    return 'recorded';
  } catch (err) {
    if (err instanceof CrashPoison) {
      if (await markCrashUploadPoison(db, uploadId, err.reason)) {
        metrics.poison.inc({ reason: err.reason });
        log.warn({ reason: err.reason, detail: err.message }, 'crash upload is poison');
        return 'poison';
      }
      return 'already-finished';
    }
    if (job.retryCount >= job.retryLimit) {
      log.error({ err }, 'crash upload failed on its last attempt: finished as poison retries-exhausted');
      if (await markCrashUploadPoison(db, uploadId, 'retries-exhausted')) {
        metrics.poison.inc({ reason: 'retries-exhausted' });
        return 'poison';
      }
      return 'already-finished';
    }
    log.warn({ err: (err as Error).message }, 'crash upload failed; pg-boss retries it');
    metrics.jobs.inc({ outcome: 'retry' });
    throw err;
  }
}

export async function startCrashWorker(deps: CrashWorkerDeps): Promise<CrashWorker> {
  const { settings, logger } = deps;
  const metrics = deps.metrics ?? new CrashWorkerMetrics(deps.db);
  const boss = new PgBoss({
    connectionString: deps.databaseUrl,
    schema: CRASH_QUEUE_SCHEMA,
    migrate: false, // the migrations installed the schema and the queue (hearth migrate)
    schedule: false,
    supervise: true, // maintenance: jobs of a killed worker expire back to retry
    maintenanceIntervalSeconds: settings.maintenanceIntervalSeconds,
    max: settings.concurrency + 2,
    application_name: 'hearth-crash-worker',
  });
  // Once the process is stopping, its database going away (Ctrl-C reaches `hearth dev`'s embedded
  // PostgreSQL too) is expected: said at debug level, not as a warning.
  boss.on('error', (err) => logger[processStopping.begun ? 'debug' : 'warn']({ err: (err as Error).message }, 'crash queue error'));
  await boss.start();

  const handler = async ([job]: PgBoss.JobWithMetadata<CrashUploadJob>[]) => {
    const timer = metrics.jobDuration.startTimer();
    try {
      const outcome = await processCrashUpload({ ...deps, metrics }, job);
      metrics.jobs.inc({ outcome });
    } finally {
      timer();
    }
  };
  // pg-boss 10 has no per-worker concurrency: each `work` is one poller taking one job at a time.
  for (let i = 0; i < settings.concurrency; i++) {
    await boss.work<CrashUploadJob>(
      CRASH_UPLOAD_QUEUE,
      { batchSize: 1, includeMetadata: true, pollingIntervalSeconds: settings.pollingIntervalSeconds },
      handler,
    );
  }
  logger.info({ concurrency: settings.concurrency, queue: CRASH_UPLOAD_QUEUE }, 'crash worker started');

  // With pg-boss's maintenance: uploads whose last attempt expired are finished as retries-exhausted.
  const sweep = async () => {
    try {
      for (const uploadId of await finishAbandonedCrashUploads(deps.db)) {
        metrics.poison.inc({ reason: 'retries-exhausted' });
        logger.error({ uploadId }, 'crash upload abandoned on its last attempt: finished as poison retries-exhausted');
      }
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'sweeping abandoned crash uploads failed; tried again later');
    }
  };
  const sweeper = setInterval(() => void sweep(), settings.maintenanceIntervalSeconds * 1000);
  sweeper.unref();

  return {
    metrics,
    // Graceful: no new jobs, the ones in hand finish (or, past the timeout, stay active and expire to another worker).
    stop: async (timeoutMs = 20_000) => {
      clearInterval(sweeper);
      await boss.stop({ graceful: true, wait: true, timeout: timeoutMs });
    },
  };
}
