import { releaseMember, syncMember } from '../../dashboards/members';
import type { DashboardMemberManifestT } from '../schemas';
import { type Reconciler, refOf, refusalsNamed } from './shared';

/**
 * A DashboardMember stands for one person who may open its project's custom dashboard, in the
 * environments it lists with their permissions. Deleted (`kubectl delete dashboardmember`), the
 * account goes: its dashboard tokens are refused from the next call on.
 */
export const dashboardMemberReconciler: Reconciler<DashboardMemberManifestT> = {
  reconcile: async (db, doc, { label }) => ({
    action: await refusalsNamed(label, () => syncMember(db, { ...refOf(doc), spec: doc.spec })),
  }),

  remove: async (db, manifest) => ((await releaseMember(db, manifest)) ? 'removed' : 'absent'),
};
