import { livePlanNames, retirePlan, upsertPlan } from '../../tenancy/catalog';
import type { Plan } from '../schemas';
import type { Reconciler } from './shared';

/**
 * A Plan is upserted by name; every environment under it sees the new numbers once it commits.
 * Deleted, it is retired (retirePlan): no project can be put on it any more, refused while live
 * projects are on it; its row stays for the retired projects that name it, and applying it again
 * brings it back.
 */
export const planReconciler: Reconciler<Plan> = {
  reconcile: async (db, doc, { bus }) => ({ action: await upsertPlan(db, bus, doc.metadata.name, doc.spec) }),

  remove: async (db, manifest, { bus }) => ((await retirePlan(db, bus, manifest.name)) === 'retired' ? 'removed' : 'absent'),

  live: (db) => livePlanNames(db),
};
