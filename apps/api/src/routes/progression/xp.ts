/**
 * XP (spec §4 Progression, §2 XP entry): a player's totals per track, raised by a game server. The
 * domain is apps/core/src/progression/xp.ts; docs/progression.md "XP".
 */
import { Type } from '@sinclair/typebox';
import { Amount, GameKey } from '@hearth/core/contract';
import { XpEntry, PageOf, ServerPlayerPath } from '@hearth/core/shapes';
import { BODY_LIMITS } from '../../http/route';
import { progressionRoute } from './area';
import { listedForPlayer, playerPage, targetPlayerId } from '../players/target';

export const listXp = progressionRoute({
  ...playerPage('progression'),
  operationId: 'listXp',
  path: '/players/:playerId/xp',
  summary: "The player's XP per track, ordered by track",
  description: "Pages through the player's XP, one figure per track, by track.",
  success: { status: 200, description: 'A page of XP entries', schema: PageOf(XpEntry) },
  ...listedForPlayer((ctx, playerId) => ctx.core.xp.list(ctx.db, ctx.env, playerId, ctx.query)),
});

export const addXp = progressionRoute({
  operationId: 'addXp',
  method: 'POST',
  path: '/players/:playerId/xp',
  summary: "Add XP to one of the player's tracks",
  description:
    'Answers the track’s new total. Under the same Idempotency-Key a retry answers the first total and adds nothing. A total never passes 2^53-1 (`invalid-request` on `amount`).',
  credential: 'server',
  idempotency: 'required',
  params: ServerPlayerPath,
  body: Type.Object({ amount: Amount(), track: Type.Optional(GameKey('the track (`default` when absent)')) }, { additionalProperties: false }),
  success: { status: 200, description: 'The track and its new total', schema: XpEntry },
  refusals: ['not-found', 'invalid-request'],
  handler: async (ctx) => ({ body: await ctx.core.xp.add(ctx.db, ctx.env, targetPlayerId(ctx), ctx.body.amount, ctx.body.track) }),
});
