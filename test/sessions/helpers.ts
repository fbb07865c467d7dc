/** Shared by the sessions tests: players, lobbies and a listener on the session events channel. */
import { randomUUID } from 'node:crypto';
import { RedisCoordination } from '@hearth/core/coord';
import { SESSION_EVENTS_CHANNEL, type SessionEvent } from '@hearth/core/sessions';
import type { Harness } from '../support/harness';
import { TEST_REDIS_URL } from '../support/env';
import { call, signIn } from '../support/http';
import { eventually } from '../support/wait';

export interface TestPlayer {
  id: string;
  token: string;
  displayName: string | null;
}

let counter = 0;

/** Signs in a new player with the environment's server key. */
export async function newPlayer(h: Harness, keyName = 'alpha-live-key', displayName?: string | null): Promise<TestPlayer> {
  const subject = `p-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;
  const tokens = await signIn(h.base, h.serverKeys[keyName], subject, displayName === null ? undefined : (displayName ?? `Name ${counter}`));
  return { id: tokens.player.id, token: tokens.accessToken, displayName: tokens.player.displayName };
}

/** Makes a session hosted by `host`; answers its body. */
export async function newSession(h: Harness, host: TestPlayer, body: Record<string, unknown> = {}) {
  const reply = await call(h.base, 'POST', '/sessions', { token: host.token, body: { gameMode: 'duel', map: 'harbor', ...body } });
  if (reply.status !== 201) throw new Error(`create failed: ${reply.status} ${reply.text}`);
  return reply.body;
}

export async function join(h: Harness, p: TestPlayer, sessionId: string, body: Record<string, unknown> = {}) {
  return call(h.base, 'POST', `/sessions/${sessionId}/join`, { token: p.token, body });
}

/** A lobby of three: `host` made it, then `a` and `b` joined, in that order. */
export async function lobbyOfThree(h: Harness) {
  const host = await newPlayer(h);
  const a = await newPlayer(h);
  const b = await newPlayer(h);
  const s = await newSession(h, host);
  for (const p of [a, b]) {
    const joined = await join(h, p, s.id);
    if (joined.status !== 200) throw new Error(`join failed: ${joined.status} ${joined.text}`);
  }
  return { host, a, b, s };
}

/** A solo session moved past CONFIGURING to PREPARING_INSTANCE (its host readies). */
export async function preparingSession(h: Harness, host: TestPlayer) {
  const session = await newSession(h, host);
  const ready = await call(h.base, 'POST', `/sessions/${session.id}/ready`, { token: host.token, body: { isReady: true } });
  if (ready.body?.status !== 'PREPARING_INSTANCE') throw new Error(`ready failed: ${ready.status} ${ready.text}`);
  return ready.body;
}

export async function report(h: Harness, sessionId: string, body: Record<string, unknown>, keyName = 'alpha-live-key') {
  return call(h.base, 'POST', `/sessions/${sessionId}/status`, { token: h.serverKeys[keyName], body });
}

/**
 * Listens on the session events channel through Redis under the harness's prefix, as a realtime
 * process would. On each event it also reads the seats from the database at once, so tests can
 * check that an event is published only after its change has committed.
 */
export class EventLog {
  readonly events: SessionEvent[] = [];
  /** The session's seats in the database as seen the moment each event arrived (null: no session row). */
  readonly seatsAtArrival: (string[] | null)[] = [];
  private pending: Promise<unknown>[] = [];
  /** The markers settled() published and waits for, by id: set true when each arrives. */
  private readonly markers = new Map<string, boolean>();
  private coordination?: RedisCoordination;
  private unsubscribe?: () => Promise<void>;

  constructor(private readonly h: Harness) {}

  async start(): Promise<void> {
    this.coordination = new RedisCoordination(TEST_REDIS_URL, { prefix: this.h.redisPrefix });
    this.unsubscribe = await this.coordination.subscribe(SESSION_EVENTS_CHANNEL, (message) => {
      const parsed = JSON.parse(message) as SessionEvent | { marker: string };
      if ('marker' in parsed) {
        this.markers.set(parsed.marker, true);
        return;
      }
      const event = parsed;
      const index = this.events.push(event) - 1;
      this.pending.push(
        Promise.all([
          this.h.db('sessions').where({ id: event.session.id }).first('id'),
          this.h.db('session_players').where({ session_id: event.session.id }).orderBy('seat_order').pluck('player_id'),
        ]).then(([row, seats]) => {
          this.seatsAtArrival[index] = row ? (seats as string[]) : null;
        }),
      );
    });
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.();
    await Promise.all(this.pending);
    await this.coordination?.close();
  }

  for(sessionId: string): SessionEvent[] {
    return this.events.filter((e) => e.session.id === sessionId);
  }

  /** Waits (bounded) until `count` events of the session have arrived; answers them. */
  async waitFor(sessionId: string, count: number, timeoutMs = 3000): Promise<SessionEvent[]> {
    await eventually(async () => this.for(sessionId).length >= count, timeoutMs, 10).catch(() => undefined); // the caller checks what came
    await Promise.all(this.pending);
    return this.for(sessionId);
  }

  /**
   * Every event published before this call has arrived, its seats read: a marker published now
   * arrives after them, since Redis hands a channel's messages on in the order it took them. The API
   * publishes a change's event before it answers the request, so after the answer nothing more of it comes.
   */
  async settled(): Promise<void> {
    const marker = randomUUID();
    this.markers.set(marker, false);
    await this.coordination!.publish(SESSION_EVENTS_CHANNEL, JSON.stringify({ marker }));
    await eventually(async () => this.markers.get(marker) === true, 3000, 5);
    this.markers.delete(marker);
    await Promise.all(this.pending);
  }

  /** Waits for `count` events of a session, and sees that no more come of what was answered so far. */
  async exactly(sessionId: string, count: number): Promise<SessionEvent[]> {
    await this.waitFor(sessionId, count);
    await this.settled();
    const events = this.for(sessionId);
    expect(events.length).toBe(count);
    return events;
  }

  seatsWhenArrived(event: SessionEvent): string[] | null {
    return this.seatsAtArrival[this.events.indexOf(event)];
  }
}

/** Waits (bounded) until `n` backends of this test's database are waiting for a lock. */
export async function waitForLockWaiters(h: Harness, n: number, timeoutMs = 5000): Promise<void> {
  const waiting = async () =>
    (await h.db.raw("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n as number;
  await eventually(async () => (await waiting()) >= n, timeoutMs, 10).catch(async () => {
    throw new Error(`expected ${n} lock waiters, saw ${await waiting()}`);
  });
}
