import { releaseGameConfig, syncGameConfig } from '../../content/game-config-sync';
import { inTransaction } from '../../db/transaction';
import type { GameConfig } from '../schemas';
import { type Reconciler, environmentNamed, namespaceOf, refusalsNamed } from './shared';

/** The owner the rows of a GameConfig carry: `namespace/name`, unique across the deployment. */
function ownerOf(manifest: { namespace: string; name: string }): string {
  return `${manifest.namespace}/${manifest.name}`;
}

/**
 * A GameConfig owns the values, tables and flags it lists in its environment: reconciling makes that
 * environment's rows of this owner exactly those (see syncGameConfig). Deleted, its rows go, in
 * whichever environment they are.
 */
export const gameConfigReconciler: Reconciler<GameConfig> = {
  reconcile: (db, doc, { bus, label }) =>
    inTransaction(db, async (trx) => {
      const namespace = namespaceOf(doc);
      const env = await environmentNamed(trx, namespace, doc.spec.environment, label);
      const { environment: _environment, ...content } = doc.spec;
      const owner = ownerOf({ namespace, name: doc.metadata.name });
      return { action: await refusalsNamed(label, () => syncGameConfig(trx, bus, { environmentId: env.id, owner, content })) };
    }),

  remove: async (db, manifest, { bus }) => ((await releaseGameConfig(db, bus, ownerOf(manifest))) ? 'removed' : 'absent'),
};
