/**
 * Products (docs/commerce.md "Products"): written by Product manifests (syncProduct / releaseProduct,
 * called by the reconciler, `hearth apply` and the operator alike), read by the catalog and by orders.
 * A sku is unique in its environment: a second document claiming it is refused `conflict`.
 */
import { sameJson } from '../canonical-json';
import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import type { ProductDefinition } from '../spec/product';

export async function syncProduct(
  db: Queryable,
  target: { environmentId: number; owner: string; product: ProductDefinition },
): Promise<'created' | 'updated' | 'unchanged'> {
  const { environmentId, owner, product } = target;
  return inTransaction(db, async (trx) => {
    // One content writer per environment at a time: two documents claiming one sku cannot both see it free.
    await trx.raw('SELECT id FROM environments WHERE id = ? FOR NO KEY UPDATE', [environmentId]);
    const taken = await trx('commerce_products').where({ environment_id: environmentId, sku: product.sku }).first('owner');
    if (taken && taken.owner !== owner) throw refuse.conflict(`"${product.sku}" already belongs to Product ${taken.owner}`, { field: 'sku' });
    const before = await trx('commerce_products').where({ owner }).first();
    if (before && Number(before.environment_id) === environmentId && before.sku === product.sku && sameJson(before.definition, product)) return 'unchanged';
    // A document that changed its sku or environment gives up the old one (orders and entitlements keep their sku).
    await trx('commerce_products').where({ owner }).delete();
    await trx('commerce_products').insert({ environment_id: environmentId, sku: product.sku, owner, definition: JSON.stringify(product) });
    return before ? 'updated' : 'created';
  });
}

export async function releaseProduct(db: Queryable, owner: string): Promise<boolean> {
  const deleted = await db('commerce_products').where({ owner }).delete();
  return deleted > 0;
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
