import { createHash, timingSafeEqual } from 'node:crypto';
import type { Db, Queryable } from '../db/knex';
import { randomId } from '../ids';
import { SingleFlight, TtlCache } from '../cache';
import { type Clock, systemClock } from '../clock';
import { inTransaction } from '../db/transaction';
import { type Announcer, type InvalidationBus, announceAfterCommit } from '../invalidation';

/**
 * Keys made of a prefix, a public key id and a high-entropy secret (`hsk_<keyId>_<secret>` for server
 * keys, `hlk_<keyId>_<secret>` for licence keys): only a SHA-256 of the secret is stored, the whole
 * key is shown once when minted, a presented key is looked up by its id and compared in constant
 * time, verified keys are cached briefly per process and a revocation is pushed over the bus. The
 * rules are written once here; each kind says where its keys live and whom they belong to.
 */
export interface HashedKeyKind {
  prefix: 'hsk_' | 'hlk_';
  table: 'server_keys' | 'licence_keys';
  /** The column naming the key's owner: its environment, or its organisation (project). */
  ownerColumn: 'environment_id' | 'project_id';
  /** The invalidation a revocation announces. */
  invalidation: 'server-key' | 'licence-key';
}

const KEY_ID_LENGTH = 16;
const SECRET_LENGTH = 40;
/** Last use is shown to within an hour, so it is written at most once an hour per key and process. */
const LAST_USE_RESOLUTION_MS = 60 * 60 * 1000;
const CACHE_MS = 5_000;

export interface HashedKeyInfo {
  keyId: string;
  ownerId: number;
  name: string;
  secretHint: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** A kind's key as its callers see it: its owner's id under the kind's own name (`environmentId`, `projectId`). */
export type KeyInfoOf<OwnerField extends string> = Omit<HashedKeyInfo, 'ownerId'> & Record<OwnerField, number>;

function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

function patternOf(kind: HashedKeyKind): RegExp {
  return new RegExp(`^${kind.prefix}([0-9A-Za-z]{${KEY_ID_LENGTH}})_([0-9A-Za-z]{${SECRET_LENGTH}})$`);
}

export function hashedKeyInfo(kind: HashedKeyKind, row: Record<string, unknown>): HashedKeyInfo {
  const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null);
  return {
    keyId: row.key_id as string,
    ownerId: Number(row[kind.ownerColumn]),
    name: row.name as string,
    secretHint: row.secret_hint as string,
    createdAt: new Date(row.created_at as string).toISOString(), // NOT NULL
    lastUsedAt: iso(row.last_used_at),
    revokedAt: iso(row.revoked_at),
  };
}

/**
 * Inserts a new key of `ownerId` in the caller's transaction (which has checked its plan's limit, if
 * any) and answers it with the whole key, this once. Nothing is announced: no process can have a key
 * cached before it exists. `manifest` names the document the key stands for.
 */
export async function insertHashedKey(
  db: Queryable,
  kind: HashedKeyKind,
  ownerId: number,
  name: string,
  manifest?: { namespace: string; name: string },
  /** Columns of the kind's own (a licence key's `products`). */
  columns: Record<string, unknown> = {},
): Promise<HashedKeyInfo & { key: string }> {
  const keyId = randomId(KEY_ID_LENGTH);
  const secret = randomId(SECRET_LENGTH);
  const [row] = await db(kind.table)
    .insert({
      key_id: keyId,
      [kind.ownerColumn]: ownerId,
      name,
      secret_hash: hashSecret(secret),
      secret_hint: secret.slice(-4),
      manifest_namespace: manifest?.namespace ?? null,
      manifest_name: manifest?.name ?? null,
      ...columns,
    })
    .returning('*');
  return { ...hashedKeyInfo(kind, row), key: `${kind.prefix}${keyId}_${secret}` };
}

export async function listHashedKeys(db: Queryable, kind: HashedKeyKind, ownerId: number): Promise<HashedKeyInfo[]> {
  const rows = await db(kind.table)
    .where({ [kind.ownerColumn]: ownerId })
    .orderBy([{ column: 'created_at' }, { column: 'key_id' }]);
  return rows.map((row: Record<string, unknown>) => hashedKeyInfo(kind, row));
}

/**
 * Revokes a key and, once that commits, tells every process to drop its cached copy, so the key is
 * refused everywhere at once (not when caches expire). Answers null when there is no live key by that id.
 */
export async function revokeHashedKey(db: Queryable, bus: Announcer, kind: HashedKeyKind, keyId: string): Promise<HashedKeyInfo | null> {
  return inTransaction(db, async (trx) => {
    const [row] = await trx(kind.table).where({ key_id: keyId }).whereNull('revoked_at').update({ revoked_at: trx.fn.now() }).returning('*');
    if (!row) return null;
    await announceAfterCommit(trx, bus, { kind: kind.invalidation, keyId });
    return hashedKeyInfo(kind, row);
  });
}

/** The live key a document stands for, if it has one. */
export async function liveHashedKeyOfManifest(
  db: Queryable,
  kind: HashedKeyKind,
  manifest: { namespace: string; name: string },
): Promise<HashedKeyInfo | null> {
  const row = await db(kind.table).where({ manifest_namespace: manifest.namespace, manifest_name: manifest.name }).whereNull('revoked_at').first();
  return row ? hashedKeyInfo(kind, row) : null;
}

interface CachedKey {
  ownerId: number;
  hash: Buffer;
  revoked: boolean;
  lastUsedAt: number;
}

/** Verifies presented keys of one kind with a short per-process cache; revocations are pushed over the bus. */
export class HashedKeyVerifier {
  private readonly pattern: RegExp;
  private readonly cache: TtlCache<string, CachedKey | null>;
  /** Concurrent first uses share one load (and so one entry), so last use is written once, not once each. */
  private loads = new SingleFlight<string, CachedKey | null>();

  constructor(
    private readonly kind: HashedKeyKind,
    private readonly db: Db,
    bus: InvalidationBus,
    clock: Clock = systemClock,
  ) {
    this.cache = new TtlCache(CACHE_MS, undefined, clock);
    this.pattern = patternOf(kind);
    bus.on((event) => {
      if (event.kind === kind.invalidation) this.cache.delete(event.keyId);
    });
  }

  /** The key's owner, or null for a malformed, unknown or revoked key. */
  async verify(credential: string): Promise<{ keyId: string; ownerId: number } | null> {
    const match = this.pattern.exec(credential);
    if (!match) return null;
    const [, keyId, secret] = match;
    let entry = this.cache.get(keyId);
    if (entry === undefined) entry = await this.loads.run(keyId, () => this.load(keyId));
    if (!entry || entry.revoked) return null;
    if (!timingSafeEqual(entry.hash, hashSecret(secret))) return null;
    this.noteUse(keyId, entry);
    return { keyId, ownerId: entry.ownerId };
  }

  private async load(keyId: string): Promise<CachedKey | null> {
    const row = await this.db(this.kind.table).where({ key_id: keyId }).first();
    const entry = row
      ? {
          ownerId: Number(row[this.kind.ownerColumn]),
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
    this.db(this.kind.table)
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
