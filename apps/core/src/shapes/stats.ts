/**
 * Stats (spec §4 Stats): what a read of the counters and an increment send, declared once for the
 * route's validation, the document and the stats service. The answer, Stat, is in ./progression.
 */
import { Type, type Static } from '@sinclair/typebox';
import { GameKey } from '../contract/game-keys';
import { Id, PageQuery } from './common';

/** GET /players/:playerId/stats and GET /stats: one realm's counters, or every realm's added up. */
export const StatListQuery = Type.Object(
  { realmId: Type.Optional(Id('only this realm’s counters; across every realm when absent')), ...PageQuery },
  { additionalProperties: false },
);
export type StatListQuery = Static<typeof StatListQuery>;

const StatKey = GameKey('the stat key (any key: a stat needs no definition)');

/** POST /players/:playerId/stats/:key/increment. */
export const PlayerStatPath = Type.Object({ playerId: Id('a player id'), key: StatKey }, { additionalProperties: false });
/** POST /stats/:key/increment. */
export const StatPath = Type.Object({ key: StatKey }, { additionalProperties: false });

/** An increment: how much (1 when absent) and of which realm's counter. */
export const StatIncrementRequest = Type.Object(
  {
    by: Type.Optional(
      Type.Integer({
        minimum: -Number.MAX_SAFE_INTEGER,
        maximum: Number.MAX_SAFE_INTEGER,
        // 0 is refused by the stats service (invalid-request on body.by): a `not` here would trip client generators.
        description: 'a whole number other than 0, either sign (default 1); 0 is refused; a move past the 64-bit range is refused',
      }),
    ),
    realmId: Type.Optional(Type.Union([Id('a realm id'), Type.Null()], { description: 'the realm’s counter; null or absent: the counter of no realm' })),
  },
  { additionalProperties: false },
);
export type StatIncrementRequest = Static<typeof StatIncrementRequest>;
