import { releaseSkillTree, skillTreeDefinitionOf, syncSkillTree } from '../../progression/skill-trees';
import type { SkillTreeManifestT } from '../schemas';
import { contentReconciler } from './shared';

/**
 * A SkillTree is one skill tree of its environment and its nodes, keyed by `spec.key` (or
 * metadata.name). Besides its schema's CEL rules, reconciling refuses a cycle through parents and a
 * node key another tree of the environment holds (docs/progression.md). Deleted, the tree goes (no
 * longer listed or unlocked); the nodes players unlocked stay theirs.
 */
export const skillTreeReconciler = contentReconciler<SkillTreeManifestT>({
  sync: (trx, place, doc, bus) => syncSkillTree(trx, bus, { ...place, tree: skillTreeDefinitionOf(doc) }),
  release: (db, owner, bus) => releaseSkillTree(db, bus, owner),
  rows: { table: 'skill_trees' },
});
