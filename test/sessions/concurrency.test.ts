/**
 * Sessions under concurrent requests (real HTTP, real PostgreSQL): the last seat goes to one player,
 * status reports are compare-and-set, seat changes leave consistent rows, and player deletion racing
 * seat changes neither deadlocks nor leaves a seat behind. Some races are forced: the test holds the
 * session row's lock until both requests are waiting on it, then lets go.
 */
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, type Reply } from '../support/http';
import { environment, project, serverKey, standardManifests } from '../support/manifests';
import { eventually } from '../support/wait';
import { EventLog, type TestPlayer, join, newPlayer, newSession, preparingSession, report, waitForLockWaiters } from './helpers';
import type { SessionEvent } from '@hearth/core/sessions';

let h: Harness;
let log: EventLog;

beforeAll(async () => {
  h = await startHarness({
    manifests: [...standardManifests(), project('duo', { sessionSeats: 2 }), environment('duo-live', 'duo'), serverKey('duo-live-key', 'duo-live')],
  });
  log = new EventLog(h);
  await log.start();
});

afterAll(async () => {
  await log.stop();
  await h.close();
});

const ROUNDS = 20;

/** Runs `race` while this test holds the session row's lock, releasing it once `waiters` requests wait on it. */
async function withSessionLocked<T>(sessionId: string, waiters: number, race: () => Promise<T>): Promise<T> {
  const trx = await h.db.transaction();
  try {
    await trx.raw('SELECT id FROM sessions WHERE id = ? FOR UPDATE', [sessionId]);
    const pending = race();
    await waitForLockWaiters(h, waiters);
    await trx.commit();
    return await pending;
  } catch (err) {
    if (!trx.isCompleted()) await trx.rollback();
    throw err;
  }
}

/** Checks what must hold of every session's rows whatever the interleaving. */
async function expectConsistent(sessionId: string, opts: { hostStays?: boolean } = {}) {
  const session = await h.db('sessions').where({ id: sessionId }).first();
  const seats = await h.db('session_players').where({ session_id: sessionId });
  if (!session) {
    expect(seats).toEqual([]);
    return { session, seats };
  }
  expect(seats.length).toBeLessThanOrEqual(session.seats);
  expect(new Set(seats.map((s) => s.player_id)).size).toBe(seats.length);
  const hosts = seats.filter((s) => s.is_host).length;
  expect(hosts).toBeLessThanOrEqual(1);
  if (opts.hostStays) expect(hosts).toBe(1);
  // The newest event of the session is the state in the database, and every change had an event with
  // a version of its own: 1, 2, 3… up to the row's. Newest is the highest version, not the last to
  // arrive: events are published after commit and may arrive in another order. The last may land just
  // after the replies: waited for (bounded), then held.
  const version = Number(session.version);
  const seated = seats.map((s) => s.player_id).sort();
  const matches = (e = newestEvent(sessionId)) =>
    !!e &&
    e.version === version &&
    e.session.status === session.status &&
    JSON.stringify(e.session.players.map((p) => p.playerId).sort()) === JSON.stringify(seated);
  await eventually(async () => matches(), 3000).catch(() => undefined);
  await log.settled();
  const newest = newestEvent(sessionId)!;
  expect(newest.session.players.map((p) => p.playerId).sort()).toEqual(seated);
  expect(newest.session.status).toBe(session.status);
  expect(newest.version).toBe(version);
  expect(versionsOf(sessionId)).toEqual(Array.from({ length: version }, (_, i) => i + 1));
  return { session, seats };
}

/** The session's event with the highest version. */
function newestEvent(sessionId: string): SessionEvent | undefined {
  return log.for(sessionId).reduce<SessionEvent | undefined>((newest, e) => (!newest || e.version > newest.version ? e : newest), undefined);
}

/** The versions of the session's events, in order. */
function versionsOf(sessionId: string): number[] {
  return log
    .for(sessionId)
    .map((e) => e.version)
    .sort((x, y) => x - y);
}

