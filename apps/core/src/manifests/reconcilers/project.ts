import { upsertProject } from '../../tenancy/catalog';
import type { Project } from '../schemas';
import { Reconciler, namespaceOf, refusalsNamed } from './shared';

/** A Project is upserted by namespace and name; its plan must exist and hold its seats per session. */
export const projectReconciler: Reconciler<Project> = {
  reconcile: async (db, doc, { bus, label }) => ({
    action: await refusalsNamed(label, () => upsertProject(db, bus, { namespace: namespaceOf(doc), name: doc.metadata.name, spec: doc.spec })),
  }),
};
