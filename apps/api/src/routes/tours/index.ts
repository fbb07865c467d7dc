import { Tour, TourPath, TourPlayerPath, PageOf, PageOnlyQuery } from '@hearth/core/shapes';
import type { AnyRoute } from '../../http/route';
import { doneForPlayer, targetPlayerId } from '../players/target';
import { toursRoute } from './area';

export const listTours = toursRoute({
  operationId: 'listTours',
  method: 'GET',
  path: '/players/:playerId/tours',
  summary: "The environment's switched-on tours with the player's completion, ordered by name",
  description: 'Pages through the tours switched on in the environment, each saying whether this player has completed it. A player token reads its own (`me`).',
  credential: 'player',
  params: TourPlayerPath,
  query: PageOnlyQuery,
  success: { status: 200, description: 'A page of tours', schema: PageOf(Tour) },
  refusals: ['forbidden'],
  handler: async (ctx) => ({ body: await ctx.core.tours.list(ctx.db, ctx.env, targetPlayerId(ctx), ctx.query) }),
});

export const completeTour = toursRoute({
  operationId: 'completeTour',
  method: 'POST',
  path: '/players/:playerId/tours/:tourId/complete',
  summary: 'Mark a tour completed',
  description:
    'Any body is ignored. Repeating it answers 204 again and keeps the first completedAt. A tour that does not exist or is switched off is `not-found`.',
  credential: 'player',
  bodyMode: 'ignored',
  success: { status: 204, description: 'Completed' },
  ...doneForPlayer({ params: TourPath }, (ctx, playerId) => ctx.core.tours.complete(ctx.db, ctx.env, playerId, ctx.params.tourId)),
});

/** The tours area's routes: routes/index.ts registers them by this one name. */
export const tourRoutes: AnyRoute[] = [listTours, completeTour];
