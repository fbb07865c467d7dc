import { retireProject, upsertProject } from '../../tenancy/catalog';
import type { Project } from '../schemas';
import { type Reconciler, refOf, refusalsNamed } from './shared';

/**
 * A Project is upserted by namespace and name; its plan must exist and hold its seats per session.
 * Deleted, it is retired once it has no live environment (refused, `conflict`, until then), never
 * deleted (retireProject); applying it again brings it back.
 */
export const projectReconciler: Reconciler<Project> = {
  reconcile: async (db, doc, { bus, label }) => ({
    action: await refusalsNamed(label, () => upsertProject(db, bus, { ...refOf(doc), spec: doc.spec })),
  }),

  remove: async (db, manifest, { bus }) => ((await retireProject(db, bus, manifest)) === 'retired' ? 'removed' : 'absent'),
};
