import { inTransaction } from '../../db/transaction';
import { releaseTour, syncTour, tourContent } from '../../tours/tours';
import type { TourManifestT } from '../schemas';
import { type Reconciler, environmentNamed, namespaceOf, ownedRowIdentity, refusalsNamed } from './shared';

/** A Tour stands for one tour of its environment, keyed by `spec.id` (or metadata.name). Deleted, the tour goes. */
export const tourReconciler: Reconciler<TourManifestT> = {
  reconcile: (db, doc, { label }) =>
    inTransaction(db, async (trx) => {
      const namespace = namespaceOf(doc);
      const env = await environmentNamed(trx, namespace, doc.spec.environment, label);
      const owner = `${namespace}/${doc.metadata.name}`;
      return { action: await refusalsNamed(label, () => syncTour(trx, { environmentId: env.id, owner, content: tourContent(doc) })) };
    }),

  identity: (db, doc) => ownedRowIdentity(db, 'tours', doc, 'id'),

  remove: async (db, manifest) => ((await releaseTour(db, `${manifest.namespace}/${manifest.name}`)) ? 'removed' : 'absent'),
};
