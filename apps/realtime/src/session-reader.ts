import type { EnvironmentContext, HearthCore, PlatformSession } from '@hearth/core';

/** What the socket needs of the sessions service. */
export interface SessionReader {
  /** The session, or ApiError not-found when it is not of that environment. */
  get(env: EnvironmentContext, sessionId: string): Promise<PlatformSession>;
  /** The sessions the player holds a seat in. */
  listForPlayer(env: EnvironmentContext, playerId: string): Promise<PlatformSession[]>;
}

/** The sessions service of the core, read on its database: the one place the socket calls core.sessions. */
export function coreSessionReader(core: HearthCore): SessionReader {
  return {
    get: (env, sessionId) => core.sessions.get(env, sessionId),
    listForPlayer: (env, playerId) => core.sessions.listForPlayer(env, playerId),
  };
}
