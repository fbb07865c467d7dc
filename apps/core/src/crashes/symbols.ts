/**
 * Symbol files (spec §4 Crash reports; docs/crashes.md, "Symbol files"). A build server asks for an
 * upload URL naming the file's exact size and SHA-256; the storage itself refuses any other body
 * (S3 checks the presigned PUT's signed Content-Length and x-amz-checksum-sha256; on the embedded
 * default the API's own PUT checks both while streaming). A file is listed once its upload has
 * completed: S3 tells nobody when a presigned PUT lands, so the list looks at a bounded batch of the
 * environment's pending uploads with HeadObject and completes those whose stored size and checksum
 * are the pinned ones.
 */
import type { Queryable } from '../db/knex';
import type { EnvironmentContext } from '../tenancy/environments';
import { refuse } from '../errors';
import { type CursorCodec, keysetPage, type Page } from '../pagination';
import { StorageUnavailable, type ObjectStore } from '../storage/object-store';
import type { UploadGrant } from '../storage/upload-tokens';
import type { Logger } from '../logger';
import type { SymbolFile, SymbolListQuery, SymbolUpload, SymbolUploadRequest } from '../shapes/crashes';

/** Spec §8: an upload URL is valid one hour. */
export const SYMBOL_UPLOAD_TTL_SECONDS = 3600;
/** How many pending uploads one list looks at in storage (HeadObject each), at most. */
export const SYMBOL_CHECK_BATCH = 20;
/**
 * A pending upload is looked for until this long after its URL expired (a PUT that started in time
 * may still be streaming); after that it can no longer land, and only a new request revives it.
 */
const LATE_UPLOAD_GRACE = '1 hour';

interface SymbolRow {
  id: string;
  label: string;
  version: string;
  name: string;
  size_bytes: string | number;
  sha256: string;
  updated_at: Date;
}

export function symbolKey(environmentId: number, label: string, version: string, fileName: string): string {
  return `symbols/${environmentId}/${label}/${version}/${fileName}`;
}

/** The parts of a symbol file's key, or null for a key that is not one. */
export function parseSymbolKey(key: string): { environmentId: number; label: string; version: string; name: string } | null {
  const parts = key.split('/');
  if (parts.length !== 5 || parts[0] !== 'symbols' || !/^[1-9][0-9]*$/.test(parts[1])) return null;
  return { environmentId: Number(parts[1]), label: parts[2], version: parts[3], name: parts[4] };
}

/**
 * The symbol_files row of a stored object's key whose request pins exactly this size and digest (a
 * newer request for the same file pins its own), or null for a key that is not a symbol file's.
 */
function pinnedFile(db: Queryable, object: { key: string; sizeBytes: number; sha256: string }) {
  const parts = parseSymbolKey(object.key);
  if (!parts) return null;
  return db('symbol_files').where({
    environment_id: parts.environmentId,
    label: parts.label,
    version: parts.version,
    name: parts.name,
    size_bytes: object.sizeBytes,
    sha256: object.sha256,
  });
}

/** Crash routes answer 503 `unavailable` where the process has no object storage (spec §4). */
function requireStore(store: ObjectStore | undefined): ObjectStore {
  if (!store) throw refuse.unavailable('Symbol files cannot be published here: no object storage is configured.');
  return store;
}

export class SymbolService {
  constructor(
    private readonly cursors: CursorCodec,
    private readonly logger: Logger,
    private readonly objectStore: ObjectStore | undefined,
  ) {}

  /**
   * Records the request (replacing a pending one for the same file) and answers its presigned PUT.
   * A request for content other than the completed file's unlists the file until the new upload
   * lands: the listing never names bytes that are not in storage.
   */
  async requestUpload(db: Queryable, env: EnvironmentContext, input: SymbolUploadRequest, apiOrigin: string): Promise<SymbolUpload> {
    const store = requireStore(this.objectStore);
    const key = symbolKey(env.id, input.label, input.version, input.fileName);
    const put = await store.presignPut(key, { sizeBytes: input.sizeBytes, sha256Hex: input.sha256, expiresInSeconds: SYMBOL_UPLOAD_TTL_SECONDS, apiOrigin });
    await db.raw(
      `INSERT INTO symbol_files (environment_id, label, version, name, size_bytes, sha256, requested_at, expires_at, updated_at)
       VALUES (:env, :label, :version, :name, :size, :sha, clock_timestamp(), :expiresAt, clock_timestamp())
       ON CONFLICT (environment_id, label, version, name) DO UPDATE SET
         requested_at = excluded.requested_at,
         expires_at = excluded.expires_at,
         checked_at = NULL,
         -- The same content again keeps the completed file listed; other content waits for its upload.
         completed_at = CASE WHEN symbol_files.size_bytes = excluded.size_bytes AND symbol_files.sha256 = excluded.sha256
                             THEN symbol_files.completed_at END,
         updated_at = CASE WHEN symbol_files.size_bytes = excluded.size_bytes AND symbol_files.sha256 = excluded.sha256
                           THEN symbol_files.updated_at ELSE excluded.updated_at END,
         size_bytes = excluded.size_bytes,
         sha256 = excluded.sha256`,
      { env: env.id, label: input.label, version: input.version, name: input.fileName, size: input.sizeBytes, sha: input.sha256, expiresAt: put.expiresAt },
    );
    return { url: put.url, headers: put.headers, key, expiresAt: put.expiresAt.toISOString() };
  }

