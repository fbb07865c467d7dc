/**
 * Which sessions a socket follows and what it hears of them (docs/realtime.md "Which sessions a socket
 * follows", "Fan-out"): `subscribe` and `unsubscribe`, and every SessionEvent the API processes publish,
 * handed to the followers of its session with the frame serialised once.
 */
import { Refusal, type Logger } from '@hearth/core';
import { effectiveLimits, type SessionEvent, type VersionedSession } from '@hearth/core/sessions';
import type { PlatformSession } from '@hearth/core/shapes';
import { encodeFrame, errorFrame, type FrameId } from './protocol';
import type { RealtimeMetrics } from './metrics';
import type { SessionReader } from './session-reader';
import type { SessionStates } from './session-states';
import type { SocketIndex } from './socket-index';
import { AUTHORIZED, type IdentifiedSocket, type SocketHost } from './socket';

export interface FanoutOptions {
  sessions: SessionReader;
  index: SocketIndex;
  states: SessionStates;
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

  /**
   * One message of SESSION_EVENTS_CHANNEL. An event older than a state this process already has (it
   * arrived late: SessionStates) sends no `session` frame, and its seats are applied as the newest
   * state has them: a player it removed who is seated again keeps following, a player it added who
   * is no longer seated does not start, and one who starts is sent the newest state.
   */
  onSessionEvent(message: string): void {
    const { index, host, metrics, states, log } = this.options;
    const event = sessionEventOf(message);
    if (!event) {
      log.warn({ message: message.slice(0, 200) }, 'unreadable session event');
      return;
    }
    metrics.events.inc();
    const { session, environmentId } = event;
    const sessionId = session.id;
    // An event without a version (an API process of the release before, during an upgrade) is taken as new.
    const newer = typeof event.version !== 'number' || states.toFollowers(environmentId, session, event.version);
    const newest = newer ? session : (states.newest(environmentId, sessionId) ?? session);
    if (!newer) metrics.lateEvents.inc();
    const seated = (playerId: string) => newest.players.some((p) => p.playerId === playerId);

    for (const { playerId, reason } of event.removed ?? []) {
      if (seated(playerId)) continue;
      let closed: string | undefined;
      for (const ws of index.socketsOf(playerId)) {
        if (ws.env.id !== environmentId || !index.unfollow(ws, sessionId)) continue;
        closed ??= encodeFrame('session-closed', { sessionId, reason });
        host.send(ws, closed, 'session-closed');
      }
    }
    let newestFrame: Buffer | undefined;
    for (const playerId of event.added ?? []) {
      if (!seated(playerId)) continue;
      for (const ws of index.socketsOf(playerId)) {
        if (ws.env.id !== environmentId) continue;
        // A late event's followers were sent the newest state before this socket followed: it gets it now.
        if (!newer && !index.follows(ws, sessionId)) {
          newestFrame ??= Buffer.from(encodeFrame('session', { session: newest }));
          host.send(ws, newestFrame, 'session');
        }
        index.follow(ws, sessionId, true);
      }
    }

    const followers = newer ? index.followersOf(sessionId) : undefined;
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
    const { sessions, index, states, host } = this.options;
    const env = ws.env;
    const start = states.begin();
    try {
      let session: PlatformSession;
      try {
        const read = await sessions.get(env, sessionId);
        // The newer of the read and the events that arrived during it.
        session = states.read(env.id, read.session, read.version);
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        // The field core names (`sessionId`) is in the frame's payload, as the socket names its fields.
        const details = typeof err.details?.field === 'string' ? { ...err.details, field: `payload.${err.details.field}` } : err.details;
        if (ws.state === AUTHORIZED) host.send(ws, errorFrame(err.code, err.message, details, id), 'error');
        return;
      }
      if (ws.state !== AUTHORIZED) return;
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
      states.end(start);
    }
  }

  /**
   * After this process's Redis subscriber came back (its SUBSCRIBE in force again): the session events
   * published while it was away reached nobody here, so every followed session is read again and its
   * state sent to its followers as a `session` frame (a whole state: a repeat is harmless). A session
   * gone meanwhile is closed for its followers (`deleted`); a seat that ended meanwhile stops being
   * followed once the follower has been sent the state without it. A read is sent only when it is
   * newer than what the followers were sent and no older than any state known (SessionStates): an
   * event newer than the read has been sent, or is on its way.
   */
  async catchUp(): Promise<number> {
    const { sessions, index, states, host, log } = this.options;
    const followed = index.followedSessions();
    let sent = 0;
    for (const sessionId of followed) {
      const followers = index.followersOf(sessionId);
      const env = followers?.values().next().value?.env;
      if (!followers || !env) continue;
      const start = states.begin();
      try {
        let read: VersionedSession | undefined;
        try {
          read = await sessions.get(env, sessionId);
        } catch (err) {
          if (!(err instanceof Refusal) || err.code !== 'not-found') throw err;
        }
        if (read && !states.toFollowers(env.id, read.session, read.version)) continue;
        const now = [...(index.followersOf(sessionId) ?? [])].filter((ws) => ws.env?.id === env.id);
        if (!read) {
          const closed = encodeFrame('session-closed', { sessionId, reason: 'deleted' });
          for (const ws of now) {
            index.unfollow(ws, sessionId);
            host.send(ws, closed, 'session-closed');
          }
          continue;
        }
        const { session } = read;
        const frame = Buffer.from(encodeFrame('session', { session }));
        for (const ws of now) {
          host.send(ws, frame, 'session');
          sent++;
          if (ws.seated?.includes(sessionId) && !session.players.some((p) => p.playerId === ws.playerId)) index.unfollow(ws, sessionId);
        }
      } catch (err) {
        log.warn({ err: (err as Error).message, sessionId }, 'session not caught up after redis came back');
      } finally {
        states.end(start);
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
