import { createHash, timingSafeEqual } from 'node:crypto';
import type { Db, Queryable } from '../db/knex';
import { refuse } from '../errors';
import { randomId } from '../ids';
import { SingleFlight, TtlCache } from '../cache';
import { inTransaction } from '../db/transaction';
import { type Announcer, type InvalidationBus, announceAfterCommit } from '../invalidation';

/** Server keys: `hsk_<keyId>_<secret>`; only a SHA-256 of the (high-entropy) secret is stored. */
export const SERVER_KEY_PREFIX = 'hsk_';
const KEY_ID_LENGTH = 16;
const SECRET_LENGTH = 40;
const KEY_PATTERN = /^hsk_([0-9A-Za-z]{16})_([0-9A-Za-z]{40})$/;
/** Last use is shown to within an hour, so it is written at most once an hour per key and process. */
const LAST_USE_RESOLUTION_MS = 60 * 60 * 1000;

export interface ServerKeyInfo {
  keyId: string;
  environmentId: number;
  name: string;
  secretHint: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface MintedServerKey extends ServerKeyInfo {
  /** The whole key: shown once, never stored. */
  key: string;
}

interface CachedKey {
  environmentId: number;
  hash: Buffer;
  revoked: boolean;
  lastUsedAt: number;
}

function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

export function looksLikeServerKey(credential: string): boolean {
  return credential.startsWith(SERVER_KEY_PREFIX);
}

function toInfo(row: Record<string, unknown>): ServerKeyInfo {
  const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null);
  // created_at is NOT NULL
  return {
    keyId: row.key_id as string,
    environmentId: Number(row.environment_id),
    name: row.name as string,
    secretHint: row.secret_hint as string,
    createdAt: new Date(row.created_at as string).toISOString(),
    lastUsedAt: iso(row.last_used_at),
    revokedAt: iso(row.revoked_at),
  };
}

/**
 * Mints a key in an environment, refusing past the plan's live-key limit. The environment row is
 * locked so two concurrent mints cannot both take the last place. Nothing is announced: no process
 * can have a key cached before it exists. `manifest` names the ServerKey document the key stands for.
 */
export async function mintServerKey(
  db: Queryable,
  environmentId: number,
  name: string,
  liveKeyLimit: number,
  manifest?: { namespace: string; name: string },
): Promise<MintedServerKey> {
  return inTransaction(db, async (trx) => {
    await trx.raw('SELECT id FROM environments WHERE id = ? FOR NO KEY UPDATE', [environmentId]);
    const [{ count }] = await trx('server_keys').where({ environment_id: environmentId }).whereNull('revoked_at').count({ count: '*' });
    if (Number(count) >= liveKeyLimit) {
      throw refuse.quota('serverKeysPerEnvironment', liveKeyLimit, `This environment already has ${liveKeyLimit} live server keys, the most its plan allows.`);
    }
    const keyId = randomId(KEY_ID_LENGTH);
    const secret = randomId(SECRET_LENGTH);
    const [row] = await trx('server_keys')
      .insert({
        key_id: keyId,
        environment_id: environmentId,
        name,
        secret_hash: hashSecret(secret),
        secret_hint: secret.slice(-4),
        manifest_namespace: manifest?.namespace ?? null,
        manifest_name: manifest?.name ?? null,
      })
      .returning('*');
    return { ...toInfo(row), key: `${SERVER_KEY_PREFIX}${keyId}_${secret}` };
  });
}

export async function listServerKeys(db: Queryable, environmentId: number): Promise<ServerKeyInfo[]> {
  const rows = await db('server_keys').where({ environment_id: environmentId }).orderBy([{ column: 'created_at' }, { column: 'key_id' }]);
  return rows.map(toInfo);
}

/**
 * Revokes a key and, once that commits, tells every process to drop its cached copy, so the key is
 * refused everywhere at once (not when caches expire). Answers null when there is no live key by that id.
 */
export async function revokeServerKey(db: Queryable, bus: Announcer, keyId: string): Promise<ServerKeyInfo | null> {
  return inTransaction(db, async (trx) => {
    const [row] = await trx('server_keys').where({ key_id: keyId }).whereNull('revoked_at').update({ revoked_at: trx.fn.now() }).returning('*');
    if (!row) return null;
    await announceAfterCommit(trx, bus, { kind: 'server-key', keyId });
    return toInfo(row);
  });
}

/** The live key a ServerKey document stands for, if it has one. */
export async function liveKeyOfManifest(db: Queryable, manifest: { namespace: string; name: string }): Promise<ServerKeyInfo | null> {
  const row = await db('server_keys').where({ manifest_namespace: manifest.namespace, manifest_name: manifest.name }).whereNull('revoked_at').first();
  return row ? toInfo(row) : null;
}

/** Verifies presented server keys with a short per-process cache; revocations are pushed over the bus. */
export class ServerKeyVerifier {
  private cache = new TtlCache<string, CachedKey | null>(5_000);
  /** Concurrent first uses share one load (and so one entry), so last use is written once, not once each. */
  private loads = new SingleFlight<string, CachedKey | null>();

  constructor(private readonly db: Db, private readonly bus: InvalidationBus) {
    bus.on((event) => {
      if (event.kind === 'server-key') this.cache.delete(event.keyId);
    });
  }

  /** The key's environment, or null for a malformed, unknown or revoked key. */
  async verify(credential: string): Promise<{ keyId: string; environmentId: number } | null> {
    const match = KEY_PATTERN.exec(credential);
    if (!match) return null;
    const [, keyId, secret] = match;
    let entry = this.cache.get(keyId);
    if (entry === undefined) entry = await this.loads.run(keyId, () => this.load(keyId));
    if (!entry || entry.revoked) return null;
    if (!timingSafeEqual(entry.hash, hashSecret(secret))) return null;
    this.noteUse(keyId, entry);
    return { keyId, environmentId: entry.environmentId };
  }

  private async load(keyId: string): Promise<CachedKey | null> {
    const row = await this.db('server_keys').where({ key_id: keyId }).first();
    const entry = row
      ? {
          environmentId: Number(row.environment_id),
          hash: row.secret_hash as Buffer,
          revoked: row.revoked_at !== null,
          lastUsedAt: row.last_used_at ? new Date(row.last_used_at).getTime() : 0,
        }
      : null;
    this.cache.set(keyId, entry);
    return entry;
  }

  /** Writes last use when the stored value is more than an hour old; never on the request's path. */
  private noteUse(keyId: string, entry: CachedKey): void {
    const now = Date.now();
    if (now - entry.lastUsedAt < LAST_USE_RESOLUTION_MS) return;
    entry.lastUsedAt = now;
    this.db('server_keys')
      .where({ key_id: keyId })
      .where((q) => {
        q.whereNull('last_used_at').orWhere('last_used_at', '<', new Date(now - LAST_USE_RESOLUTION_MS));
      })
      .update({ last_used_at: new Date(now) })
      .catch(() => {
        entry.lastUsedAt = 0; // try again on a later request
      });
  }
}

