/** The dashboards area's kind: a member of a project's custom dashboard. */
import { DashboardMemberSpec } from '../../contract/dashboards';
import { releaseMember, syncMember } from '../../dashboards/members';
import { PROJECT_COLUMN, manifestKind, specColumn } from '../kind';
import { refOf, refusalsNamed } from '../reconciler';

/**
 * A DashboardMember stands for one person who may open its project's custom dashboard, in the
 * environments it lists with their permissions. Deleted (`kubectl delete dashboardmember`), the
 * account goes: its dashboard tokens are refused from the next call on.
 */
const DashboardMember = manifestKind('DashboardMember', DashboardMemberSpec, {
  crd: {
    plural: 'dashboardmembers',
    shortNames: ['dmember'],
    columns: [
      PROJECT_COLUMN,
      specColumn('Subject', 'string', 'subject'),
      specColumn('Email', 'string', 'email'),
      specColumn('Disabled', 'boolean', 'disabled'),
    ],
  },
  reconciler: {
    reconcile: async (db, doc, { label }) => ({
      action: await refusalsNamed(label, () => syncMember(db, { ...refOf(doc), spec: doc.spec })),
    }),

    remove: async (db, manifest) => ((await releaseMember(db, manifest)) ? 'removed' : 'absent'),
  },
});

export const dashboardKinds = { DashboardMember };
