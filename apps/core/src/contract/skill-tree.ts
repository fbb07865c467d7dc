/**
 * The SkillTree manifest's spec (docs/progression.md "Skill trees"): one skill tree of an environment
 * and its nodes, as a designer writes it. Rules within the document are CEL (spec/rules.ts), so the
 * Kubernetes API server and `hearth apply` refuse a bad document alike: a node's parents are nodes of
 * the same tree, node keys are unique in the tree, each currency is priced once. What CEL cannot say
 * cheaply (no cycle through parents) and what spans documents (a node key claimed by two trees of an
 * environment) is checked when the document is reconciled, by `hearth apply` and the operator alike
 * (progression/skill-trees.ts).
 */
import { type Static, Type } from '@sinclair/typebox';
import { celRules, immutable } from './rules';
import { EnvironmentReference } from './names';
import { Defaulted, Icon, KeyList, ShownDescription, ShownName } from './fields';
import { GameKey } from './game-keys';
import { ANY_NEEDS_A_PRICE, priceFields } from './item-type';

/** Bounds that keep a tree readable and the CRD's CEL rules within the API server's cost budget. */
export const SKILL_TREE_LIMITS = {
  nodes: 64,
  parents: 8,
  prices: 10,
  requires: 20,
} as const;

const L = SKILL_TREE_LIMITS;

export const SkillNodeSpec = Type.Object(
  {
    key: GameKey('the node key; unique across every skill tree of the environment (the unlock route names a node without its tree)'),
    name: ShownName(),
    description: ShownDescription(),
    icon: Icon(),
    parents: KeyList(GameKey('a node of the same tree'), 'parent', { maxItems: L.parents, description: 'nodes that must all be unlocked first' }),
    ...priceFields(L.prices, 'player', 'what unlocking the node costs'),
    requires: KeyList(GameKey('an unlock key (or another skill node key)'), 'unlock', {
      maxItems: L.requires,
      description: 'unlocks the player must hold besides the parents (`locked` with details.missing otherwise)',
    }),
  },
  {
    additionalProperties: false,
    ...celRules(
      { rule: '!has(self.parents) || !self.parents.exists(p, p == self.key)', message: 'cannot name the node itself', fieldPath: '.parents' },
      ANY_NEEDS_A_PRICE,
    ),
  },
);

export const SkillTreeSpec = Type.Object(
  {
    environment: immutable(EnvironmentReference(), { why: 'the nodes players unlocked are kept in that environment' }),
    key: Type.Optional(
      immutable(GameKey('the key clients and servers name the tree by; metadata.name when absent'), { why: 'clients and servers ask for the tree by it' }),
    ),
    name: ShownName(),
    description: ShownDescription(),
    hidden: Defaulted(Type.Boolean({ default: false, description: 'left out of the lists a player token reads (servers still see it)' })),
    enabled: Defaulted(
      Type.Boolean({
        default: true,
        description:
          "switched off: still listed by the definitions (enabled: false), left out of every player's trees, and its nodes not unlocked (`disabled`); what players unlocked stays",
      }),
    ),
    nodes: Type.Array(SkillNodeSpec, { minItems: 1, maxItems: L.nodes, description: 'in the order the game shows them' }),
  },
  {
    additionalProperties: false,
    ...celRules(
      { rule: 'self.nodes.all(n, self.nodes.exists_one(m, m.key == n.key))', message: 'must give each node a key of its own', fieldPath: '.nodes' },
      {
        rule: 'self.nodes.all(n, !has(n.parents) || n.parents.all(p, self.nodes.exists(m, m.key == p)))',
        message: 'may name as parents only nodes of the same tree',
        fieldPath: '.nodes',
      },
    ),
  },
);

export type SkillTreeSpecT = Static<typeof SkillTreeSpec>;
