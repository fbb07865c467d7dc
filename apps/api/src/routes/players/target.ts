import type { Static } from '@sinclair/typebox';
import { type ErrorCode, Refusal, refuse } from '@hearth/core';
import type { ServiceName } from '@hearth/core/contract';
import type { HandlerContext } from '../../http/route';
import type { ApiTag } from '../../http/tags';
import { PageOnlyQuery, PlayerPath } from '../../http/schema-helpers';

/**
 * The player a `/players/:playerId` route acts on (spec §4 path rule): with a player token the path
 * must say `me` (naming any id, even their own, is forbidden); with a server key it names a player
 * of the key's environment, and `me` names nobody (404).
 */
export function targetPlayerId(ctx: Pick<HandlerContext<{ playerId: string }, unknown, unknown, 'either' | 'server'>, 'params' | 'principal'>): string {
  const { playerId } = ctx.params;
  const { principal } = ctx;
  if (principal.kind === 'player') {
    if (playerId !== 'me') throw refuse.forbidden('With a player token, name the player as `me`.');
    return principal.playerId;
  }
  if (playerId === 'me') throw new Refusal('not-found', 'A server key has no `me`: name the player by id, as /players/{playerId}.');
  return playerId;
}

/**
 * What every page of a player's things declares alike (GET /players/:playerId/...): either credential
 * (a player names itself `me`, targetPlayerId), the player path and the page query. Spread it into
 * defineRoute and give the rest; a route whose path or query takes more says its own after it.
 */
export function playerPage(service: ServiceName & ApiTag): ReturnType<typeof pageOf>;
export function playerPage(service: ServiceName, tag: ApiTag): ReturnType<typeof pageOf>;
export function playerPage(service: ServiceName, tag?: ApiTag) {
  return pageOf(service, tag ?? (service as ServiceName & ApiTag));
}

function pageOf(service: ServiceName, tag: ApiTag) {
  return { method: 'GET' as const, tag, credential: 'either' as const, service, params: PlayerPath, query: PageOnlyQuery };
}

/** What a handler of a player's page sees: the player path and the page query, either credential. */
type PlayerPageContext = HandlerContext<Static<typeof PlayerPath>, Static<typeof PageOnlyQuery>, unknown, 'either'>;

/**
 * The handler of a page of a player's things (beside playerPage): `list` of the player the path names
 * (targetPlayerId), and so the refusals targetPlayerId answers: `forbidden` (a player token naming an
 * id) and `not-found` (a server key's `me`, or no such player).
 */
export function listedForPlayer<T>(list: (ctx: PlayerPageContext, playerId: string) => Promise<T>) {
  return {
    refusals: ['not-found', 'forbidden'] as ErrorCode[],
    handler: async (ctx: PlayerPageContext) => ({ body: await list(ctx, targetPlayerId(ctx)) }),
  };
}
