/**
 * What is not poison is retried: a job whose storage is down throws (pg-boss retries it with
 * backoff) and leaves the upload queued; the attempt that reaches the retry limit finishes the
 * upload as poison `retries-exhausted` instead of leaving it queued for ever. The job is handled by
 * the worker's own processCrashUpload, over a real database and an object store that is down.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type PgBoss from 'pg-boss';
import { createLogger } from '@hearth/core';
import { CRASH_UPLOAD_QUEUE_OPTIONS, type CrashUploadJob } from '@hearth/core/crashes';
import { DiskObjectStore, StorageUnavailable, type ObjectStore } from '@hearth/core/storage';
import { CrashWorkerMetrics, loadCrashWorkerSettings, processCrashUpload } from '@hearth/crash-worker';
import { createTestDatabase, type TestDatabase } from '../support/harness';
import { crashTestEnvironments, queueCrashUpload } from '../support/crash-uploads';
import { crashUploadBody, typicalCrashFiles } from '../support/crash-archive';

/** Object storage that cannot be reached: every call fails as the S3 client does when the network is down. */
class DownStore implements ObjectStore {
  readonly kind = 'disk' as const;
  private down = (): never => {
    throw new StorageUnavailable('connect ECONNREFUSED 127.0.0.1:9000');
  };
  put = async (): Promise<never> => this.down();
  get = async (): Promise<Readable> => this.down();
  head = async (): Promise<never> => this.down();
  delete = async (): Promise<never> => this.down();
  ping = async (): Promise<never> => this.down();
  presignPut = async (): Promise<never> => this.down();
}

let database: TestDatabase;
let envs: Record<string, string>;
let folder: string;

beforeAll(async () => {
  database = await createTestDatabase();
  envs = await crashTestEnvironments(database.db);
  folder = await mkdtemp(path.join(os.tmpdir(), 'hearth-crash-retries-'));
});
afterAll(async () => {
  await database.drop();
  await rm(folder, { recursive: true, force: true });
});

const job = (uploadId: string, retryCount: number) =>
  ({
    id: `job-${retryCount}`,
    name: 'crash-upload',
    data: { uploadId },
    retryCount,
    retryLimit: CRASH_UPLOAD_QUEUE_OPTIONS.retryLimit,
  }) as PgBoss.JobWithMetadata<CrashUploadJob>;

test('storage down: retried while attempts remain, poison retries-exhausted on the last; then nothing changes it', async () => {
  const uploadId = await queueCrashUpload(database.db, new DiskObjectStore(folder), envs['alpha-live'], crashUploadBody(typicalCrashFiles()), {
    enqueue: false,
  });
  const metrics = new CrashWorkerMetrics(database.db, false);
  const deps = { db: database.db, objectStore: new DownStore(), logger: createLogger('silent'), settings: loadCrashWorkerSettings({}), metrics };

  for (let attempt = 0; attempt < CRASH_UPLOAD_QUEUE_OPTIONS.retryLimit; attempt++) {
    await expect(processCrashUpload(deps, job(uploadId, attempt))).rejects.toThrow(StorageUnavailable);
    expect(await database.db('crash_uploads').where({ id: uploadId }).first('state')).toEqual({ state: 'queued' });
  }
  expect(await processCrashUpload(deps, job(uploadId, CRASH_UPLOAD_QUEUE_OPTIONS.retryLimit))).toBe('poison');
  expect(await database.db('crash_uploads').where({ id: uploadId }).first('state', 'poison_reason')).toEqual({
    state: 'poison',
    poison_reason: 'retries-exhausted',
  });
  expect((await metrics.poison.get()).values).toEqual([{ labels: { reason: 'retries-exhausted' }, value: 1 }]);
  expect((await metrics.jobs.get()).values).toEqual([{ labels: { outcome: 'retry' }, value: CRASH_UPLOAD_QUEUE_OPTIONS.retryLimit }]);

  // A redelivered job of a finished upload does no work, even with storage back.
  const working = { ...deps, objectStore: new DiskObjectStore(folder) };
  expect(await processCrashUpload(working, job(uploadId, 0))).toBe('already-finished');
  expect(await database.db('crashes').count('* as n').first()).toEqual({ n: '0' });
});

test('a job for an upload that no longer exists completes without work', async () => {
  const deps = {
    db: database.db,
    objectStore: new DiskObjectStore(folder),
    logger: createLogger('silent'),
    settings: loadCrashWorkerSettings({}),
    metrics: new CrashWorkerMetrics(database.db, false),
  };
  expect(await processCrashUpload(deps, job('no-such-upload', 0))).toBe('gone');
});
