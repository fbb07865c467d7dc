import { liveEnvironmentIdentity, retireEnvironment, upsertEnvironment } from '../../tenancy/catalog';
import type { GameEnvironment } from '../schemas';
import { type Reconciler, refOf, refusalsNamed } from './shared';

/**
 * A GameEnvironment is upserted by namespace and name, under a Project of its namespace, with an app
 * key of its own. Deleted, it is retired, never deleted (retireEnvironment): its credentials stop
 * working everywhere at once, its players' data stays, and applying it again brings it back.
 */
export const gameEnvironmentReconciler: Reconciler<GameEnvironment> = {
  reconcile: async (db, doc, { bus, label }) => ({
    action: await refusalsNamed(label, () =>
      upsertEnvironment(db, bus, { ...refOf(doc), project: doc.spec.project, appKey: doc.spec.appKey, allowedOrigins: doc.spec.cors?.allowedOrigins ?? [] }),
    ),
  }),

  // A retired row (its document was deleted) is no identity: the document created again may name another project or app key.
  identity: async (db, doc) => {
    const stored = await liveEnvironmentIdentity(db, refOf(doc));
    return stored ? { stored, wanted: { project: doc.spec.project, appKey: doc.spec.appKey } } : null;
  },

  remove: async (db, manifest, { bus }) => ((await retireEnvironment(db, bus, manifest)) === 'retired' ? 'removed' : 'absent'),
};
