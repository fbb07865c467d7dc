import type { Queryable } from '../db/knex';
import type { Announcer } from '../invalidation';
import { refuse } from '../errors';
import { compile } from '../validation';
import { LICENCE_KEY_PRODUCTS_MAX, LicenceProductName } from '../contract/resources';
import {
  type HashedKeyInfo,
  type HashedKeyKind,
  type KeyInfoOf,
  insertHashedKey,
  listHashedKeys,
  liveHashedKeyOfManifest,
  revokeHashedKey,
} from '../auth/hashed-keys';

/**
 * Licence keys: `hlk_<keyId>_<secret>`, an organisation's (a project's) credential for the licence
 * routes only. Made, hashed, cached and revoked as server keys are (auth/hashed-keys.ts); the prefix
 * tells them apart before anything is looked up. How many keys an organisation holds is not limited:
 * what the plan limits is seats, whichever key takes them. Each key names the products it covers
 * (`products`): a machine activates with it, and a seat's token is issued to it, only for one of them.
 */
export const LICENCE_KEY_PREFIX = 'hlk_';
export const LICENCE_KEYS: HashedKeyKind = { prefix: LICENCE_KEY_PREFIX, table: 'licence_keys', ownerColumn: 'project_id', invalidation: 'licence-key' };

export type LicenceKeyInfo = KeyInfoOf<'projectId'> & {
  /** The client plugins' products the key covers. */
  products: string[];
};

export interface MintedLicenceKey extends LicenceKeyInfo {
  /** The whole key: shown once, never stored. */
  key: string;
}

function toInfo({ ownerId, ...info }: HashedKeyInfo, products: string[]): LicenceKeyInfo {
  return { ...info, projectId: ownerId, products };
}

/** The products of each of these keys, by key id. */
async function productsOf(db: Queryable, keyIds: string[]): Promise<Map<string, string[]>> {
  if (keyIds.length === 0) return new Map();
  const rows = await db('licence_keys').whereIn('key_id', keyIds).select('key_id', 'products');
  return new Map(rows.map((row: { key_id: string; products: string[] }) => [row.key_id, row.products]));
}

/**
 * The products a key is to cover, checked as a LicenceKey document's `spec.products` is: 1 to
 * LICENCE_KEY_PRODUCTS_MAX names of the route's product grammar (LicenceProductName), each once.
 * Refused as `products`.
 */
export function checkLicenceProducts(products: readonly string[]): string[] {
  if (products.length < 1 || products.length > LICENCE_KEY_PRODUCTS_MAX) {
    throw refuse.invalid('products', `a licence key covers 1-${LICENCE_KEY_PRODUCTS_MAX} products (${products.length} named)`);
  }
  const isName = compile(LicenceProductName);
  const bad = products.find((p) => !isName(p));
  if (bad !== undefined) throw refuse.invalid('products', `product "${bad}" is not a product name (1-64 printable ASCII characters, no spaces)`);
  const twice = products.find((p, i) => products.indexOf(p) !== i);
  if (twice !== undefined) throw refuse.invalid('products', `product "${twice}" is named twice; name each product once`);
  return [...products];
}

export function looksLikeLicenceKey(credential: string): boolean {
  return credential.startsWith(LICENCE_KEY_PREFIX);
}

/**
 * Mints a licence key of a project covering `products` (checkLicenceProducts: refused as `products`);
 * `manifest` names the LicenceKey document it stands for.
 */
export async function mintLicenceKey(
  db: Queryable,
  projectId: number,
  name: string,
  products: readonly string[],
  manifest?: { namespace: string; name: string },
): Promise<MintedLicenceKey> {
  const covered = checkLicenceProducts(products);
  const { key, ...info } = await insertHashedKey(db, LICENCE_KEYS, projectId, name, manifest, { products: covered });
  return { ...toInfo(info, covered), key };
}

export async function listLicenceKeys(db: Queryable, projectId: number): Promise<LicenceKeyInfo[]> {
  const keys = await listHashedKeys(db, LICENCE_KEYS, projectId);
  const products = await productsOf(
    db,
    keys.map((k) => k.keyId),
  );
  return keys.map((k) => toInfo(k, products.get(k.keyId) ?? []));
}

/** Revokes a licence key, refused by every process once that commits; null when there is no live key by that id. */
export async function revokeLicenceKey(db: Queryable, bus: Announcer, keyId: string): Promise<LicenceKeyInfo | null> {
  const revoked = await revokeHashedKey(db, bus, LICENCE_KEYS, keyId);
  return revoked && toInfo(revoked, (await productsOf(db, [keyId])).get(keyId) ?? []);
}

/** The live key a LicenceKey document stands for, if it has one. */
export async function liveLicenceKeyOfManifest(db: Queryable, manifest: { namespace: string; name: string }): Promise<LicenceKeyInfo | null> {
  const live = await liveHashedKeyOfManifest(db, LICENCE_KEYS, manifest);
  return live && toInfo(live, (await productsOf(db, [live.keyId])).get(live.keyId) ?? []);
}

/**
 * Sets the products a live key covers (checkLicenceProducts), the key itself unchanged; takes effect
 * on the next activation or check (they read it from the database, never from a cache). False when
 * there is no live key by that id.
 */
export async function setLicenceKeyProducts(db: Queryable, keyId: string, products: readonly string[]): Promise<boolean> {
  const covered = checkLicenceProducts(products);
  return (await db('licence_keys').where({ key_id: keyId }).whereNull('revoked_at').update({ products: covered })) > 0;
}

/** Whether the key covers the product (a revoked or unknown key covers nothing). */
export async function licenceKeyCovers(db: Queryable, keyId: string, product: string): Promise<boolean> {
  const row = await db('licence_keys').where({ key_id: keyId }).whereNull('revoked_at').whereRaw('? = ANY(products)', [product]).first(db.raw('1 AS covered'));
  return row !== undefined;
}
