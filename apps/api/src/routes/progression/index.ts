import { Type } from '@sinclair/typebox';
import { GameKey } from '@hearth/core/contract';
import { type AnyRoute, BODY_LIMITS } from '../../http/route';
import { progressionRoute } from './area';
import { Id, PageOf, PageQuery, PlayerPath, Timestamp } from '@hearth/core/shapes';
import { answeredForPlayer, playerPage, targetPlayerId } from '../players/target';
import { getPlayerSkillTree, listPlayerSkillTrees, listSkillTreeDefinitions, unlockSkillNode } from './skill-trees';
import { addXp, listXp } from './xp';

/** Unlock (spec §2). */
const Unlock = Type.Object(
  { key: Type.String(), source: Type.String({ description: 'what recorded it (`server` when the recording named none)' }), unlockedAt: Timestamp },
  { $id: 'Unlock', additionalProperties: false },
);

const UnlockPath = Type.Object({ playerId: Id('a player id'), key: GameKey('the unlock key') }, { additionalProperties: false });

const UnlocksQuery = Type.Object(
  {
    prefix: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$', description: 'only keys starting with this (matched literally)' }),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const listUnlocks = progressionRoute({
  ...playerPage('progression'),
  operationId: 'listUnlocks',
  path: '/players/:playerId/unlocks',
  summary: "The player's unlocks, ordered by key",
  description: "Pages through the player's unlocks by key, optionally those whose key starts with `prefix`, each with what recorded it and when.",
  success: { status: 200, description: 'A page of unlocks', schema: PageOf(Unlock) },
  ...answeredForPlayer({ params: PlayerPath, query: UnlocksQuery }, (ctx, playerId) => ctx.core.unlocks.list(ctx.db, ctx.env, playerId, ctx.query)),
});

export const recordUnlock = progressionRoute({
  operationId: 'recordUnlock',
  method: 'PUT',
  path: '/players/:playerId/unlocks/:key',
  summary: 'Record an unlock for the player',
  description: '201 when this call recorded it; 200 with the first record (its source and time) when the player already held it. The first record stands.',
  credential: 'server',
  params: UnlockPath,
  body: Type.Object({ source: Type.Optional(GameKey('what unlocked it (a flow name); `server` when absent')) }, { additionalProperties: false }),
  success: { status: 201, description: 'Recorded by this call', schema: Unlock, also: [{ status: 200, description: 'Already recorded: the first record' }] },
  links: [{ to: ['deleteUnlock'], parameters: { playerId: '$request.path.playerId', key: '$request.path.key' } }],
  refusals: ['not-found'],
  handler: async (ctx) => {
    const { unlock, created } = await ctx.core.unlocks.record(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.key, ctx.body.source);
    return { status: created ? 201 : 200, body: unlock };
  },
});

export const deleteUnlock = progressionRoute({
  operationId: 'deleteUnlock',
  method: 'DELETE',
  path: '/players/:playerId/unlocks/:key',
  summary: 'Take an unlock from the player',
  description: 'Done whether or not the player held it.',
  credential: 'server',
  params: UnlockPath,
  success: { status: 204, description: 'The player does not hold it' },
  refusals: ['not-found'],
  handler: async (ctx) => {
    await ctx.core.unlocks.remove(ctx.db, ctx.env, targetPlayerId(ctx), ctx.params.key);
    return {};
  },
});

/** The progression area's routes: routes/index.ts registers them by this one name. */
export const progressionRoutes: AnyRoute[] = [
  listSkillTreeDefinitions,
  listUnlocks,
  recordUnlock,
  deleteUnlock,
  listXp,
  addXp,
  listPlayerSkillTrees,
  getPlayerSkillTree,
  unlockSkillNode,
];
