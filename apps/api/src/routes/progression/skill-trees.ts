/**
 * Skill trees (spec §4 Progression and Definitions, §2 SkillTree): the definitions a server reads, a
 * player's trees with each node's `unlocked` and `unlockable`, and a node's unlock. The domain is
 * apps/core/src/progression/skill-trees.ts; docs/progression.md.
 *
 * The unlock takes an optional Idempotency-Key (either credential): its one statement claims and
 * answers the key's record (the money engine), so a retry answers the first unlock. Without one, a
 * repeat answers `alreadyUnlocked: true` and charges nothing.
 */
import { Type } from '@sinclair/typebox';
import { GAME_KEY_PATTERN, GameKey, MAX_BALANCE } from '@hearth/core/contract';
import { SkillNodeUnlock, SkillTree, SkillTreeDefinition, Id, PageOf } from '@hearth/core/shapes';
import { BODY_LIMITS } from '../../http/route';
import { progressionRoute } from './area';
import { listedForPlayer, playerPage, targetPlayerId } from '../players/target';
import { engineAnswer, engineMove } from '../economy/held';
import { definitionsPage } from '../definitions';

/** At most this many allowances in one body (as a purchase's). */
const ALLOWANCES_MAX = 100;

export const listSkillTreeDefinitions = definitionsPage(
  'progression',
  {
    operationId: 'listSkillTreeDefinitions',
    path: '/definitions/skill-trees',
    summary: "The environment's skill trees, ordered by key, each node with its parents and prices",
    description: 'Hidden trees are listed (`hidden: true`), switched-off ones too (`enabled: false`); deleted ones are not.',
    item: SkillTreeDefinition,
    pageOf: 'skill tree definitions',
  },
  { etag: (ctx, ask) => ctx.core.skillTrees.etag(ctx.env.id, ask), list: (ctx) => ctx.core.skillTrees.listDefinitions(ctx.env, ctx.query) },
);

export const listPlayerSkillTrees = progressionRoute({
  ...playerPage('progression'),
  operationId: 'listPlayerSkillTrees',
  path: '/players/:playerId/skill-trees',
  summary: "The player's skill trees by key, each node with `unlocked` and `unlockable`",
  description: "Switched-off trees are left out; hidden ones too for a player's token (a server key sees them).",
  success: { status: 200, description: 'A page of skill trees', schema: PageOf(SkillTree) },
  ...listedForPlayer((ctx, playerId) => ctx.core.skillTrees.listForPlayer(ctx.db, ctx.env, playerId, ctx.principal.kind !== 'player', ctx.query)),
});

export const getPlayerSkillTree = progressionRoute({
  operationId: 'getPlayerSkillTree',
  method: 'GET',
  path: '/players/:playerId/skill-trees/:treeKey',
  summary: 'One skill tree of the player, each node with `unlocked` and `unlockable`',
  description: "A switched-off tree is `not-found`; a hidden one too to a player's token.",
  credential: 'either',
  params: Type.Object({ playerId: Id('a player id, or `me` with a player token'), treeKey: GameKey('the skill tree key') }, { additionalProperties: false }),
  success: { status: 200, description: 'The skill tree', schema: SkillTree },
  refusals: ['forbidden', 'not-found'],
  handler: async (ctx) => ({
    body: await ctx.core.skillTrees.getForPlayer(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.treeKey, ctx.principal.kind !== 'player'),
  }),
});

export const unlockSkillNode = progressionRoute({
  operationId: 'unlockSkillNode',
  path: '/players/:playerId/skill-nodes/:nodeKey/unlock',
  summary: 'Unlock a skill node, paying its prices',
  description:
    'Every parent must be unlocked first (and every unlock the node requires): else `locked` with `details.missing`. ' +
    'The prices (every one for priceRule `all`; the one `payWith` names for `any`) are charged in the same transaction: account currencies from the account, realm currencies from `realmId`’s realm or the current one. ' +
    'A node already unlocked answers `alreadyUnlocked: true` and charges nothing; a node of a switched-off tree is `disabled`. A consumed currency’s price needs its allowance in `allowances` (server key only). ' +
    'In a game of the service’s own whose skill trees the game itself unlocks, a player’s token is `forbidden`.',
  ...engineMove('progression', 'either', 'optional'),
  params: Type.Object({ playerId: Id('a player id, or `me` with a player token'), nodeKey: GameKey('the skill node key') }, { additionalProperties: false }),
  body: Type.Object(
    {
      realmId: Type.Optional(
        Type.Union([Id('a realm id'), Type.Null()], { description: 'the realm whose inventory pays realm currencies; the current realm when absent or null' }),
      ),
      payWith: Type.Optional(GameKey('priceRule `any`: the currency of the price to pay (required there); with `all` it must name one of the prices')),
      allowances: Type.Optional(
        Type.Record(Type.String({ pattern: GAME_KEY_PATTERN }), Type.Integer({ minimum: 0, maximum: MAX_BALANCE }), {
          maxProperties: ALLOWANCES_MAX,
          additionalProperties: false,
          description: 'server key only: per consumed currency key, the most the player may have spent in all after the unlock',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  success: { status: 200, description: 'The unlock and its charges', schema: SkillNodeUnlock },
  refusals: ['forbidden', 'not-found', 'invalid-request', 'locked', 'disabled', 'insufficient-balance', 'allowance-exceeded', 'no-current-realm'],
  handler: async (ctx) =>
    engineAnswer(await ctx.core.skillTrees.unlock(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.nodeKey, ctx.body, ctx.principal.kind, ctx.idempotency)),
});
