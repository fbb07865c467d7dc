import type { HearthCore } from '@hearth/core/hearth';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import type { VersionedSession } from '@hearth/core/sessions';

/** What the socket needs of the sessions service. */
export interface SessionReader {
  /** The session with its version, or Refusal not-found when it is not of that environment. */
  get(env: EnvironmentContext, sessionId: string): Promise<VersionedSession>;
  /** The sessions the player holds a seat in, with their versions. */
  listForPlayer(env: EnvironmentContext, playerId: string): Promise<VersionedSession[]>;
}

/**
 * The core's sessions service on the pool: the one place the socket calls core.sessions. The socket
 * reads committed sessions, outside any transaction.
 */
export function coreSessionReader(core: HearthCore): SessionReader {
  return {
    get: (env, sessionId) => core.sessions.getVersioned(core.db, env, sessionId),
    listForPlayer: (env, playerId) => core.sessions.listForPlayer(core.db, env, playerId),
  };
}