function statuses(replies: Reply[]): number[] {
  return replies.map((r) => r.status).sort();
}

test(`two players racing for the last seat: one 200, one 409 with details.limit (${ROUNDS} rounds)`, async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const host = await newPlayer(h, 'duo-live-key');
    const [a, b] = await Promise.all([newPlayer(h, 'duo-live-key'), newPlayer(h, 'duo-live-key')]);
    const s = await newSession(h, host);
    const replies = await Promise.all([join(h, a, s.id), join(h, b, s.id)]);
    expect(statuses(replies)).toEqual([200, 409]);
    const loser = replies.find((r) => r.status === 409)!;
    expect(expectError(loser, 409, 'conflict').details).toEqual({ limit: 2 });
    const winner = replies.find((r) => r.status === 200)!;
    expect(winner.body.players).toHaveLength(2);
    await log.waitFor(s.id, 2);
    const { seats } = await expectConsistent(s.id, { hostStays: true });
    expect(seats).toHaveLength(2);
  }
});

test('the last-seat race forced: both joins wait on the lock, the second finds the lobby full', async () => {
  for (let round = 0; round < 5; round++) {
    const host = await newPlayer(h, 'duo-live-key');
    const [a, b] = await Promise.all([newPlayer(h, 'duo-live-key'), newPlayer(h, 'duo-live-key')]);
    const s = await newSession(h, host);
    const replies = await withSessionLocked(s.id, 2, () => Promise.all([join(h, a, s.id), join(h, b, s.id)]));
    expect(statuses(replies)).toEqual([200, 409]);
    expect(replies.find((r) => r.status === 409)!.body.details).toEqual({ limit: 2 });
    expect(await h.db('session_players').where({ session_id: s.id }).count({ n: '*' })).toEqual([{ n: '2' }]);
  }
});

test('the same player joining twice at once holds one seat', async () => {
  for (let round = 0; round < 5; round++) {
    const host = await newPlayer(h);
    const a = await newPlayer(h);
    const s = await newSession(h, host);
    const replies = await Promise.all([join(h, a, s.id), join(h, a, s.id), join(h, a, s.id)]);
    expect(statuses(replies)).toEqual([200, 409, 409]);
    for (const r of replies.filter((x) => x.status === 409)) expect(expectError(r, 409, 'conflict').details).toBeUndefined();
    expect(await h.db('session_players').where({ session_id: s.id, player_id: a.id }).count({ n: '*' })).toEqual([{ n: '1' }]);
  }
});

