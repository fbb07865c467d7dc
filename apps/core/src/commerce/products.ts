/**
 * Products (docs/commerce.md "Products"): written by Product manifests (syncProduct / releaseProduct,
 * called by the reconciler, `hearth apply` and the operator alike), read by the catalog (from memory,
 * per content version: each write bumps the environment's `products` content version and announces
 * it after commit) and by orders (from the database, in the order's transaction).
 * A sku is unique in its environment: a second document claiming it is refused `conflict`.
 */
import { sameJson } from '../canonical-json';
import type { Db, Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import type { Announcer } from '../invalidation';
import { contentChanged } from '../content/game-config';
import { lockContentWriter, refuseKeyOfAnother, releaseContent, releaseOwnedRows } from '../content/owned-row';
import type { ProductDefinition } from '../contract/product';

/** The content-version kind of products (the catalog's cached snapshot follows it). */
export const PRODUCTS_CONTENT = 'products';

/** Where the rows of these documents are kept, for the owned-row rules (content/owned-row.ts). */
const PRODUCT_ROWS = { name: 'commerce_products', keyColumn: 'sku', keyField: 'sku', kind: 'Product' };

export async function syncProduct(
  db: Queryable,
  bus: Announcer,
  target: { environmentId: number; owner: string; product: ProductDefinition },
): Promise<'created' | 'updated' | 'unchanged'> {
  const { environmentId, owner, product } = target;
  return inTransaction(db, async (trx) => {
    await lockContentWriter(trx, environmentId);
    await refuseKeyOfAnother(trx, PRODUCT_ROWS, environmentId, product.sku, owner);
    const before = await trx('commerce_products').where({ owner }).first();
    if (before && Number(before.environment_id) === environmentId && before.sku === product.sku && sameJson(before.definition, product)) return 'unchanged';
    // A document that changed its sku or environment gives up the old one (orders and entitlements keep their sku).
    await trx('commerce_products').where({ owner }).delete();
    await trx('commerce_products').insert({ environment_id: environmentId, sku: product.sku, owner, definition: JSON.stringify(product) });
    if (before && Number(before.environment_id) !== environmentId) await contentChanged(trx, bus, Number(before.environment_id), PRODUCTS_CONTENT);
    await contentChanged(trx, bus, environmentId, PRODUCTS_CONTENT);
    return before ? 'updated' : 'created';
  });
}

export async function releaseProduct(db: Queryable, bus: Announcer, owner: string): Promise<boolean> {
  return releaseContent(db, bus, PRODUCTS_CONTENT, (trx) => releaseOwnedRows(trx, PRODUCT_ROWS.name, owner));
}

/** A product as the catalog snapshot keeps it: keyed by sku (DefinitionSnapshots' `key`). */
export type CatalogEntry = ProductDefinition & { key: string };

/** The environment's products on sale, by sku: what the catalog's snapshot holds. */
export async function loadCatalogEntries(db: Db, environmentId: number): Promise<CatalogEntry[]> {
  return (await loadProducts(db, environmentId)).filter((product) => product.enabled).map((product) => ({ ...product, key: product.sku }));
}

/** The environment's products, by sku (switched-off ones included: callers decide). */
export async function loadProducts(db: Queryable, environmentId: number): Promise<ProductDefinition[]> {
  const rows = await db('commerce_products').where({ environment_id: environmentId }).orderBy('sku').select('definition');
  return rows.map((row: { definition: ProductDefinition }) => row.definition);
}

export async function loadProduct(db: Queryable, environmentId: number, sku: string): Promise<ProductDefinition | null> {
  const row = await db('commerce_products').where({ environment_id: environmentId, sku }).first('definition');
  return row ? (row.definition as ProductDefinition) : null;
}
