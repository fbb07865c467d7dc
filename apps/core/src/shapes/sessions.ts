import { Type, type Static } from '@sinclair/typebox';
import { Nullable, OneOf, Shape, Timestamp } from './common';

export const SESSION_STATUSES = ['CONFIGURING', 'PREPARING_INSTANCE', 'AWAITING_PLAYERS', 'PLAYING', 'COMPLETE', 'ERROR'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** A seat of a session; its uniqueNetId is stored and never answered. */
export const SessionSeat = Shape('SessionSeat', {
  playerId: Type.String(),
  playerName: Type.String(),
  isHost: Type.Boolean(),
  isReady: Type.Boolean(),
});

/** PlatformSession (spec §2): exactly these fields. */
export const PlatformSession = Shape('PlatformSession', {
  id: Type.String(),
  status: OneOf(SESSION_STATUSES),
  gameMode: Type.String(),
  map: Type.String(),
  conclusion: Nullable(Type.String()),
  seats: Type.Integer({ minimum: 1, description: "how many players it seats: the project's seats, held to the plan" }),
  players: Type.Array(SessionSeat),
  createdAt: Timestamp,
});
export type PlatformSession = Static<typeof PlatformSession>;
