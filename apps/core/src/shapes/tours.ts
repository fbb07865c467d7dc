/**
 * Tours (spec §2 Tour, §4 Tours): the answer and the paths of a player's tours, declared once for the
 * route's validation, the document and the tours service.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Id, Shape, Timestamp } from './common';

/** Tour (spec §2). */
export const Tour = Shape('Tour', { id: Type.String(), name: Type.String(), completed: Type.Boolean(), completedAt: Type.Union([Timestamp, Type.Null()]) });
export type Tour = Static<typeof Tour>;

/** GET /players/:playerId/tours: a player's own, so the path says `me`. */
export const TourPlayerPath = Type.Object({ playerId: Id('`me`') }, { additionalProperties: false });

/** POST /players/:playerId/tours/:tourId/complete. */
export const TourPath = Type.Object(
  { playerId: Id('`me`'), tourId: Type.String({ minLength: 1, maxLength: 120, description: 'a tour id' }) },
  { additionalProperties: false },
);
