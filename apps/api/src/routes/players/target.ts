import type { Static, TSchema } from '@sinclair/typebox';
import { type ErrorCode, Refusal, refuse } from '@hearth/core';
import type { ServiceName } from '@hearth/core/contract';
import type { HandlerContext } from '../../http/route';
import type { ApiTag } from '../../http/tags';
import { PageOnlyQuery, PlayerPath } from '@hearth/core/shapes';

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

/** The schemas of a route on the player its path names: its path (with `playerId`), and its query and body if it takes them. */
interface PlayerRouteSchemas<P extends TSchema, Q extends TSchema | undefined, B extends TSchema | undefined> {
  params: P;
  query?: Q;
  body?: B;
}

/** What the handler of such a route sees, either credential (a player names itself `me`). */
type PlayerRouteContext<P extends TSchema, Q extends TSchema | undefined, B extends TSchema | undefined> = HandlerContext<
  Static<P> & { playerId: string },
  Q extends TSchema ? Static<Q> : Record<string, never>,
  B extends TSchema ? Static<B> : unknown,
  'either' | 'player'
>;

/** The refusals targetPlayerId answers: `forbidden` (a player token naming an id), `not-found` (a server key's `me`, or no such player). */
const TARGET_REFUSALS: ErrorCode[] = ['not-found', 'forbidden'];

/**
 * The schemas, refusals and handler of a route that answers what `answer` gives for the player its
 * path names (targetPlayerId), and refuses nothing of its own: spread it into defineRoute.
 */
export function answeredForPlayer<P extends TSchema, Q extends TSchema | undefined = undefined, B extends TSchema | undefined = undefined, T = unknown>(
  schemas: PlayerRouteSchemas<P, Q, B>,
  answer: (ctx: PlayerRouteContext<P, Q, B>, playerId: string) => Promise<T>,
) {
  return {
    ...schemas,
    refusals: TARGET_REFUSALS,
    handler: async (ctx: PlayerRouteContext<P, Q, B>) => ({ body: await answer(ctx, targetPlayerId(ctx)) }),
  };
}

/** As answeredForPlayer for a route that answers no body (204): `act` on the player its path names. */
export function doneForPlayer<P extends TSchema, Q extends TSchema | undefined = undefined, B extends TSchema | undefined = undefined>(
  schemas: PlayerRouteSchemas<P, Q, B>,
  act: (ctx: PlayerRouteContext<P, Q, B>, playerId: string) => Promise<unknown>,
) {
  return {
    ...schemas,
    refusals: TARGET_REFUSALS,
    handler: async (ctx: PlayerRouteContext<P, Q, B>) => {
      await act(ctx, targetPlayerId(ctx));
      return {};
    },
  };
}

/**
 * The refusals and handler of a page of a player's things (beside playerPage, whose path and page
 * query it reads): answeredForPlayer with `list`.
 */
export function listedForPlayer<T>(list: (ctx: PlayerRouteContext<typeof PlayerPath, typeof PageOnlyQuery, undefined>, playerId: string) => Promise<T>) {
  const { refusals, handler } = answeredForPlayer({ params: PlayerPath, query: PageOnlyQuery }, list);
  return { refusals, handler };
}