describe('status reports are compare-and-set', () => {
  test('forced: AWAITING_PLAYERS and PLAYING both read PREPARING_INSTANCE; the one that commits second is conflict', async () => {
    for (let round = 0; round < 5; round++) {
      const s = await preparingSession(h, await newPlayer(h));
      const replies = await withSessionLocked(s.id, 2, () =>
        Promise.all([report(h, s.id, { status: 'AWAITING_PLAYERS' }), report(h, s.id, { status: 'PLAYING' })]),
      );
      expect(statuses(replies)).toEqual([200, 409]);
      expectError(
        replies.find((r) => r.status === 409)!,
        409,
        'conflict',
      );
      const winner = replies.find((r) => r.status === 200)!;
      expect((await h.db('sessions').where({ id: s.id }).first('status')).status).toBe(winner.body.status);
      const events = await log.waitFor(s.id, 3);
      expect(events.map((e) => e.session.status)).toEqual(['CONFIGURING', 'PREPARING_INSTANCE', winner.body.status]);
    }
  });

  test(`unforced (${ROUNDS} rounds): never two winners from one status, and the stored status is the last winner's`, async () => {
    let conflicts = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const s = await preparingSession(h, await newPlayer(h));
      const [awaiting, playing] = await Promise.all([report(h, s.id, { status: 'AWAITING_PLAYERS' }), report(h, s.id, { status: 'PLAYING' })]);
      const stored = (await h.db('sessions').where({ id: s.id }).first('status')).status;
      if (awaiting.status === 200 && playing.status === 200) {
        // Only as a sequence: AWAITING_PLAYERS then PLAYING from it.
        expect(stored).toBe('PLAYING');
        expect((await log.waitFor(s.id, 4)).slice(2).map((e) => e.session.status)).toEqual(['AWAITING_PLAYERS', 'PLAYING']);
      } else {
        conflicts++;
        expect(statuses([awaiting, playing])).toEqual([200, 409]);
        const winner = awaiting.status === 200 ? awaiting : playing;
        expectError(winner === awaiting ? playing : awaiting, 409, 'conflict');
        expect(stored).toBe(winner.body.status);
        await log.waitFor(s.id, 3);
        expect(log.for(s.id).map((e) => e.session.status)).toEqual(['CONFIGURING', 'PREPARING_INSTANCE', stored]);
      }
    }
    // Concurrent reports from one status do collide (the forced test proves which one loses).
    expect(conflicts).toBeGreaterThan(0);
  });

  test(`unforced (${ROUNDS} rounds): COMPLETE and ERROR from PLAYING, exactly one wins`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const s = await preparingSession(h, await newPlayer(h));
      await report(h, s.id, { status: 'PLAYING' });
      const replies = await Promise.all([
        report(h, s.id, { status: 'COMPLETE', conclusion: 'won' }),
        report(h, s.id, { status: 'ERROR', error: 'crashed' }),
        report(h, s.id, { status: 'COMPLETE', conclusion: 'lost' }),
      ]);
      expect(statuses(replies)).toEqual([200, 409, 409]);
      const winner = replies.find((r) => r.status === 200)!;
      const row = await h.db('sessions').where({ id: s.id }).first('status', 'conclusion', 'error');
      expect(row.status).toBe(winner.body.status);
      expect(row.conclusion).toBe(winner.body.conclusion);
      expect(row.error).toBe(winner.body.status === 'ERROR' ? 'crashed' : null);
    }
  });
});

test(`a storm of joins, readies, leaves, kicks and promotes leaves every lobby consistent (${ROUNDS} rounds)`, async () => {
  const pool = await Promise.all(Array.from({ length: 12 }, () => newPlayer(h)));
  for (let round = 0; round < ROUNDS; round++) {
    const host = await newPlayer(h);
    const s = await newSession(h, host);
    // Eight seats, twelve players: four of them must be refused as full (unless others leave first).
    const requests: Promise<Reply>[] = [];
    for (const [i, p] of pool.entries()) {
      requests.push(
        join(h, p, s.id).then(async (joined) => {
          if (joined.status !== 200) return joined;
          if (i % 3 === 0) return call(h.base, 'POST', `/sessions/${s.id}/leave`, { token: p.token });
          return call(h.base, 'POST', `/sessions/${s.id}/ready`, { token: p.token, body: { isReady: i % 2 === 0 } });
        }),
      );
    }
    for (const target of pool.slice(0, 4)) {
      requests.push(call(h.base, 'POST', `/sessions/${s.id}/players/${target.id}/kick`, { token: host.token }));
    }
    requests.push(call(h.base, 'POST', `/sessions/${s.id}/players/${pool[5].id}/promote`, { token: host.token }));
    const replies = await Promise.all(requests);
    // Every answer is a clean one of the spec's: nothing failed inside.
    for (const r of replies) expect([200, 204, 404, 403, 409]).toContain(r.status);
    for (const r of replies.filter((x) => x.status >= 400)) expect(['not-found', 'forbidden', 'conflict']).toContain(r.body.error);
    const full = replies.filter((r) => r.status === 409 && r.body.details?.limit !== undefined);
    for (const r of full) expect(r.body.details).toEqual({ limit: 8 });

    await log.settled(); // every event of the answered requests has arrived
    await log.waitFor(s.id, 1);
    const { session, seats } = await expectConsistent(s.id);
    // Nobody left the host's seat; promotion may have moved the role, but there is exactly one host.
    expect(seats.filter((x) => x.is_host)).toHaveLength(1);
    expect(session.status).toBe('CONFIGURING');
  }
}, 90_000);

