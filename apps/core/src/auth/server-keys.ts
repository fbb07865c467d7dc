import type { Db, Queryable } from '../db/knex';
import type { Clock } from '../clock';
import { refuse } from '../errors';
import { inTransaction } from '../db/transaction';
import type { Announcer, InvalidationBus } from '../invalidation';
import {
  type HashedKeyInfo,
  type HashedKeyKind,
  HashedKeyVerifier,
  type KeyInfoOf,
  insertHashedKey,
  listHashedKeys,
  liveHashedKeyOfManifest,
  revokeHashedKey,
} from './hashed-keys';

/** Server keys: `hsk_<keyId>_<secret>`, one environment's (the rules of such keys: hashed-keys.ts). */
export const SERVER_KEY_PREFIX = 'hsk_';
export const SERVER_KEYS: HashedKeyKind = { prefix: SERVER_KEY_PREFIX, table: 'server_keys', ownerColumn: 'environment_id', invalidation: 'server-key' };

export type ServerKeyInfo = KeyInfoOf<'environmentId'>;

export interface MintedServerKey extends ServerKeyInfo {
  /** The whole key: shown once, never stored. */
  key: string;
}

function toInfo({ ownerId, ...info }: HashedKeyInfo): ServerKeyInfo {
  return { ...info, environmentId: ownerId };
}

export function looksLikeServerKey(credential: string): boolean {
  return credential.startsWith(SERVER_KEY_PREFIX);
}

/**
 * Mints a key in an environment, refusing past the plan's live-key limit. The environment row is
 * locked so two concurrent mints cannot both take the last place. `manifest` names the ServerKey
 * document the key stands for.
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
    const { key, ...info } = await insertHashedKey(trx, SERVER_KEYS, environmentId, name, manifest);
    return { ...toInfo(info), key };
  });
}

export async function listServerKeys(db: Queryable, environmentId: number): Promise<ServerKeyInfo[]> {
  return (await listHashedKeys(db, SERVER_KEYS, environmentId)).map(toInfo);
}

/** Revokes a key, refused by every process once that commits; null when there is no live key by that id. */
export async function revokeServerKey(db: Queryable, bus: Announcer, keyId: string): Promise<ServerKeyInfo | null> {
  const revoked = await revokeHashedKey(db, bus, SERVER_KEYS, keyId);
  return revoked && toInfo(revoked);
}

/** The live key a ServerKey document stands for, if it has one. */
export async function liveKeyOfManifest(db: Queryable, manifest: { namespace: string; name: string }): Promise<ServerKeyInfo | null> {
  const live = await liveHashedKeyOfManifest(db, SERVER_KEYS, manifest);
  return live && toInfo(live);
}

/** Verifies presented server keys (hashed-keys.ts: cached briefly, revocations pushed over the bus). */
export class ServerKeyVerifier {
  private readonly verifier: HashedKeyVerifier;

  constructor(db: Db, bus: InvalidationBus, clock?: Clock) {
    this.verifier = new HashedKeyVerifier(SERVER_KEYS, db, bus, clock);
  }

  /** The key's environment, or null for a malformed, unknown or revoked key. */
  async verify(credential: string): Promise<{ keyId: string; environmentId: number } | null> {
    const key = await this.verifier.verify(credential);
    return key && { keyId: key.keyId, environmentId: key.ownerId };
  }
}
