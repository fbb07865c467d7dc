import { PlatformPlayer, PlayerPath, RenamePlayerRequest } from '@hearth/core/shapes';
import type { AnyRoute } from '../../http/route';
import { answeredForPlayer, doneForPlayer, targetPlayerId } from './target';
import { playersRoute } from './area';

export const getPlayer = playersRoute({
  operationId: 'getPlayer',
  method: 'GET',
  path: '/players/:playerId',
  summary: 'Read a player',
  description: 'With `me` and a player token this is also how a server checks a token a client hands it: 200 good, 401 not valid.',
  credential: 'either',
  success: { status: 200, description: 'The player', schema: PlatformPlayer },
  ...answeredForPlayer({ params: PlayerPath }, (ctx, playerId) => ctx.core.players.get(ctx.db, ctx.env, playerId)),
});

export const renamePlayer = playersRoute({
  operationId: 'renamePlayer',
  method: 'PATCH',
  path: '/players/:playerId',
  summary: "Change a player's display name",
  description: 'The name passes a word filter that stars out disallowed words; the answer shows the name as stored.',
  credential: 'either',
  success: { status: 200, description: 'The player as stored', schema: PlatformPlayer },
  ...answeredForPlayer({ params: PlayerPath, body: RenamePlayerRequest }, (ctx, playerId) => ctx.core.players.rename(ctx.db, ctx.env, playerId, ctx.body)),
});

export const deletePlayer = playersRoute({
  operationId: 'deletePlayer',
  method: 'DELETE',
  path: '/players/:playerId',
  summary: 'Delete a player and everything they hold',
  description:
    "Deletes the player's name, identities and (as later areas add them) saves, tours, seats, game state and holdings; every token they hold stops working.",
  credential: 'server',
  params: PlayerPath,
  success: { status: 204, description: 'Deleted' },
  refusals: ['not-found'],
  handler: async (ctx) => {
    await ctx.core.deletePlayer(ctx.db, ctx.env, targetPlayerId(ctx));
    return {};
  },
});

export const signOutPlayer = playersRoute({
  operationId: 'signOutPlayer',
  method: 'POST',
  path: '/players/:playerId/sign-out',
  summary: 'Sign a player out everywhere',
  description: 'Every access and refresh token of the player stops working within moments; nothing the player owns is touched.',
  credential: 'either',
  success: { status: 204, description: 'Signed out everywhere' },
  ...doneForPlayer({ params: PlayerPath }, (ctx, playerId) => ctx.core.players.signOutEverywhere(ctx.db, ctx.env, playerId)),
});

/** The players area's routes: routes/index.ts registers them by this one name. */
export const playerRoutes: AnyRoute[] = [getPlayer, renamePlayer, deletePlayer, signOutPlayer];
