import { releaseProduct, syncProduct } from '../../commerce/products';
import type { ProductDefinition } from '../../contract/product';
import type { ProductManifestT } from '../schemas';
import { contentReconciler } from './shared';

/** A Product is one product of its environment's catalog (docs/commerce.md), keyed by `spec.sku`. */
export const productReconciler = contentReconciler<ProductManifestT>({
  // Validation filled the defaults (contract/fields.ts), so the spec is a whole definition.
  sync: (trx, place, { spec: { environment: _environment, ...product } }, bus) => syncProduct(trx, bus, { ...place, product: product as ProductDefinition }),
  release: (db, owner, bus) => releaseProduct(db, bus, owner),
  rows: { table: 'commerce_products', keyField: 'sku', more: { storeItemId: "(t.definition->>'storeItemId')::float8" } },
});
