import { upsertPlan } from '../../tenancy/catalog';
import type { Plan } from '../schemas';
import type { Reconciler } from './shared';

/**
 * A Plan is upserted by name; every environment under it sees the new numbers once it commits. It has
 * no `remove`: projects (live or retired, whose data is kept) point at it by name, so a deleted Plan
 * document leaves its row as it is, and applying it again simply updates it.
 */
export const planReconciler: Reconciler<Plan> = {
  reconcile: async (db, doc, { bus }) => ({ action: await upsertPlan(db, bus, doc.metadata.name, doc.spec) }),
};
