import { Type, type Static } from '@sinclair/typebox';
import { PRICE_RULES } from '../contract/item-type';
import { Figure, Nullable, OneOf, Shape } from './common';
import { Movement } from './economy';
import { Price } from './items';

const nodeDefinitionFields = {
  key: Type.String(),
  treeKey: Type.String(),
  name: Type.String(),
  description: Type.String(),
  icon: Nullable(Type.String()),
  priceRule: OneOf(PRICE_RULES),
  parents: Type.Array(Type.String(), { description: 'nodes that must all be unlocked first' }),
  prices: Type.Array(Price),
};

/** A skill node as GET /definitions/skill-trees lists it: with parents and prices. */
export const SkillNodeDefinition = Shape('SkillNodeDefinition', nodeDefinitionFields);
export type SkillNodeDefinition = Static<typeof SkillNodeDefinition>;

/** What a skill tree's definition and a player's tree both say of the tree. */
const treeFields = {
  key: Type.String(),
  name: Type.String(),
  description: Type.String(),
  hidden: Type.Boolean(),
};

/** A skill tree definition (GET /definitions/skill-trees): the SkillTree of spec §2 without a player's flags. */
export const SkillTreeDefinition = Shape('SkillTreeDefinition', {
  ...treeFields,
  enabled: Type.Boolean({ description: "false: switched off (left out of the players' trees, its nodes not unlocked)" }),
  nodes: Type.Array(SkillNodeDefinition, { description: 'in the order the tree declares them' }),
});
export type SkillTreeDefinition = Static<typeof SkillTreeDefinition>;

/** A skill node as a player has it (spec §2 SkillTree nodes). */
export const SkillNode = Shape('SkillNode', {
  ...nodeDefinitionFields,
  unlocked: Type.Boolean(),
  unlockable: Type.Boolean({ description: 'not unlocked and every parent is' }),
});
export type SkillNode = Static<typeof SkillNode>;

/** SkillTree (spec §2): a tree with the player's flags on each node. */
export const SkillTree = Shape('SkillTree', {
  ...treeFields,
  nodes: Type.Array(SkillNode),
});
export type SkillTree = Static<typeof SkillTree>;

/** The answer of POST /players/:playerId/skill-nodes/:nodeKey/unlock. */
export const SkillNodeUnlock = Shape('SkillNodeUnlock', {
  nodeKey: Type.String(),
  alreadyUnlocked: Type.Boolean({ description: 'true: the player held the node already; nothing was charged' }),
  charges: Type.Array(Movement, { description: 'one Movement per currency charged, in currency-key order' }),
});
export type SkillNodeUnlock = Static<typeof SkillNodeUnlock>;

/** XP entry (spec §2): a track's total. */
export const XpEntry = Shape('XpEntry', { track: Type.String(), xp: Figure() });
export type XpEntry = Static<typeof XpEntry>;

/** Stat (spec §2): a 64-bit signed counter, as a decimal string. */
export const Stat = Shape('Stat', {
  key: Type.String(),
  value: Type.String({ pattern: '^-?[0-9]+$', description: 'a 64-bit signed counter as a decimal string' }),
});
export type Stat = Static<typeof Stat>;
