import { inTransaction } from '../../db/transaction';
import { releaseSkillTree, skillTreeDefinitionOf, syncSkillTree } from '../../progression/skill-trees';
import type { SkillTreeManifestT } from '../schemas';
import { type Reconciler, environmentNamed, namespaceOf, ownedRowIdentity, refusalsNamed } from './shared';

/**
 * A SkillTree is one skill tree of its environment and its nodes, keyed by `spec.key` (or
 * metadata.name). Besides its schema's CEL rules, reconciling refuses a cycle through parents and a
 * node key another tree of the environment holds (docs/progression.md). Deleted, the tree goes (no
 * longer listed or unlocked); the nodes players unlocked stay theirs.
 */
export const skillTreeReconciler: Reconciler<SkillTreeManifestT> = {
  reconcile: (db, doc, { bus, label }) =>
    inTransaction(db, async (trx) => {
      const namespace = namespaceOf(doc);
      const env = await environmentNamed(trx, namespace, doc.spec.environment, label);
      const owner = `${namespace}/${doc.metadata.name}`;
      return { action: await refusalsNamed(label, () => syncSkillTree(trx, bus, { environmentId: env.id, owner, tree: skillTreeDefinitionOf(doc) })) };
    }),

  identity: (db, doc) => ownedRowIdentity(db, 'skill_trees', doc),

  remove: async (db, manifest, { bus }) => ((await releaseSkillTree(db, bus, `${manifest.namespace}/${manifest.name}`)) ? 'removed' : 'absent'),
};
