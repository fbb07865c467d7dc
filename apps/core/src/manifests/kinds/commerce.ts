/** The commerce area's kind: a product of the catalog. */
import { type ProductDefinition, ProductSpec } from '../../contract/product';
import { releaseProduct, syncProduct } from '../../commerce/products';
import { ENABLED_COLUMN, ENVIRONMENT_COLUMN, manifestKind, specColumn } from '../kind';
import { contentReconciler } from '../reconciler';

/** A Product is one product of its environment's catalog (docs/commerce.md), keyed by `spec.sku`. */
const Product = manifestKind('Product', ProductSpec, {
  crd: { plural: 'products', shortNames: ['hproduct'], columns: [ENVIRONMENT_COLUMN, specColumn('SKU', 'string', 'sku'), ENABLED_COLUMN] },
  reconciler: contentReconciler({
    // Validation filled the defaults (contract/fields.ts), so the spec is a whole definition.
    sync: (trx, place, { spec: { environment: _environment, ...product } }, bus) => syncProduct(trx, bus, { ...place, product: product as ProductDefinition }),
    release: (db, owner, bus) => releaseProduct(db, bus, owner),
    rows: { table: 'commerce_products', keyField: 'sku', more: { storeItemId: "(t.definition->>'storeItemId')::float8" } },
  }),
});

export const commerceKinds = { Product };
