/**
 * Queued crash uploads as the ingest route leaves them (a body in object storage under
 * `crash-uploads/<environmentId>/<uploadId>.zlib`, a `crash_uploads` row, a job in the same
 * transaction), made directly so the worker's tests do not depend on the route.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { applyManifests, validateManifest } from '@hearth/core/manifests';
import { crashQueueSender, enqueueCrashUpload } from '@hearth/core/crashes';
import type { Db } from '@hearth/core/db';
import type { ObjectStore } from '@hearth/core/storage';
import { standardManifests } from './manifests';

/** Applies the standard manifests; answers the environments' ids by app key. */
export async function crashTestEnvironments(db: Db): Promise<Record<string, string>> {
  const docs = standardManifests();
  await applyManifests(
    db,
    docs.map((doc, i) => ({ doc: validateManifest(JSON.parse(JSON.stringify(doc)), `test#${i + 1}`), origin: `test#${i + 1}` })),
  );
  const rows = await db('environments').select('id', 'app_key');
  return Object.fromEntries(rows.map((r) => [r.app_key, String(r.id)]));
}

export async function queueCrashUpload(
  db: Db,
  store: ObjectStore,
  environmentId: string,
  body: Buffer,
  opts: { uploadId?: string; userId?: string; receivedAt?: Date; enqueue?: boolean } = {},
): Promise<string> {
  const uploadId = opts.uploadId ?? randomUUID().replace(/-/g, '');
  const storageKey = `crash-uploads/${environmentId}/${uploadId}.zlib`;
  const stored = await store.put(storageKey, Readable.from([body]), { maxBytes: 20 * 1024 * 1024 });
  await db.transaction(async (trx) => {
    await trx('crash_uploads').insert({
      id: uploadId,
      environment_id: environmentId,
      storage_key: storageKey,
      size_bytes: stored.sizeBytes,
      sha256: createHash('sha256').update(body).digest('hex'),
      app_id: 'CrashReporter',
      app_version: '5.4.2',
      app_environment: 'Release',
      upload_type: 'crashreports',
      user_id: opts.userId ?? 'login-1|epic-1|os-1',
      client_address: '203.0.113.7',
      ...(opts.receivedAt ? { received_at: opts.receivedAt } : {}),
    });
    if (opts.enqueue !== false) await enqueueCrashUpload(crashQueueSender(trx), trx, { uploadId });
  });
  return uploadId;
}
