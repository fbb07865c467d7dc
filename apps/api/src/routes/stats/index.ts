/**
 * Stats (spec §4 Stats, §2 Stat): 64-bit counters of a player and of the environment, answered as
 * decimal strings. The domain is apps/core/src/stats/service.ts; docs/progression.md "Stats".
 *
 * Increments take an optional Idempotency-Key: the route's transaction keeps the key's record with the
 * value answered, so a retry answers the first value and adds nothing again. Without one, the service
 * combines the increments of one counter that arrive together into one statement, each answered the
 * value its own step made.
 */
import type { ErrorCode } from '@hearth/core';
import { PlayerPath, PlayerStatPath, Stat, StatIncrementRequest, StatListQuery, StatPath, PageOf } from '@hearth/core/shapes';
import { type AnyRoute, BODY_LIMITS } from '../../http/route';
import { answeredForPlayer, targetPlayerId } from '../players/target';
import { statsRoute } from './area';

/** What a player's stats and the environment's answer alike: a page of stats, for either credential. */
const statsRead = {
  method: 'GET',
  credential: 'either',
  success: { status: 200, description: 'A page of stats', schema: PageOf(Stat) },
} as const;

/** What an increment of a player's stat and of the environment's declare alike: a server's, its body and answer, an optional Idempotency-Key. */
const statIncrement = {
  method: 'POST',
  credential: 'server',
  idempotency: 'optional',
  body: StatIncrementRequest,
  success: { status: 200, description: 'The stat with its new value', schema: Stat },
  refusals: ['not-found', 'invalid-request'] as ErrorCode[],
} as const;

export const listPlayerStats = statsRoute({
  operationId: 'listPlayerStats',
  path: '/players/:playerId/stats',
  summary: "The player's stats by key",
  description: 'With `realmId`, that realm’s counters; without, each key’s counters of every realm added up.',
  ...statsRead,
  ...answeredForPlayer({ params: PlayerPath, query: StatListQuery }, (ctx, playerId) => ctx.core.stats.list(ctx.db, ctx.env, { playerId }, ctx.query)),
});

export const listStats = statsRoute({
  operationId: 'listStats',
  path: '/stats',
  summary: "The environment's stats by key",
  description: 'With `realmId`, that realm’s counters; without, each key’s counters of every realm added up.',
  ...statsRead,
  query: StatListQuery,
  refusals: ['not-found'],
  handler: async (ctx) => ({ body: await ctx.core.stats.list(ctx.db, ctx.env, null, ctx.query) }),
});

export const incrementPlayerStat = statsRoute({
  operationId: 'incrementPlayerStat',
  path: '/players/:playerId/stats/:key/increment',
  summary: "Add to one of the player's stats",
  description:
    "Adds `by` to one of the player's stats (a 64-bit counter; `by` may be negative, not 0) and answers the value this increment made. Idempotency-Key required: a retry answers the first value and adds nothing again.",
  ...statIncrement,
  params: PlayerStatPath,
  handler: async (ctx) => ({ body: await ctx.core.stats.increment(ctx.db, ctx.env, { playerId: targetPlayerId(ctx) }, ctx.params.key, ctx.body) }),
});

export const incrementStat = statsRoute({
  operationId: 'incrementStat',
  path: '/stats/:key/increment',
  summary: "Add to one of the environment's stats",
  description:
    'Made for many servers adding to one key at once; each answer is the value its own increment made, in one order of all increments of the counter (docs/progression.md "Stats").',
  ...statIncrement,
  params: StatPath,
  handler: async (ctx) => ({ body: await ctx.core.stats.increment(ctx.db, ctx.env, null, ctx.params.key, ctx.body) }),
});

/** The stats area's routes: routes/index.ts registers them by this one name. */
export const statRoutes: AnyRoute[] = [listPlayerStats, listStats, incrementPlayerStat, incrementStat];
