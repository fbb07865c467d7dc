import { inTransaction } from '../../db/transaction';
import { realmRow, releaseRealm, syncRealm } from '../../economy/definitions';
import type { RealmManifestT } from '../schemas';
import { type Reconciler, environmentNamed, namespaceOf, ownedRowIdentity, refusalsNamed } from './shared';

/** A Realm stands for one realm of its environment, keyed by `spec.key` (or metadata.name). Deleted, it is no longer listed; inventories of it stay. */
export const realmReconciler: Reconciler<RealmManifestT> = {
  reconcile: (db, doc, { label }) =>
    inTransaction(db, async (trx) => {
      const namespace = namespaceOf(doc);
      const env = await environmentNamed(trx, namespace, doc.spec.environment, label);
      const owner = `${namespace}/${doc.metadata.name}`;
      return { action: await refusalsNamed(label, () => syncRealm(trx, { environmentId: env.id, owner, row: realmRow(doc) })) };
    }),

  identity: (db, doc) => ownedRowIdentity(db, 'realms', doc),

  remove: async (db, manifest) => ((await releaseRealm(db, `${manifest.namespace}/${manifest.name}`)) ? 'removed' : 'absent'),
};