test('promote and kick of the same player at once: exactly one host either way', async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const host = await newPlayer(h);
    const [a, b] = await Promise.all([newPlayer(h), newPlayer(h)]);
    const s = await newSession(h, host);
    await join(h, a, s.id);
    await join(h, b, s.id);
    const replies = await Promise.all([
      call(h.base, 'POST', `/sessions/${s.id}/players/${a.id}/promote`, { token: host.token }),
      call(h.base, 'POST', `/sessions/${s.id}/players/${a.id}/kick`, { token: host.token }),
      call(h.base, 'POST', `/sessions/${s.id}/players/${b.id}/promote`, { token: host.token }),
    ]);
    // The first to commit wins; after a promote, the old host may do nothing more (forbidden).
    expect(replies.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);
    for (const r of replies.filter((x) => x.status !== 200)) expect(['forbidden', 'conflict']).toContain(r.body.error);
    const seats = await h.db('session_players').where({ session_id: s.id });
    expect(seats.filter((x) => x.is_host)).toHaveLength(1);
  }
});

test('the last two players leaving at once close the lobby once, with one event each', async () => {
  for (let round = 0; round < 10; round++) {
    const host = await newPlayer(h);
    const a = await newPlayer(h);
    const s = await newSession(h, host);
    await join(h, a, s.id);
    const replies = await Promise.all([host, a].map((p: TestPlayer) => call(h.base, 'POST', `/sessions/${s.id}/leave`, { token: p.token })));
    expect(statuses(replies)).toEqual([204, 204]);
    expect(await h.db('sessions').where({ id: s.id }).first()).toBeUndefined();
    const events = await log.exactly(s.id, 4);
    // Made, joined, two leaves: the deletion is the version after the row's last (3), whatever order the two leaves' events arrived in.
    expect(versionsOf(s.id)).toEqual([1, 2, 3, 4]);
    expect(newestEvent(s.id)!.session.players).toEqual([]);
    expect(events.flatMap((e) => e.removed.map((r) => r.reason))).toEqual(['left', 'left']);
  }
});

test(`deleting a player while they and others join and leave: no deadlock, no seat left, clean answers (${ROUNDS} rounds)`, async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const doomed = await newPlayer(h);
    const host = await newPlayer(h);
    const lobbies = await Promise.all([newSession(h, host), newSession(h, host), newSession(h, doomed)]);
    await join(h, doomed, lobbies[0].id);
    const replies = await Promise.all([
      join(h, doomed, lobbies[1].id),
      call(h.base, 'POST', `/sessions/${lobbies[0].id}/leave`, { token: doomed.token }),
      call(h.base, 'POST', '/sessions', { token: doomed.token, body: { gameMode: 'g', map: 'm' } }),
      call(h.base, 'DELETE', `/players/${doomed.id}`, { token: h.serverKeys['alpha-live-key'] }),
      call(h.base, 'POST', `/sessions/${lobbies[2].id}/players/${doomed.id}/kick`, { token: doomed.token }),
    ]);
    expect(replies[3].status).toBe(204);
    for (const r of replies) expect([200, 201, 204, 401, 404, 409]).toContain(r.status);
    expect(await h.db('session_players').where({ player_id: doomed.id })).toEqual([]);
    // A lobby the deleted player made in the race has no seats left, so it is closed.
    const made = replies[2];
    if (made.status === 201) expect(await h.db('sessions').where({ id: made.body.id }).first()).toBeUndefined();
    await log.settled(); // every event of the answered requests has arrived
    for (const lobby of lobbies) {
      await log.waitFor(lobby.id, 1);
      await expectConsistent(lobby.id);
    }
  }
}, 60_000);
