import type { HearthCore } from '@hearth/core/hearth';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import type { PlatformSession } from '@hearth/core/shapes';

/** What the socket needs of the sessions service. */
export interface SessionReader {
  /** The session, or Refusal not-found when it is not of that environment. */
  get(env: EnvironmentContext, sessionId: string): Promise<PlatformSession>;
  /** The sessions the player holds a seat in. */
  listForPlayer(env: EnvironmentContext, playerId: string): Promise<PlatformSession[]>;
}

/**
 * The core's sessions service on the pool: the one place the socket calls core.sessions. The socket
 * reads committed sessions, outside any transaction.
 */
export function coreSessionReader(core: HearthCore): SessionReader {
  return {
    get: (env, sessionId) => core.sessions.get(core.db, env, sessionId),
    listForPlayer: (env, playerId) => core.sessions.listForPlayer(core.db, env, playerId),
  };
}
