/**
 * Stats (spec §4 Stats, §2 Stat): 64-bit counters of a player and of the environment, answered as
 * decimal strings. The domain is apps/core/src/stats/service.ts; docs/progression.md "Stats".
 *
 * Increments take an optional Idempotency-Key: the route's transaction keeps the key's record with the
 * value answered, so a retry answers the first value and adds nothing again. Without one, the service
 * combines the increments of one counter that arrive together into one statement, each answered the
 * value its own step made.
 */
import { PlayerPath, PlayerStatPath, Stat, StatIncrementRequest, StatListQuery, StatPath } from '@hearth/core';
import { BODY_LIMITS, defineRoute } from '../../http/route';
import { PageOf } from '../../http/schema-helpers';
import { answeredForPlayer, targetPlayerId } from '../players/target';

export const listPlayerStats = defineRoute({
  operationId: 'listPlayerStats',
  method: 'GET',
  path: '/players/:playerId/stats',
  summary: "The player's stats by key",
  description: 'With `realmId`, that realm’s counters; without, each key’s counters of every realm added up.',
  tag: 'stats',
  credential: 'either',
  service: 'stats',
  bodyLimit: BODY_LIMITS.gameService,
  success: { status: 200, description: 'A page of stats', schema: PageOf(Stat) },
  ...answeredForPlayer({ params: PlayerPath, query: StatListQuery }, (ctx, playerId) =>
    ctx.core.stats.list(ctx.db, ctx.env, { playerId: playerId }, ctx.query),
  ),
});

export const listStats = defineRoute({
  operationId: 'listStats',
  method: 'GET',
  path: '/stats',
  summary: "The environment's stats by key",
  description: 'With `realmId`, that realm’s counters; without, each key’s counters of every realm added up.',
  tag: 'stats',
  credential: 'either',
  service: 'stats',
  query: StatListQuery,
  bodyLimit: BODY_LIMITS.gameService,
  success: { status: 200, description: 'A page of stats', schema: PageOf(Stat) },
  refusals: ['not-found'],
  handler: async (ctx) => ({ body: await ctx.core.stats.list(ctx.db, ctx.env, null, ctx.query) }),
});

export const incrementPlayerStat = defineRoute({
  operationId: 'incrementPlayerStat',
  method: 'POST',
  path: '/players/:playerId/stats/:key/increment',
  summary: "Add to one of the player's stats",
  description:
    "Adds `by` to one of the player's stats (a 64-bit counter; `by` may be negative, not 0) and answers the value this increment made. Idempotency-Key required: a retry answers the first value and adds nothing again.",
  tag: 'stats',
  credential: 'server',
  service: 'stats',
  bodyLimit: BODY_LIMITS.gameService,
  idempotency: 'optional',
  params: PlayerStatPath,
  body: StatIncrementRequest,
  success: { status: 200, description: 'The stat with its new value', schema: Stat },
  refusals: ['not-found', 'invalid-request'],
  handler: async (ctx) => ({ body: await ctx.core.stats.increment(ctx.db, ctx.env, { playerId: targetPlayerId(ctx) }, ctx.params.key, ctx.body) }),
});

export const incrementStat = defineRoute({
  operationId: 'incrementStat',
  method: 'POST',
  path: '/stats/:key/increment',
  summary: "Add to one of the environment's stats",
  description:
    'Made for many servers adding to one key at once; each answer is the value its own increment made, in one order of all increments of the counter (docs/progression.md "Stats").',
  tag: 'stats',
  credential: 'server',
  service: 'stats',
  bodyLimit: BODY_LIMITS.gameService,
  idempotency: 'optional',
  params: StatPath,
  body: StatIncrementRequest,
  success: { status: 200, description: 'The stat with its new value', schema: Stat },
  refusals: ['not-found', 'invalid-request'],
  handler: async (ctx) => ({ body: await ctx.core.stats.increment(ctx.db, ctx.env, null, ctx.params.key, ctx.body) }),
});
