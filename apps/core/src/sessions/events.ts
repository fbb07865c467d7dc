/**
 * The contract between the sessions service (in API processes) and the realtime process: after every
 * committed change to a session, the API publishes one SessionEvent on SESSION_EVENTS_CHANNEL through
 * the coordination (Redis pub/sub, or in-process on the embedded default). Realtime processes fan it
 * out to every socket subscribed to that session.
 */
export const SESSION_EVENTS_CHANNEL = 'sessions';

// PlatformSession of spec §2 is the answer shape's type (shapes/sessions.ts).
import type { PlatformSession } from '../shapes';
export type { PlatformSession, SessionStatus } from '../shapes';

export type SeatEndReason = 'left' | 'kicked' | 'deleted';

export interface SessionEvent {
  environmentId: number;
  /** The session after the change; every subscriber gets it as a `session` frame. */
  session: PlatformSession;
  /** Players who lost their seat in this change: their sockets get `session-closed` and stop following it. */
  removed: { playerId: string; reason: SeatEndReason }[];
  /** Players who gained a seat in this change: their sockets start following the session. */
  added: string[];
  /**
   * The session's version after the change: 1 when created, raised by one by every change under the
   * lock it holds on the session's row (a lobby's deletion too). Events go out after commit, so two
   * changes' events can arrive in the other order; the higher version is the newer state.
   */
  version: number;
  /** Milliseconds since 1970 when the API committed the change (for latency figures). */
  committedAt: number;
}

/** A session as read from the database, with its version (what the realtime process compares events to). */
export interface VersionedSession {
  session: PlatformSession;
  version: number;
}
