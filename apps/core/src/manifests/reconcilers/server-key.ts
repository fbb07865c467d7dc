import { liveKeyOfManifest, mintServerKey, revokeServerKey } from '../../auth/server-keys';
import { inTransaction } from '../../db/transaction';
import type { ServerKey } from '../schemas';
import { type Reconciler, environmentNamed, namespaceOf, refusalsNamed } from './shared';

/**
 * A ServerKey document stands for one live key. The first reconcile mints it (the whole key is in
 * the outcome, this once); later ones leave it alone. Moved to another environment, the old key is
 * revoked (every process refuses it once that commits) and a new one minted, in one transaction:
 * past the plan's limit, neither happens. Deleted, its key is revoked.
 */
export const serverKeyReconciler: Reconciler<ServerKey> = {
  reconcile: (db, doc, { bus, label }) =>
    inTransaction(db, async (trx) => {
      const manifest = { namespace: namespaceOf(doc), name: doc.metadata.name };
      const env = await environmentNamed(trx, manifest.namespace, doc.spec.environment, label);
      const live = await liveKeyOfManifest(trx, manifest);
      if (live && live.environmentId === env.id) return { action: 'unchanged' };
      if (live) await revokeServerKey(trx, bus, live.keyId);
      const minted = await refusalsNamed(
        label,
        () => mintServerKey(trx, env.id, doc.metadata.name, env.plan.serverKeysPerEnvironment, manifest),
        'spec.environment',
      );
      return { action: live ? 'updated' : 'created', serverKey: { keyId: minted.keyId, key: minted.key } };
    }),

  remove: (db, manifest, { bus }) =>
    inTransaction(db, async (trx) => {
      const live = await liveKeyOfManifest(trx, manifest);
      if (!live) return 'absent';
      await revokeServerKey(trx, bus, live.keyId);
      return 'removed';
    }),
};
