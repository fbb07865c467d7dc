import { Type, type Static } from '@sinclair/typebox';
import { Id, Nullable, OneOf, Shape, Timestamp, Trimmed } from './common';

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

// What callers send: declared once, for the route's validation and the document, and the service's types.

export const SessionPath = Type.Object({ sessionId: Id('a session id') }, { additionalProperties: false });
export const SeatPath = Type.Object({ sessionId: Id('a session id'), playerId: Id("a seated player's id") }, { additionalProperties: false });

const SeatFields = {
  playerName: Type.Optional(Trimmed({ minLength: 1, maxLength: 40, description: "defaults to the player's display name, or `Player`" })),
  uniqueNetId: Type.Optional(Type.String({ maxLength: 200, description: 'stored with the seat, never answered' })),
};
/** Joining a session: the seat's name and the player's network id. */
export const SeatRequest = Type.Object(SeatFields, { additionalProperties: false });
export type SeatRequest = Static<typeof SeatRequest>;

/** Making a session: its mode and map, and the host's seat. */
export const CreateSessionRequest = Type.Object(
  { gameMode: Trimmed({ minLength: 1, maxLength: 60 }), map: Trimmed({ minLength: 1, maxLength: 60 }), ...SeatFields },
  { additionalProperties: false },
);
export type CreateSessionRequest = Static<typeof CreateSessionRequest>;

export const ReadyRequest = Type.Object({ isReady: Type.Boolean() }, { additionalProperties: false });

/** A game server's report: the status, the conclusion kept with COMPLETE, the error kept with ERROR. */
export const StatusReport = Type.Object(
  {
    status: Type.Union([Type.Literal('AWAITING_PLAYERS'), Type.Literal('PLAYING'), Type.Literal('COMPLETE'), Type.Literal('ERROR')]),
    conclusion: Type.Optional(Trimmed({ minLength: 1, maxLength: 60 })),
    error: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
export type StatusReport = Static<typeof StatusReport>;
/** The statuses a game server reports. */
export type ReportedStatus = StatusReport['status'];
