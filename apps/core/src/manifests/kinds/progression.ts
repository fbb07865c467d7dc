/** The progression area's kind: a skill tree and its nodes. */
import { SkillTreeSpec } from '../../contract/skill-tree';
import { releaseSkillTree, skillTreeDefinitionOf, syncSkillTree } from '../../progression/skill-trees';
import { ENVIRONMENT_COLUMN, manifestKind, specColumn } from '../kind';
import { contentReconciler } from '../reconciler';

/**
 * A SkillTree is one skill tree of its environment and its nodes, keyed by `spec.key` (or
 * metadata.name). Besides its schema's CEL rules, reconciling refuses a cycle through parents and a
 * node key another tree of the environment holds (docs/progression.md). Deleted, the tree goes (no
 * longer listed or unlocked); the nodes players unlocked stay theirs.
 */
const SkillTree = manifestKind('SkillTree', SkillTreeSpec, {
  crd: {
    plural: 'skilltrees',
    shortNames: ['skilltree'],
    columns: [ENVIRONMENT_COLUMN, specColumn('Key', 'string', 'key'), specColumn('Hidden', 'boolean', 'hidden')],
  },
  reconciler: contentReconciler({
    sync: (trx, place, doc, bus) => syncSkillTree(trx, bus, { ...place, tree: skillTreeDefinitionOf(doc) }),
    release: (db, owner, bus) => releaseSkillTree(db, bus, owner),
    rows: { table: 'skill_trees' },
  }),
});

export const progressionKinds = { SkillTree };
