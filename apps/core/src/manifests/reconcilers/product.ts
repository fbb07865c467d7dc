import { inTransaction } from '../../db/transaction';
import { releaseProduct, syncProduct } from '../../commerce/products';
import type { ProductDefinition } from '../../contract/product';
import type { ProductManifestT } from '../schemas';
import { type Reconciler, environmentNamed, namespaceOf, ownedRowIdentity, refusalsNamed } from './shared';

/** A Product is one product of its environment's catalog (docs/commerce.md), keyed by `spec.sku`. */
export const productReconciler: Reconciler<ProductManifestT> = {
  reconcile: (db, doc, { bus, label }) =>
    inTransaction(db, async (trx) => {
      const namespace = namespaceOf(doc);
      const env = await environmentNamed(trx, namespace, doc.spec.environment, label);
      const { environment: _environment, ...spec } = doc.spec;
      const product = spec as ProductDefinition; // validation filled the defaults (spec/fields.ts)
      return { action: await refusalsNamed(label, () => syncProduct(trx, bus, { environmentId: env.id, owner: `${namespace}/${doc.metadata.name}`, product })) };
    }),

  identity: (db, doc) => ownedRowIdentity(db, 'commerce_products', doc, 'sku', { storeItemId: "(t.definition->>'storeItemId')::float8" }),

  remove: async (db, manifest, { bus }) => ((await releaseProduct(db, bus, `${manifest.namespace}/${manifest.name}`)) ? 'removed' : 'absent'),
};
