/**
 * What the unit tests of the realtime server's modules build their cases from: real HearthSocket
 * objects with no connection under them (made as `ws` makes a server's sockets), environments and
 * sessions as the core hands them over.
 */
import { NO_ORIGINS, type EnvironmentContext } from '@hearth/core/tenancy';
import { SERVICES, type ServiceName } from '@hearth/core/contract';
import type { PlatformSession } from '@hearth/core/shapes';
import { AUTHORIZED, HearthSocket, type IdentifiedSocket, identify } from '@hearth/realtime';

export const REALTIME = { maxMessageBytes: 4096, messagesPerSecond: 10, messagesPerMinute: 300, maxSubscriptions: 2 };

export function environmentOf(id: number, overrides: { review?: EnvironmentContext['project']['review']; sessions?: boolean } = {}): EnvironmentContext {
  const services = Object.fromEntries(SERVICES.map((s) => [s, true])) as Record<ServiceName, boolean>;
  services.sessions = overrides.sessions ?? true;
  return {
    id,
    appKey: `env-${id}`,
    namespace: 'unit',
    name: `env-${id}`,
    project: { id, name: `project-${id}`, review: overrides.review ?? 'approved', sessionSeats: 8 },
    services,
    plan: {
      name: 'unit',
      playersPerEnvironment: 1000,
      playerDataBytesPerEnvironment: 1_000_000,
      serverKeysPerEnvironment: 2,
      requestsPerMinutePerEnvironment: 1000,
      requestsPerMinutePerCredential: 100,
      requestsPerDayPerEnvironment: 100_000,
      sessionSeats: 8,
      realtime: REALTIME,
      licenceSeats: 0,
    },
    identityProvider: null,
    store: null,
    wordFilter: [],
    skillNodesUnlockedBy: 'players',
    dashboard: null,
    origins: NO_ORIGINS,
  };
}

/** A server-side socket object with no connection: its fields are what the modules work on. */
export function socketOf(fields: Partial<Pick<HearthSocket, 'playerId' | 'env' | 'state' | 'exp' | 'iat'>> = {}): HearthSocket {
  const ws: HearthSocket = Reflect.construct(HearthSocket, [null, undefined, { autoPong: false }]);
  return Object.assign(ws, fields);
}

/** An authorized socket of the player, in environment 1 unless told: what the index holds. */
export function authorizedSocketOf(playerId: string, env: EnvironmentContext = environmentOf(1)): IdentifiedSocket {
  return identify(socketOf({ state: AUTHORIZED }), playerId, env);
}

export function sessionOf(id: string, playerIds: string[], status: PlatformSession['status'] = 'CONFIGURING'): PlatformSession {
  return {
    id,
    status,
    gameMode: 'duel',
    map: 'harbour',
    conclusion: null,
    seats: 8,
    players: playerIds.map((playerId, i) => ({ playerId, playerName: `P${playerId}`, isHost: i === 0, isReady: false })),
    createdAt: '2026-01-01T00:00:00.000Z',
  };
}
