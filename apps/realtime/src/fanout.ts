/**
 * Which sessions a socket follows and what it hears of them (docs/realtime.md "Which sessions a socket
 * follows", "Fan-out"): `subscribe` and `unsubscribe`, and every SessionEvent the API processes publish,
 * handed to the followers of its session with the frame serialised once.
 */
import { Refusal, type Logger } from '@hearth/core';
import { effectiveLimits, type SessionEvent } from '@hearth/core/sessions';
import type { PlatformSession } from '@hearth/core/shapes';
import { encodeFrame, errorFrame, type FrameId } from './protocol';
import type { RealtimeMetrics } from './metrics';
import type { RecentEvents } from './recent-events';
import type { SessionReader } from './session-reader';
import type { SocketIndex } from './socket-index';
import { AUTHORIZED, type IdentifiedSocket, type SocketHost } from './socket';

export interface FanoutOptions {
  sessions: SessionReader;
  index: SocketIndex;
  recent: RecentEvents;
  host: SocketHost;
  metrics: RealtimeMetrics;
  log: Logger;
}

/** A message of the sessions channel, or null when it is not a session event. */
export function sessionEventOf(message: string): SessionEvent | null {
  try {
    const event = JSON.parse(message) as SessionEvent;
    return typeof event?.session?.id === 'string' && Array.isArray(event.session.players) ? event : null;
  } catch {
    return null;
  }
}

export class Fanout {
  constructor(private readonly options: FanoutOptions) {}

  /** One message of SESSION_EVENTS_CHANNEL. */
  onSessionEvent(message: string): void {
    const { index, host, metrics, recent, log } = this.options;
    const event = sessionEventOf(message);
    if (!event) {
      log.warn({ message: message.slice(0, 200) }, 'unreadable session event');
      return;
    }
    metrics.events.inc();
    recent.record(event);
    const { session, environmentId } = event;
    const sessionId = session.id;

    for (const { playerId, reason } of event.removed ?? []) {
      let closed: string | undefined;
      for (const ws of index.socketsOf(playerId)) {
        if (ws.env.id !== environmentId || !index.unfollow(ws, sessionId)) continue;
        closed ??= encodeFrame('session-closed', { sessionId, reason });
        host.send(ws, closed, 'session-closed');
      }
    }
    for (const playerId of event.added ?? []) {
      for (const ws of index.socketsOf(playerId)) if (ws.env.id === environmentId) index.follow(ws, sessionId, true);
    }

    const followers = index.followersOf(sessionId);
    if (followers) {
      // Serialised once for every follower; the same bytes go to each socket.
      const frame = Buffer.from(encodeFrame('session', { session }));
      for (const ws of followers) host.send(ws, frame, 'session');
      // The last-player rule: a lobby in CONFIGURING that nobody holds a seat in is closed (deleted).
      if (session.players.length === 0 && session.status === 'CONFIGURING') {
        const closed = encodeFrame('session-closed', { sessionId, reason: 'deleted' });
        for (const ws of [...followers]) {
          index.unfollow(ws, sessionId);
          host.send(ws, closed, 'session-closed');
        }
      }
    }
    if (typeof event.committedAt === 'number') metrics.eventLag.observe(Math.max(0, Date.now() - event.committedAt) / 1000);
  }

  /** Follows a session of the socket's environment: `subscribed` with the session as it is, or an error. */
  async subscribe(ws: IdentifiedSocket, sessionId: string, id?: FrameId): Promise<void> {
    const { sessions, index, recent, host } = this.options;
    const env = ws.env;
    const start = recent.begin();
    try {
      let session: PlatformSession;
      try {
        session = await sessions.get(env, sessionId);
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        // The field core names (`sessionId`) is in the frame's payload, as the socket names its fields.
        const details = typeof err.details?.field === 'string' ? { ...err.details, field: `payload.${err.details.field}` } : err.details;
        if (ws.state === AUTHORIZED) host.send(ws, errorFrame(err.code, err.message, details, id), 'error');
        return;
      }
      if (ws.state !== AUTHORIZED) return;
      // Events that arrived during the read are at least as new as it.
      session = recent.newest(start, env.id, sessionId)?.session ?? session;
      const seated = session.players.some((p) => p.playerId === ws.playerId);
      if (!seated && !index.follows(ws, sessionId)) {
        // The plan as of the socket's latest authorize (which may have landed during the read).
        const limit = effectiveLimits(ws.env.plan.realtime).maxSubscriptions;
        if (index.watchedCount(ws) >= limit) {
          const message = `A socket may follow ${limit} sessions it holds no seat in; unsubscribe from one first.`;
          host.send(ws, errorFrame('quota-exceeded', message, { quota: 'subscriptions', limit }, id), 'error');
          return;
        }
      }
      index.follow(ws, sessionId, seated);
      host.send(ws, encodeFrame('subscribed', { sessionId, session }, id), 'subscribed');
    } catch (err) {
      host.fault(ws, err, 'subscribe failed');
    } finally {
      recent.end(start);
    }
  }

  /**
   * After this process's Redis subscriber came back (its SUBSCRIBE in force again): the session events
   * published while it was away reached nobody here, so every followed session is read again and its
   * state sent to its followers as a `session` frame (a whole state: a repeat is harmless). A session
   * gone meanwhile is closed for its followers (`deleted`); a seat that ended meanwhile stops being
   * followed once the follower has been sent the state without it. Events that arrive during a read
   * win over it (RecentEvents), as in `subscribe`.
   */
  async catchUp(): Promise<number> {
    const { sessions, index, recent, host, log } = this.options;
    const followed = index.followedSessions();
    let sent = 0;
    for (const sessionId of followed) {
      const followers = index.followersOf(sessionId);
      const env = followers?.values().next().value?.env;
      if (!followers || !env) continue;
      const start = recent.begin();
      try {
        let session: PlatformSession | undefined;
        try {
          session = await sessions.get(env, sessionId);
        } catch (err) {
          if (!(err instanceof Refusal) || err.code !== 'not-found') throw err;
        }
        const newer = recent.newest(start, env.id, sessionId);
        if (newer) continue; // its frame went out when it arrived
        const now = [...(index.followersOf(sessionId) ?? [])].filter((ws) => ws.env?.id === env.id);
        if (!session) {
          const closed = encodeFrame('session-closed', { sessionId, reason: 'deleted' });
          for (const ws of now) {
            index.unfollow(ws, sessionId);
            host.send(ws, closed, 'session-closed');
          }
          continue;
        }
        const frame = Buffer.from(encodeFrame('session', { session }));
        for (const ws of now) {
          host.send(ws, frame, 'session');
          sent++;
          if (ws.seated?.includes(sessionId) && !session.players.some((p) => p.playerId === ws.playerId)) index.unfollow(ws, sessionId);
        }
      } catch (err) {
        log.warn({ err: (err as Error).message, sessionId }, 'session not caught up after redis came back');
      } finally {
        recent.end(start);
      }
    }
    return sent;
  }

  /** Stops following a session (seat or subscription); not answered unless the socket did not follow it. */
  unsubscribe(ws: IdentifiedSocket, sessionId: string, id?: FrameId): void {
    if (!this.options.index.unfollow(ws, sessionId)) {
      this.options.host.send(ws, errorFrame('not-found', 'This socket does not follow that session.', undefined, id), 'error');
    }
  }
}
