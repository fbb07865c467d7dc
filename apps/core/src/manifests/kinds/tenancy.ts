/** The tenancy area's kinds: the plans, projects and environments the rest point at. */
import { GameEnvironmentSpec, PlanSpec, ProjectSpec } from '../../contract/resources';
import {
  liveEnvironmentIdentity,
  livePlanNames,
  retireEnvironment,
  retirePlan,
  retireProject,
  upsertEnvironment,
  upsertPlan,
  upsertProject,
} from '../../tenancy/catalog';
import { PROJECT_COLUMN, manifestKind, specColumn } from '../kind';
import { refOf, refusalsNamed } from '../reconciler';

/**
 * A Plan is upserted by name; every environment under it sees the new numbers once it commits.
 * Deleted, it is retired (retirePlan): no project can be put on it any more, refused while live
 * projects are on it; its row stays for the retired projects that name it, and applying it again
 * brings it back.
 */
const Plan = manifestKind('Plan', PlanSpec, {
  namespaced: false,
  crd: { plural: 'plans', shortNames: ['hplan'], columns: [specColumn('Players', 'integer', 'playersPerEnvironment')] },
  reconciler: {
    reconcile: async (db, doc, { bus }) => ({ action: await upsertPlan(db, bus, doc.metadata.name, doc.spec) }),

    remove: async (db, manifest, { bus }) => ((await retirePlan(db, bus, manifest.name)) === 'retired' ? 'removed' : 'absent'),

    live: (db) => livePlanNames(db),
  },
});

/**
 * A Project is upserted by namespace and name; its plan must exist and hold its seats per session.
 * Deleted, it is retired once it has no live environment (refused, `conflict`, until then), never
 * deleted (retireProject); applying it again brings it back.
 */
const Project = manifestKind('Project', ProjectSpec, {
  crd: {
    plural: 'projects',
    shortNames: ['hproject'],
    columns: [specColumn('Plan', 'string', 'plan'), specColumn('Review', 'string', 'review')],
  },
  reconciler: {
    reconcile: async (db, doc, { bus, label }) => ({
      action: await refusalsNamed(label, () => upsertProject(db, bus, { ...refOf(doc), spec: doc.spec })),
    }),

    remove: async (db, manifest, { bus }) => ((await retireProject(db, bus, manifest)) === 'retired' ? 'removed' : 'absent'),
  },
});

/**
 * A GameEnvironment is upserted by namespace and name, under a Project of its namespace, with an app
 * key of its own. Deleted, it is retired, never deleted (retireEnvironment): its credentials stop
 * working everywhere at once, its players' data stays, and applying it again brings it back.
 */
const GameEnvironment = manifestKind('GameEnvironment', GameEnvironmentSpec, {
  crd: { plural: 'gameenvironments', shortNames: ['genv'], columns: [PROJECT_COLUMN, specColumn('App Key', 'string', 'appKey')] },
  reconciler: {
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
  },
});

export const tenancyKinds = { Plan, Project, GameEnvironment };
