import { inTransaction } from '../../db/transaction';
import { itemTypeDefinitionOf, releaseItemType, syncItemType } from '../../items/item-types';
import type { ItemTypeManifestT } from '../schemas';
import { type Reconciler, environmentNamed, namespaceOf, ownedRowIdentity, refusalsNamed } from './shared';

/**
 * An ItemType is one item type of its environment, keyed by `spec.key` (or metadata.name). Deleted,
 * the definition goes (no longer listed, granted or sold); items players hold of it stay theirs.
 */
export const itemTypeReconciler: Reconciler<ItemTypeManifestT> = {
  reconcile: (db, doc, { bus, label }) =>
    inTransaction(db, async (trx) => {
      const namespace = namespaceOf(doc);
      const env = await environmentNamed(trx, namespace, doc.spec.environment, label);
      const owner = `${namespace}/${doc.metadata.name}`;
      return { action: await refusalsNamed(label, () => syncItemType(trx, bus, { environmentId: env.id, owner, definition: itemTypeDefinitionOf(doc) })) };
    }),

  identity: (db, doc) => ownedRowIdentity(db, 'item_types', doc),

  remove: async (db, manifest, { bus }) => ((await releaseItemType(db, bus, `${manifest.namespace}/${manifest.name}`)) ? 'removed' : 'absent'),
};