  /** Completed files, ordered by label, version, name; pending uploads that landed are completed first. */
  async list(db: Queryable, env: EnvironmentContext, q: SymbolListQuery): Promise<Page<SymbolFile>> {
    const store = requireStore(this.objectStore);
    await this.settlePending(db, store, env.id);
    const listId = `symbol-files|${env.id}|${JSON.stringify([q.label ?? null, q.version ?? null])}`;
    return keysetPage(
      this.cursors,
      listId,
      q,
      (after: [string, string, string] | undefined, take) => {
        const query = db('symbol_files')
          .where({ environment_id: env.id })
          .whereNotNull('completed_at')
          .orderBy([{ column: 'label' }, { column: 'version' }, { column: 'name' }])
          .limit(take);
        if (q.label !== undefined) query.where({ label: q.label });
        if (q.version !== undefined) query.where({ version: q.version });
        if (after !== undefined) query.whereRaw('(label, version, name) > (?, ?, ?)', after);
        return query as Promise<SymbolRow[]>;
      },
      (row): [string, string, string] => [row.label, row.version, row.name],
      (row) => ({ label: row.label, version: row.version, name: row.name, sizeBytes: Number(row.size_bytes), updatedAt: row.updated_at.toISOString() }),
    );
  }

  /**
   * Whether a presigned PUT may still land: the file's latest request pins the same size and digest
   * (a URL of a replaced request would overwrite the newer file's bytes).
   */
  async uploadStillWanted(db: Queryable, grant: UploadGrant): Promise<boolean> {
    const file = pinnedFile(db, grant);
    return file !== null && (await file.first('id')) !== undefined;
  }

  /** Completes the file whose bytes were just stored with exactly the pinned size and digest. */
  async completeUpload(db: Queryable, stored: { key: string; sizeBytes: number; sha256: string }): Promise<boolean> {
    const file = pinnedFile(db, stored);
    return file !== null && (await file.update({ completed_at: db.raw('clock_timestamp()'), updated_at: db.raw('clock_timestamp()') })) > 0;
  }

  /**
   * S3 says nothing when a presigned PUT lands: look at the least recently checked pending uploads
   * (a bounded batch) and complete those whose object has the pinned size and SHA-256. Stores that
   * cannot tell an object's digest without reading it (the folder on disk) complete on their PUT.
   * Storage out of reach leaves them pending: the list still answers what is known.
   */
  private async settlePending(db: Queryable, store: ObjectStore, environmentId: number): Promise<void> {
    if (store.kind !== 's3') return;
    const pending: SymbolRow[] = await db('symbol_files')
      .where({ environment_id: environmentId })
      .whereNull('completed_at')
      .whereRaw(`expires_at > clock_timestamp() - interval '${LATE_UPLOAD_GRACE}'`)
      .orderByRaw('checked_at NULLS FIRST, id')
      .limit(SYMBOL_CHECK_BATCH)
      .select('id', 'label', 'version', 'name', 'size_bytes', 'sha256');
    if (pending.length === 0) return;
    let found: ({ sizeBytes: number; sha256?: string } | null)[];
    try {
      found = await Promise.all(pending.map((row) => store.head(symbolKey(environmentId, row.label, row.version, row.name))));
    } catch (err) {
      if (!(err instanceof StorageUnavailable)) throw err;
      this.logger.warn({ err: err.message }, 'symbol uploads could not be checked; they stay pending');
      return;
    }
    const landed = pending.filter((row, i) => {
      const object = found[i];
      return object !== null && object.sizeBytes === Number(row.size_bytes) && object.sha256 === row.sha256;
    });
    const notYet = pending.filter((row) => !landed.includes(row));
    // Each update names the content it saw, so a request that replaced the row meanwhile is left alone.
    for (const row of landed) {
      await db('symbol_files')
        .where({ id: row.id, size_bytes: row.size_bytes, sha256: row.sha256 })
        .whereNull('completed_at')
        .update({ completed_at: db.raw('clock_timestamp()'), updated_at: db.raw('clock_timestamp()'), checked_at: db.raw('clock_timestamp()') });
    }
    if (notYet.length > 0) {
      await db('symbol_files')
        .whereIn(
          'id',
          notYet.map((row) => row.id),
        )
        .whereNull('completed_at')
        .update({ checked_at: db.raw('clock_timestamp()') });
    }
  }
}
