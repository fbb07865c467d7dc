import { upsertPlan } from '../../tenancy/catalog';
import type { Plan } from '../schemas';
import type { Reconciler } from './shared';

/** A Plan is upserted by name; every environment under it sees the new numbers once it commits. */
export const planReconciler: Reconciler<Plan> = {
  reconcile: async (db, doc, { bus }) => ({ action: await upsertPlan(db, bus, doc.metadata.name, doc.spec) }),
};
