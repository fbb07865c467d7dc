/**
 * Products (docs/commerce.md "Products"): written by Product manifests (syncProduct / releaseProduct,
 * called by the reconciler, `hearth apply` and the operator alike), read by the catalog (from memory,
 * per content version: each write bumps the environment's `products` content version and announces
 * it after commit) and by orders (from the database, in the order's transaction).
 * A sku is unique in its environment: a second document claiming it is refused `conflict`.
 */
import type { Db, Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import type { Announcer } from '../invalidation';
import { contentChanged } from '../content/game-config';
import { type OwnedRowTable, type SyncAction, releaseContent, releaseOwnedRows, syncOwnedRow } from '../content/owned-row';
import type { ProductDefinition } from '../contract/product';

/** The content-version kind of products (the catalog's cached snapshot follows it). */
export const PRODUCTS_CONTENT = 'products';

/** Where the rows of these documents are kept, for the owned-row rules (content/owned-row.ts). */
const PRODUCT_ROWS: OwnedRowTable = { name: 'commerce_products', keyColumn: 'sku', keyField: 'sku', kind: 'Product', jsonColumns: ['definition'] };

/**
 * Makes the product `owner` declares exactly `product` in its environment, under the owned-row rules:
 * a sku of another document is refused; a document that changed its sku or environment gives up the
 * old one (orders and entitlements keep their sku).
 */
export async function syncProduct(
  db: Queryable,
  bus: Announcer,
  target: { environmentId: number; owner: string; product: ProductDefinition },
): Promise<SyncAction> {
  const { environmentId, owner, product } = target;
  return inTransaction(db, async (trx) => {
    const outcome = await syncOwnedRow(trx, PRODUCT_ROWS, { environment_id: environmentId, sku: product.sku, owner, definition: product });
    for (const id of outcome.changedEnvironments) await contentChanged(trx, bus, id, PRODUCTS_CONTENT);
    return outcome.action;
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
