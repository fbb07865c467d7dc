import type { Queryable } from '../db/knex';
import type { Announcer } from '../invalidation';
import {
  type HashedKeyInfo,
  type HashedKeyKind,
  insertHashedKey,
  listHashedKeys,
  liveHashedKeyOfManifest,
  revokeHashedKey,
} from '../auth/hashed-keys';

/**
 * Licence keys: `hlk_<keyId>_<secret>`, an organisation's (a project's) credential for the licence
 * routes only. Made, hashed, cached and revoked as server keys are (auth/hashed-keys.ts); the prefix
 * tells them apart before anything is looked up. How many keys an organisation holds is not limited:
 * what the plan limits is seats, whichever key takes them.
 */
export const LICENCE_KEY_PREFIX = 'hlk_';
export const LICENCE_KEYS: HashedKeyKind = { prefix: LICENCE_KEY_PREFIX, table: 'licence_keys', ownerColumn: 'project_id', invalidation: 'licence-key' };

export interface LicenceKeyInfo {
  keyId: string;
  projectId: number;
  name: string;
  secretHint: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface MintedLicenceKey extends LicenceKeyInfo {
  /** The whole key: shown once, never stored. */
  key: string;
}

function toInfo({ ownerId, ...info }: HashedKeyInfo): LicenceKeyInfo {
  return { ...info, projectId: ownerId };
}

export function looksLikeLicenceKey(credential: string): boolean {
  return credential.startsWith(LICENCE_KEY_PREFIX);
}

/** Mints a licence key of a project; `manifest` names the LicenceKey document it stands for. */
export async function mintLicenceKey(db: Queryable, projectId: number, name: string, manifest?: { namespace: string; name: string }): Promise<MintedLicenceKey> {
  const { key, ...info } = await insertHashedKey(db, LICENCE_KEYS, projectId, name, manifest);
  return { ...toInfo(info), key };
}

export async function listLicenceKeys(db: Queryable, projectId: number): Promise<LicenceKeyInfo[]> {
  return (await listHashedKeys(db, LICENCE_KEYS, projectId)).map(toInfo);
}

/** Revokes a licence key, refused by every process once that commits; null when there is no live key by that id. */
export async function revokeLicenceKey(db: Queryable, bus: Announcer, keyId: string): Promise<LicenceKeyInfo | null> {
  const revoked = await revokeHashedKey(db, bus, LICENCE_KEYS, keyId);
  return revoked && toInfo(revoked);
}

/** The live key a LicenceKey document stands for, if it has one. */
export async function liveLicenceKeyOfManifest(db: Queryable, manifest: { namespace: string; name: string }): Promise<LicenceKeyInfo | null> {
  const live = await liveHashedKeyOfManifest(db, LICENCE_KEYS, manifest);
  return live && toInfo(live);
}
