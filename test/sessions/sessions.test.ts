/**
 * Sessions over real HTTP (spec §2, §3, §4): every route, rule and refusal, the rows they leave, and
 * the SessionEvent each committed change publishes for the realtime processes.
 */
import type { SessionEvent } from '@hearth/core/sessions';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { environment, plan, project, serverKey, standardManifests, projectWithout } from '../support/manifests';
import { EventLog, type TestPlayer, join, lobbyOfThree, newPlayer, newSession, preparingSession, report } from './helpers';

let h: Harness;
let log: EventLog;

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      project('duo', { sessionSeats: 2 }),
      environment('duo-live', 'duo'),
      serverKey('duo-live-key', 'duo-live'),
      ...projectWithout('quiet', 'sessions'),
      plan('small', {}),
      project('capped', { plan: 'small', sessionSeats: 12 }),
      environment('capped-live', 'capped'),
      serverKey('capped-live-key', 'capped-live'),
    ],
  });
  log = new EventLog(h);
  await log.start();
});

afterAll(async () => {
  await log.stop();
  await h.close();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function sessionRows(appKey = 'alpha-live'): Promise<number> {
  const { rows } = await h.db.raw('SELECT count(*)::int AS n FROM sessions s JOIN environments e ON e.id = s.environment_id WHERE e.app_key = ?', [appKey]);
  return rows[0].n;
}

async function seatRows(sessionId: string) {
  return h
    .db('session_players')
    .where({ session_id: sessionId })
    .orderBy('seat_order')
    .select('player_id', 'player_name', 'unique_net_id', 'is_host', 'is_ready');
}

async function envId(appKey: string): Promise<number> {
  return Number((await h.db('environments').where({ app_key: appKey }).first('id')).id);
}

const seat = (p: TestPlayer, extra: Partial<{ playerName: string; isHost: boolean; isReady: boolean }> = {}) => ({
  playerId: p.id,
  playerName: p.displayName ?? 'Player',
  isHost: false,
  isReady: false,
  ...extra,
});

describe('POST /sessions', () => {
  test('makes a CONFIGURING session with the caller seated as host, and announces it', async () => {
    const host = await newPlayer(h, 'alpha-live-key', 'Hosty');
    const reply = await call(h.base, 'POST', '/sessions', {
      token: host.token,
      body: { gameMode: '  capture the flag ', map: ' harbor  ', uniqueNetId: 'steam:7656119' },
    });
    expect(reply.status).toBe(201);
    const s = reply.body;
    expect(Object.keys(s).sort()).toEqual(['conclusion', 'createdAt', 'gameMode', 'id', 'map', 'players', 'seats', 'status']);
    expect(s).toEqual({
      id: expect.any(String),
      status: 'CONFIGURING',
      gameMode: 'capture the flag',
      map: 'harbor',
      conclusion: null,
      seats: 8,
      players: [{ playerId: host.id, playerName: 'Hosty', isHost: true, isReady: false }],
      createdAt: expect.stringMatching(ISO),
    });
    expect(s.id.length).toBeGreaterThanOrEqual(1);
    expect(s.id.length).toBeLessThanOrEqual(64);
    expect(reply.text).not.toContain('steam:7656119');
    expect(await seatRows(s.id)).toEqual([{ player_id: host.id, player_name: 'Hosty', unique_net_id: 'steam:7656119', is_host: true, is_ready: false }]);

    const [event] = await log.exactly(s.id, 1);
    expect(event).toEqual({ environmentId: await envId('alpha-live'), session: s, removed: [], added: [host.id], committedAt: expect.any(Number), version: 1 });
    expect(log.seatsWhenArrived(event)).toEqual([host.id]);
  });

  test("playerName: trimmed and word-filtered when given, else the player's display name, else `Player`", async () => {
    const named = await newPlayer(h, 'alpha-live-key', 'Display Me');
    const nameless = await newPlayer(h, 'alpha-live-key', null);
    expect(nameless.displayName).toBeNull();
    expect((await newSession(h, named)).players[0].playerName).toBe('Display Me');
    expect((await newSession(h, nameless)).players[0].playerName).toBe('Player');
    expect((await newSession(h, nameless, { playerName: '  Ace  ' })).players[0].playerName).toBe('Ace');
    expect((await newSession(h, nameless, { playerName: 'shit happens' })).players[0].playerName).toBe('**** happens');
    expect((await newSession(h, nameless, { playerName: 'x'.repeat(40) })).players[0].playerName).toBe('x'.repeat(40));
    expect((await newSession(h, nameless, { uniqueNetId: 'n'.repeat(200) })).players[0].playerName).toBe('Player');
  });

  test('seats are the project seats held to the plan, fixed when the session is made', async () => {
    const p = await newPlayer(h, 'capped-live-key');
    expect((await newSession(h, p)).seats).toBe(12);
    await h.apply([plan('small', { sessionSeats: 4 })]);
    const capped = await newSession(h, p);
    expect(capped.seats).toBe(4);
    const duo = await newSession(h, await newPlayer(h, 'duo-live-key'));
    expect(duo.seats).toBe(2);
  });

  test.each([
    ['missing gameMode', { map: 'm' }, 'body.gameMode'],
    ['blank gameMode', { gameMode: '   ', map: 'm' }, 'body.gameMode'],
    ['gameMode of 61', { gameMode: 'g'.repeat(61), map: 'm' }, 'body.gameMode'],
    ['gameMode not a string', { gameMode: 5, map: 'm' }, 'body.gameMode'],
    ['missing map', { gameMode: 'g' }, 'body.map'],
    ['blank map', { gameMode: 'g', map: ' \t ' }, 'body.map'],
    ['map of 61', { gameMode: 'g', map: 'm'.repeat(61) }, 'body.map'],
    ['blank playerName', { gameMode: 'g', map: 'm', playerName: '   ' }, 'body.playerName'],
    ['playerName of 41', { gameMode: 'g', map: 'm', playerName: 'p'.repeat(41) }, 'body.playerName'],
    ['uniqueNetId of 201', { gameMode: 'g', map: 'm', uniqueNetId: 'u'.repeat(201) }, 'body.uniqueNetId'],
    ['an unknown field', { gameMode: 'g', map: 'm', seats: 4 }, 'body.seats'],
  ])('%s is invalid-request and makes nothing', async (_name, body, field) => {
    const p = await newPlayer(h);
    const before = await sessionRows();
    expectError(await call(h.base, 'POST', '/sessions', { token: p.token, body }), 400, 'invalid-request', field);
    expect(await sessionRows()).toBe(before);
  });

  test('a body that is not JSON is invalid-request', async () => {
    const p = await newPlayer(h);
    const before = await sessionRows();
    expectError(
      await call(h.base, 'POST', '/sessions', { token: p.token, rawBody: 'gameMode=x', headers: { 'Content-Type': 'application/json' } }),
      400,
      'invalid-request',
      'body',
    );
    expect(await sessionRows()).toBe(before);
  });

  test('credentials, review and the service switch', async () => {
    const before = await sessionRows();
    const body = { gameMode: 'g', map: 'm' };
    expectError(await call(h.base, 'POST', '/sessions', { body }), 401, 'unauthorized');
    expectError(await call(h.base, 'POST', '/sessions', { token: 'nonsense', body }), 401, 'unauthorized');
    expectError(await call(h.base, 'POST', '/sessions', { token: h.serverKeys['alpha-live-key'], body }), 403, 'forbidden');
    expect(await sessionRows()).toBe(before);

    const quiet = await newPlayer(h, 'quiet-live-key');
    expectError(await call(h.base, 'POST', '/sessions', { token: quiet.token, body }), 403, 'service-disabled');
    expect(await sessionRows('quiet-live')).toBe(0);
    expectError(await call(h.base, 'GET', '/sessions/whatever', { token: h.serverKeys['quiet-live-key'] }), 403, 'service-disabled');

    expectError(await call(h.base, 'GET', '/sessions/whatever', { token: h.serverKeys['pending-live-key'] }), 403, 'project-not-approved');
  });
});

describe('GET /sessions/:sessionId', () => {
  test('any player of the environment and its server key read it; other environments see nothing', async () => {
    const host = await newPlayer(h);
    const s = await newSession(h, host);
    const stranger = await newPlayer(h);
    for (const token of [host.token, stranger.token, h.serverKeys['alpha-live-key']]) {
      const reply = await call(h.base, 'GET', `/sessions/${s.id}`, { token });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(s);
    }
    const other = await newPlayer(h, 'alpha-test-key');
    expectError(await call(h.base, 'GET', `/sessions/${s.id}`, { token: other.token }), 404, 'not-found');
    expectError(await call(h.base, 'GET', `/sessions/${s.id}`, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    expectError(await call(h.base, 'GET', '/sessions/nope', { token: host.token }), 404, 'not-found');
    expectError(await call(h.base, 'GET', `/sessions/${'x'.repeat(65)}`, { token: host.token }), 400, 'invalid-request', 'path.sessionId');
    expectError(await call(h.base, 'GET', `/sessions/${s.id}`), 401, 'unauthorized');
    // A trailing slash makes no difference.
    expect((await call(h.base, 'GET', `/sessions/${s.id}/`, { token: host.token })).body).toEqual(s);
  });

  test('the service answers get and listForPlayer for the realtime process, scoped to the environment', async () => {
    const a = await newPlayer(h);
    const b = await newPlayer(h);
    const first = await newSession(h, a);
    const second = await newSession(h, b);
    expect((await join(h, a, second.id)).status).toBe(200);
    const env = (await h.core.environments.byAppKey('alpha-live'))!;
    const otherEnv = (await h.core.environments.byAppKey('alpha-test'))!;
    expect(await h.core.sessions.get(h.db, env, first.id)).toEqual(first);
    await expect(h.core.sessions.get(h.db, otherEnv, first.id)).rejects.toMatchObject({ code: 'not-found' });
    // The socket's reads carry the version: created 1, a's join 2, c's join 3.
    const joined = (await join(h, await newPlayer(h), second.id)).body;
    expect(await h.core.sessions.getVersioned(h.db, env, second.id)).toEqual({ session: joined, version: 3 });
    await expect(h.core.sessions.getVersioned(h.db, otherEnv, first.id)).rejects.toMatchObject({ code: 'not-found' });
    const listed = await h.core.sessions.listForPlayer(h.db, env, a.id);
    expect(listed.map((s) => s.session.id).sort()).toEqual([first.id, second.id].sort());
    expect(listed.find((s) => s.session.id === second.id)).toEqual({ session: await h.core.sessions.get(h.db, env, second.id), version: 3 });
    expect(listed.find((s) => s.session.id === first.id)).toEqual({ session: first, version: 1 });
    // Each read is one statement, so the version and the seats it comes with are of one moment.
    const statements: string[] = [];
    const count = (q: { sql: string }) => statements.push(q.sql);
    h.db.on('query', count);
    try {
      await h.core.sessions.getVersioned(h.db, env, second.id);
      await h.core.sessions.listForPlayer(h.db, env, a.id);
    } finally {
      h.db.off('query', count);
    }
    expect(statements).toHaveLength(2);
    expect(await h.core.sessions.listForPlayer(h.db, otherEnv, a.id)).toEqual([]);
    expect(await h.core.sessions.listForPlayer(h.db, env, (await newPlayer(h)).id)).toEqual([]);
  });
});

describe('POST /sessions/:sessionId/join', () => {
  test('seats the caller after the others, with its name, and announces the new seat', async () => {
    const host = await newPlayer(h, 'alpha-live-key', 'Host');
    const guest = await newPlayer(h, 'alpha-live-key', 'Guest');
    const named = await newPlayer(h, 'alpha-live-key', 'Ignored');
    const s = await newSession(h, host);
    const reply = await join(h, guest, s.id, { uniqueNetId: 'eos:guest' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...s, players: [seat(host, { isHost: true }), seat(guest)] });
    expect(reply.text).not.toContain('eos:guest');
    // No body at all is taken like `{}`.
    const third = await call(h.base, 'POST', `/sessions/${s.id}/join`, { token: named.token });
    expect(third.status).toBe(200);
    const fourth = await newPlayer(h);
    const withName = await join(h, fourth, s.id, { playerName: ' Mr  Four ' });
    expect(withName.body.players.map((p: { playerName: string }) => p.playerName)).toEqual(['Host', 'Guest', 'Ignored', 'Mr  Four']);
    expect((await seatRows(s.id)).map((r) => r.unique_net_id)).toEqual([null, 'eos:guest', null, null]);

    const events = await log.exactly(s.id, 4);
    expect(events[1]).toEqual({
      environmentId: await envId('alpha-live'),
      session: reply.body,
      removed: [],
      added: [guest.id],
      committedAt: expect.any(Number),
      version: 2,
    });
    expect(events[2].added).toEqual([named.id]);
    expect(events[3]).toMatchObject({ session: withName.body, added: [fourth.id], removed: [] });
    expect(log.seatsWhenArrived(events[1])).toEqual([host.id, guest.id]);
    expect(events[1].committedAt).toBeGreaterThanOrEqual(events[0].committedAt);
  });

  test('refusals: full (details.limit), already seated, past CONFIGURING, no such session, another environment', async () => {
    const host = await newPlayer(h, 'duo-live-key');
    const second = await newPlayer(h, 'duo-live-key');
    const third = await newPlayer(h, 'duo-live-key');
    const s = await newSession(h, host);
    expect((await join(h, second, s.id)).status).toBe(200);
    const seatsBefore = await seatRows(s.id);

    const full = expectError(await join(h, third, s.id), 409, 'conflict');
    expect(full.details).toEqual({ limit: 2 });
    const again = expectError(await join(h, second, s.id), 409, 'conflict');
    expect(again.details?.limit).toBeUndefined();
    expectError(await join(h, host, s.id), 409, 'conflict');
    expectError(await join(h, third, 'no-such-session'), 404, 'not-found');
    expectError(await join(h, third, s.id, { seat: 1 }), 400, 'invalid-request', 'body.seat');
    expectError(await join(h, third, s.id, { playerName: '' }), 400, 'invalid-request', 'body.playerName');
    expectError(await call(h.base, 'POST', `/sessions/${s.id}/join`, { token: h.serverKeys['duo-live-key'], body: {} }), 403, 'forbidden');
    const outsider = await newPlayer(h, 'alpha-live-key');
    expectError(await join(h, outsider, s.id), 404, 'not-found');
    expect(await seatRows(s.id)).toEqual(seatsBefore);

    const past = await preparingSession(h, await newPlayer(h));
    expectError(await join(h, await newPlayer(h), past.id), 409, 'conflict');
    expect((await seatRows(past.id)).length).toBe(1);
    // Refusals change nothing, so they announce nothing.
    await log.exactly(s.id, 2);
  });
});

describe('POST /sessions/:sessionId/leave', () => {
  test('gives up the seat (204, any body ignored); the host role is not passed on', async () => {
    const { host, a, b, s } = await lobbyOfThree(h);

    const left = await call(h.base, 'POST', `/sessions/${s.id}/leave`, {
      token: host.token,
      rawBody: 'not json at all',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(left.status).toBe(204);
    expect(left.text).toBe('');
    const after = (await call(h.base, 'GET', `/sessions/${s.id}`, { token: a.token })).body;
    expect(after.players).toEqual([seat(a), seat(b)]);
    expect((await seatRows(s.id)).filter((r) => r.is_host)).toEqual([]);
    expect((await call(h.base, 'POST', `/sessions/${s.id}/leave`, { token: a.token, body: { anything: [1, 2] } })).status).toBe(204);

    const events = await log.exactly(s.id, 5);
    expect(events[3]).toEqual({
      environmentId: await envId('alpha-live'),
      session: after,
      removed: [{ playerId: host.id, reason: 'left' }],
      added: [],
      committedAt: expect.any(Number),
      version: 4,
    });
    expect(log.seatsWhenArrived(events[3])).not.toContain(host.id);
    expect(events[4].removed).toEqual([{ playerId: a.id, reason: 'left' }]);
    expect(events[4].session.players).toEqual([seat(b)]);
  });

  test('not-found when there is no session, the caller is not seated, or it is of another environment', async () => {
    const host = await newPlayer(h);
    const s = await newSession(h, host);
    expectError(await call(h.base, 'POST', `/sessions/${s.id}/leave`, { token: (await newPlayer(h)).token }), 404, 'not-found');
    expectError(await call(h.base, 'POST', '/sessions/nothing-here/leave', { token: host.token }), 404, 'not-found');
    expectError(await call(h.base, 'POST', `/sessions/${s.id}/leave`, { token: (await newPlayer(h, 'alpha-test-key')).token }), 404, 'not-found');
    expectError(await call(h.base, 'POST', `/sessions/${s.id}/leave`, { token: h.serverKeys['alpha-live-key'] }), 403, 'forbidden');
    expect((await seatRows(s.id)).length).toBe(1);
    await log.exactly(s.id, 1);
  });

  test('the last player leaving a CONFIGURING lobby closes it: GET is 404 and the event still goes out', async () => {
    const host = await newPlayer(h);
    const guest = await newPlayer(h);
    const s = await newSession(h, host);
    await join(h, guest, s.id);
    await call(h.base, 'POST', `/sessions/${s.id}/leave`, { token: host.token });
    expect((await call(h.base, 'POST', `/sessions/${s.id}/leave`, { token: guest.token })).status).toBe(204);
    expectError(await call(h.base, 'GET', `/sessions/${s.id}`, { token: guest.token }), 404, 'not-found');
    expect(await h.db('sessions').where({ id: s.id }).first()).toBeUndefined();
    expectError(await join(h, guest, s.id), 404, 'not-found');

    const events = await log.exactly(s.id, 4);
    expect(events[3]).toMatchObject({ removed: [{ playerId: guest.id, reason: 'left' }], added: [] });
    expect(events[3].session).toEqual({ ...s, players: [] });
    expect(log.seatsWhenArrived(events[3])).toBeNull();
  });

  test('leaving is allowed in any status; a session past CONFIGURING stays when its last player leaves', async () => {
    const host = await newPlayer(h);
    const s = await preparingSession(h, host);
    expect((await report(h, s.id, { status: 'PLAYING' })).status).toBe(200);
    expect((await call(h.base, 'POST', `/sessions/${s.id}/leave`, { token: host.token })).status).toBe(204);
    const after = await call(h.base, 'GET', `/sessions/${s.id}`, { token: h.serverKeys['alpha-live-key'] });
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ status: 'PLAYING', players: [] });
    const done = await report(h, s.id, { status: 'COMPLETE', conclusion: 'nobody left' });
    expect(done.body).toMatchObject({ status: 'COMPLETE', conclusion: 'nobody left', players: [] });
    // And leaving a finished session works too.
    const otherHost = await newPlayer(h);
    const other = await preparingSession(h, otherHost);
    await report(h, other.id, { status: 'ERROR', error: 'boom' });
    expect((await call(h.base, 'POST', `/sessions/${other.id}/leave`, { token: otherHost.token })).status).toBe(204);
    expect((await call(h.base, 'GET', `/sessions/${other.id}`, { token: otherHost.token })).body).toMatchObject({ status: 'ERROR', players: [] });
  });
});

describe('POST /sessions/:sessionId/ready', () => {
  const ready = (p: TestPlayer, id: string, isReady: unknown) => call(h.base, 'POST', `/sessions/${id}/ready`, { token: p.token, body: { isReady } });

  test('the caller readying with everybody else ready moves the session to PREPARING_INSTANCE', async () => {
    const host = await newPlayer(h);
    const a = await newPlayer(h);
    const s = await newSession(h, host);
    await join(h, a, s.id);

    const hostReady = await ready(host, s.id, true);
    expect(hostReady.status).toBe(200);
    expect(hostReady.body).toEqual({ ...s, players: [seat(host, { isHost: true, isReady: true }), seat(a)] });
    const unready = await ready(host, s.id, false);
    expect(unready.body.players[0].isReady).toBe(false);
    expect(unready.body.status).toBe('CONFIGURING');
    expect((await ready(a, s.id, true)).body.status).toBe('CONFIGURING');
    // Readying again when already ready is fine and changes nothing else.
    expect((await ready(a, s.id, true)).body).toMatchObject({ status: 'CONFIGURING', players: [seat(host, { isHost: true }), seat(a, { isReady: true })] });

    const last = await ready(host, s.id, true);
    expect(last.status).toBe(200);
    expect(last.body).toEqual({ ...s, status: 'PREPARING_INSTANCE', players: [seat(host, { isHost: true, isReady: true }), seat(a, { isReady: true })] });
    expect((await h.db('sessions').where({ id: s.id }).first('status')).status).toBe('PREPARING_INSTANCE');

    const events = await log.exactly(s.id, 7);
    expect(events[6]).toEqual({
      environmentId: await envId('alpha-live'),
      session: last.body,
      removed: [],
      added: [],
      committedAt: expect.any(Number),
      version: 7,
    });

    // Past CONFIGURING, ready is a conflict and changes nothing.
    expectError(await ready(a, s.id, false), 409, 'conflict');
    expect((await seatRows(s.id)).map((r) => r.is_ready)).toEqual([true, true]);
  });

  test('a lone player readying starts the session; leaving does not', async () => {
    const host = await newPlayer(h);
    const a = await newPlayer(h);
    const s = await newSession(h, host);
    await join(h, a, s.id);
    await ready(host, s.id, true);
    await call(h.base, 'POST', `/sessions/${s.id}/leave`, { token: a.token });
    // Everybody left is ready, but only readying moves the session (spec §3).
    expect((await call(h.base, 'GET', `/sessions/${s.id}`, { token: host.token })).body.status).toBe('CONFIGURING');
    expect((await ready(host, s.id, true)).body.status).toBe('PREPARING_INSTANCE');
  });

  test('refusals: not-found (no session, not seated, other environment), invalid isReady', async () => {
    const host = await newPlayer(h);
    const s = await newSession(h, host);
    expectError(await ready(await newPlayer(h), s.id, true), 404, 'not-found');
    expectError(await ready(host, 'no-such', true), 404, 'not-found');
    expectError(await ready(await newPlayer(h, 'alpha-test-key'), s.id, true), 404, 'not-found');
    expectError(await ready(host, s.id, 'yes'), 400, 'invalid-request', 'body.isReady');
    expectError(await call(h.base, 'POST', `/sessions/${s.id}/ready`, { token: host.token, body: {} }), 400, 'invalid-request', 'body.isReady');
    expectError(
      await call(h.base, 'POST', `/sessions/${s.id}/ready`, { token: host.token, body: { isReady: true, now: 1 } }),
      400,
      'invalid-request',
      'body.now',
    );
    expect((await seatRows(s.id))[0].is_ready).toBe(false);
    expect((await h.db('sessions').where({ id: s.id }).first('status')).status).toBe('CONFIGURING');
    await log.exactly(s.id, 1);
  });
});

describe.each(['kick', 'promote'] as const)('POST /sessions/:sessionId/players/:playerId/%s refusals', (action) => {
  test('not-found, forbidden and conflict in the spec order; nothing changes', async () => {
    const { host, a, b, s } = await lobbyOfThree(h);
    const act = (caller: TestPlayer | string, sessionId: string, target: string) =>
      call(h.base, 'POST', `/sessions/${sessionId}/players/${target}/${action}`, { token: typeof caller === 'string' ? caller : caller.token });
    const before = await seatRows(s.id);

    expectError(await act(host, 'no-such', a.id), 404, 'not-found');
    expectError(await act(await newPlayer(h), s.id, a.id), 404, 'not-found');
    expectError(await act(await newPlayer(h, 'alpha-test-key'), s.id, a.id), 404, 'not-found');
    expectError(await act(a, s.id, b.id), 403, 'forbidden');
    expectError(await act(a, s.id, host.id), 403, 'forbidden');
    expectError(await act(host, s.id, 'nobody-here'), 409, 'conflict');
    expectError(await act(host, s.id, (await newPlayer(h)).id), 409, 'conflict');
    expectError(await act(h.serverKeys['alpha-live-key'], s.id, a.id), 403, 'forbidden');
    expectError(await act(host, s.id, 'x'.repeat(65)), 400, 'invalid-request', 'path.playerId');
    expect(await seatRows(s.id)).toEqual(before);
    await log.exactly(s.id, 3);

    // Past CONFIGURING: conflict for the host, forbidden still for anybody else.
    const mates = await newSession(h, host);
    await join(h, a, mates.id);
    await call(h.base, 'POST', `/sessions/${mates.id}/ready`, { token: a.token, body: { isReady: true } });
    expect((await call(h.base, 'POST', `/sessions/${mates.id}/ready`, { token: host.token, body: { isReady: true } })).body.status).toBe('PREPARING_INSTANCE');
    expectError(await act(host, mates.id, a.id), 409, 'conflict');
    expectError(await act(a, mates.id, host.id), 403, 'forbidden');
    expect((await seatRows(mates.id)).map((r) => [r.player_id, r.is_host])).toEqual([
      [host.id, true],
      [a.id, false],
    ]);
  });

  test('after the host left nobody is host, so nobody may do it', async () => {
    const { host, a, b, s } = await lobbyOfThree(h);
    await call(h.base, 'POST', `/sessions/${s.id}/leave`, { token: host.token });
    expectError(await call(h.base, 'POST', `/sessions/${s.id}/players/${b.id}/${action}`, { token: a.token }), 403, 'forbidden');
  });
});

describe('kick and promote', () => {
  test('kick takes the seat away and announces it with reason kicked', async () => {
    const { host, a, b, s } = await lobbyOfThree(h);
    const kicked = await call(h.base, 'POST', `/sessions/${s.id}/players/${a.id}/kick`, { token: host.token });
    expect(kicked.status).toBe(200);
    expect(kicked.body).toEqual({ ...s, players: [seat(host, { isHost: true }), seat(b)] });
    expect((await seatRows(s.id)).map((r) => r.player_id)).toEqual([host.id, b.id]);
    const events = await log.exactly(s.id, 4);
    expect(events[3]).toEqual({
      environmentId: await envId('alpha-live'),
      session: kicked.body,
      removed: [{ playerId: a.id, reason: 'kicked' }],
      added: [],
      committedAt: expect.any(Number),
      version: 4,
    });
    expect(log.seatsWhenArrived(events[3])).toEqual([host.id, b.id]);
    // The kicked player may join again (the lobby is still CONFIGURING).
    expect((await join(h, a, s.id)).body.players.map((p: { playerId: string }) => p.playerId)).toEqual([host.id, b.id, a.id]);
  });

  test('promote makes the target host and the caller not; the old host then may not kick', async () => {
    const host = await newPlayer(h);
    const a = await newPlayer(h);
    const s = await newSession(h, host);
    await join(h, a, s.id);
    const promoted = await call(h.base, 'POST', `/sessions/${s.id}/players/${a.id}/promote`, { token: host.token });
    expect(promoted.status).toBe(200);
    expect(promoted.body.players).toEqual([seat(host), seat(a, { isHost: true })]);
    expect((await seatRows(s.id)).map((r) => r.is_host)).toEqual([false, true]);
    const events = await log.exactly(s.id, 3);
    expect(events[2]).toEqual({
      environmentId: await envId('alpha-live'),
      session: promoted.body,
      removed: [],
      added: [],
      committedAt: expect.any(Number),
      version: 3,
    });

    expectError(await call(h.base, 'POST', `/sessions/${s.id}/players/${a.id}/kick`, { token: host.token }), 403, 'forbidden');
    // Promoting oneself as host changes nothing.
    const self = await call(h.base, 'POST', `/sessions/${s.id}/players/${a.id}/promote`, { token: a.token });
    expect(self.body.players).toEqual([seat(host), seat(a, { isHost: true })]);
    const back = await call(h.base, 'POST', `/sessions/${s.id}/players/${host.id}/kick`, { token: a.token });
    expect(back.body.players).toEqual([seat(a, { isHost: true })]);
  });

  test('a host kicking themselves is out like anybody kicked; a lobby left empty closes', async () => {
    const host = await newPlayer(h);
    const s = await newSession(h, host);
    const reply = await call(h.base, 'POST', `/sessions/${s.id}/players/${host.id}/kick`, { token: host.token });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...s, players: [] });
    expectError(await call(h.base, 'GET', `/sessions/${s.id}`, { token: host.token }), 404, 'not-found');
    const events = await log.exactly(s.id, 2);
    expect(events[1].removed).toEqual([{ playerId: host.id, reason: 'kicked' }]);
  });
});

describe('POST /sessions/:sessionId/status', () => {
  const ALL = ['AWAITING_PLAYERS', 'PLAYING', 'COMPLETE', 'ERROR'] as const;
  const ALLOWED: Record<string, string[]> = {
    CONFIGURING: [],
    PREPARING_INSTANCE: ['AWAITING_PLAYERS', 'PLAYING', 'ERROR'],
    AWAITING_PLAYERS: ['PLAYING', 'ERROR'],
    PLAYING: ['COMPLETE', 'ERROR'],
    COMPLETE: [],
    ERROR: [],
  };
  /** How to reach each status from a fresh solo session. */
  const PATHS: Record<string, string[]> = {
    CONFIGURING: [],
    PREPARING_INSTANCE: [],
    AWAITING_PLAYERS: ['AWAITING_PLAYERS'],
    PLAYING: ['AWAITING_PLAYERS', 'PLAYING'],
    COMPLETE: ['PLAYING', 'COMPLETE'],
    ERROR: ['ERROR'],
  };

  async function sessionIn(status: string) {
    const host = await newPlayer(h);
    let s = status === 'CONFIGURING' ? await newSession(h, host) : await preparingSession(h, host);
    for (const step of PATHS[status]) {
      const r = await report(h, s.id, { status: step });
      expect(r.status).toBe(200);
      s = r.body;
    }
    expect(s.status).toBe(status);
    return s;
  }

  test.each(Object.keys(ALLOWED))('from %s: the moves of the table are taken, every other is conflict', async (from) => {
    for (const to of ALL) {
      const s = await sessionIn(from);
      const reply = await report(h, s.id, { status: to });
      if (ALLOWED[from].includes(to)) {
        expect(reply.status).toBe(200);
        expect(reply.body).toEqual({ ...s, status: to, conclusion: null });
      } else {
        expectError(reply, 409, 'conflict');
        expect((await h.db('sessions').where({ id: s.id }).first('status')).status).toBe(from);
      }
    }
  });

  test('conclusion is kept with COMPLETE and answered; null otherwise', async () => {
    const s = await sessionIn('PLAYING');
    const other = await sessionIn('PREPARING_INSTANCE');
    const playing = await report(h, other.id, { status: 'PLAYING', conclusion: 'too early' });
    expect(playing.body.conclusion).toBeNull();
    const done = await report(h, s.id, { status: 'COMPLETE', conclusion: '  Red team won  ' });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ ...s, status: 'COMPLETE', conclusion: 'Red team won' });
    expect((await call(h.base, 'GET', `/sessions/${s.id}`, { token: h.serverKeys['alpha-live-key'] })).body.conclusion).toBe('Red team won');
    const bare = await sessionIn('PLAYING');
    expect((await report(h, bare.id, { status: 'COMPLETE' })).body).toMatchObject({ status: 'COMPLETE', conclusion: null });
    // made, readied, AWAITING_PLAYERS, PLAYING, COMPLETE
    const events = await log.exactly(s.id, 5);
    expect(events[4]).toEqual({
      environmentId: await envId('alpha-live'),
      session: done.body,
      removed: [],
      added: [],
      committedAt: expect.any(Number),
      version: 5,
    });
  });

  test('error is kept with ERROR for staff and never answered', async () => {
    const s = await sessionIn('AWAITING_PLAYERS');
    const reply = await report(h, s.id, { status: 'ERROR', error: 'instance crashed: out of memory', conclusion: 'ignored' });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ ...s, status: 'ERROR', conclusion: null });
    expect(reply.text).not.toContain('out of memory');
    expect((await call(h.base, 'GET', `/sessions/${s.id}`, { token: h.serverKeys['alpha-live-key'] })).text).not.toContain('out of memory');
    expect(await h.db('sessions').where({ id: s.id }).first('status', 'error', 'conclusion')).toEqual({
      status: 'ERROR',
      error: 'instance crashed: out of memory',
      conclusion: null,
    });
    const events = await log.exactly(s.id, 4);
    expect(JSON.stringify(events[3])).not.toContain('out of memory');
    // Sent with another status, error is not kept.
    const other = await sessionIn('PREPARING_INSTANCE');
    await report(h, other.id, { status: 'PLAYING', error: 'not an error' });
    expect((await h.db('sessions').where({ id: other.id }).first('error')).error).toBeNull();
    // Up to 500 characters.
    const long = await sessionIn('PLAYING');
    expect((await report(h, long.id, { status: 'ERROR', error: 'e'.repeat(500) })).status).toBe(200);
  });

  test('refusals: invalid bodies, wrong credential, no such session, another environment', async () => {
    const s = await sessionIn('PREPARING_INSTANCE');
    const host = s.players[0];
    expectError(await report(h, s.id, { status: 'CONFIGURING' }), 400, 'invalid-request', 'body.status');
    expectError(await report(h, s.id, { status: 'PREPARING_INSTANCE' }), 400, 'invalid-request', 'body.status');
    expectError(await report(h, s.id, { status: 'playing' }), 400, 'invalid-request', 'body.status');
    expectError(await report(h, s.id, {}), 400, 'invalid-request', 'body.status');
    expectError(await report(h, s.id, { status: 'ERROR', error: 'e'.repeat(501) }), 400, 'invalid-request', 'body.error');
    expectError(await report(h, s.id, { status: 'PLAYING', conclusion: 'c'.repeat(61) }), 400, 'invalid-request', 'body.conclusion');
    expectError(await report(h, s.id, { status: 'PLAYING', conclusion: '   ' }), 400, 'invalid-request', 'body.conclusion');
    expectError(await report(h, s.id, { status: 'PLAYING', winner: 'red' }), 400, 'invalid-request', 'body.winner');
    expectError(await report(h, 'no-such-session', { status: 'PLAYING' }), 404, 'not-found');
    expectError(await report(h, s.id, { status: 'PLAYING' }, 'alpha-test-key'), 404, 'not-found');
    const player = await newPlayer(h);
    expectError(await call(h.base, 'POST', `/sessions/${s.id}/status`, { token: player.token, body: { status: 'PLAYING' } }), 403, 'forbidden');
    expect(await h.db('sessions').where({ id: s.id }).first('status', 'error', 'conclusion')).toEqual({
      status: 'PREPARING_INSTANCE',
      error: null,
      conclusion: null,
    });
    expect(host.isReady).toBe(true);
    await log.exactly(s.id, 2);
  });
});

describe('DELETE /players/:playerId', () => {
  test('ends every seat of the player with `deleted` events; an emptied lobby closes, a match stays', async () => {
    const doomed = await newPlayer(h);
    const host = await newPlayer(h);
    const shared = await newSession(h, host);
    await join(h, doomed, shared.id);
    const alone = await newSession(h, doomed);
    const match = await newSession(h, doomed);
    const mate = await newPlayer(h);
    await join(h, mate, match.id);
    await call(h.base, 'POST', `/sessions/${match.id}/ready`, { token: mate.token, body: { isReady: true } });
    await call(h.base, 'POST', `/sessions/${match.id}/ready`, { token: doomed.token, body: { isReady: true } });
    await report(h, match.id, { status: 'PLAYING' });
    const untouched = await newSession(h, host);

    const deleted = await call(h.base, 'DELETE', `/players/${doomed.id}`, { token: h.serverKeys['alpha-live-key'] });
    expect(deleted.status).toBe(204);
    expect(await h.db('session_players').where({ player_id: doomed.id })).toEqual([]);

    const env = await envId('alpha-live');
    const [, , sharedGone] = await log.exactly(shared.id, 3);
    expect(sharedGone).toEqual({
      environmentId: env,
      session: { ...shared, players: [seat(host, { isHost: true })] },
      removed: [{ playerId: doomed.id, reason: 'deleted' }],
      added: [],
      committedAt: expect.any(Number),
      version: 3,
    });
    expect(log.seatsWhenArrived(sharedGone)).toEqual([host.id]);

    // The lobby's row is gone: its last event takes the version after the row's.
    const aloneEvents = await log.exactly(alone.id, 2);
    expect(aloneEvents[1]).toMatchObject({ removed: [{ playerId: doomed.id, reason: 'deleted' }], session: { ...alone, players: [] }, version: 2 });
    expectError(await call(h.base, 'GET', `/sessions/${alone.id}`, { token: host.token }), 404, 'not-found');

    const matchEvents = await log.exactly(match.id, 6);
    expect(matchEvents[5]).toMatchObject({ removed: [{ playerId: doomed.id, reason: 'deleted' }], added: [], version: 6 });
    expect(matchEvents[5].session).toMatchObject({ status: 'PLAYING', players: [seat(mate, { isReady: true })] });
    expect((await call(h.base, 'GET', `/sessions/${match.id}`, { token: host.token })).body.players).toEqual([seat(mate, { isReady: true })]);

    await log.exactly(untouched.id, 1);
    // A player of another environment is not-found and nothing is announced.
    const stranger = await newPlayer(h, 'alpha-test-key');
    const strangerSession = await newSession(h, stranger);
    expectError(await call(h.base, 'DELETE', `/players/${stranger.id}`, { token: h.serverKeys['alpha-live-key'] }), 404, 'not-found');
    expect((await seatRows(strangerSession.id)).length).toBe(1);
    await log.exactly(strangerSession.id, 1);
  });
});

test('every event on the channel has exactly the contract fields', () => {
  expect(log.events.length).toBeGreaterThan(50);
  for (const event of log.events as SessionEvent[]) {
    expect(Object.keys(event).sort()).toEqual(['added', 'committedAt', 'environmentId', 'removed', 'session', 'version']);
    expect(Number.isSafeInteger(event.version) && event.version >= 1).toBe(true);
    expect(Object.keys(event.session).sort()).toEqual(['conclusion', 'createdAt', 'gameMode', 'id', 'map', 'players', 'seats', 'status']);
    for (const p of event.session.players) expect(Object.keys(p).sort()).toEqual(['isHost', 'isReady', 'playerId', 'playerName']);
  }
});

test('the OpenAPI document describes every sessions route with its refusals', async () => {
  const doc = (await call(h.base, 'GET', '/openapi.json')).body;
  const ops: [string, string, string[]][] = [
    ['post', '/sessions', ['201']],
    ['get', '/sessions/{sessionId}', ['200', '404']],
    ['post', '/sessions/{sessionId}/join', ['200', '404', '409']],
    ['post', '/sessions/{sessionId}/leave', ['204', '404']],
    ['post', '/sessions/{sessionId}/ready', ['200', '404', '409']],
    ['post', '/sessions/{sessionId}/players/{playerId}/kick', ['200', '403', '404', '409']],
    ['post', '/sessions/{sessionId}/players/{playerId}/promote', ['200', '403', '404', '409']],
    ['post', '/sessions/{sessionId}/status', ['200', '403', '404', '409']],
  ];
  const paths = Object.fromEntries(Object.entries(doc.paths).map(([p, v]) => [p.replace(/^\/v1/, ''), v])) as Record<string, any>;
  for (const [method, path, statuses] of ops) {
    const op = paths[path]?.[method];
    expect({ path, method, found: op !== undefined }).toEqual({ path, method, found: true });
    for (const status of statuses) expect({ path, status, has: status in op.responses }).toEqual({ path, status, has: true });
  }
});

describe('every seat change answers the session as it then stands', () => {
  // The changes build their answer (and event) from the seats they wrote, without reading them again:
  // each answer must equal what GET reads right after, and so must the event it published.
  test('create, joins, ready, promote, kick, leave and the ready that starts the match: answer = event = GET', async () => {
    const host = await newPlayer(h);
    const a = await newPlayer(h);
    const b = await newPlayer(h);
    const c = await newPlayer(h);
    const created = await newSession(h, host);
    const id: string = created.id;
    const read = async () => (await call(h.base, 'GET', `/sessions/${id}`, { token: host.token })).body;
    expect(created).toEqual(await read());

    const steps: Array<[string, () => Promise<{ status: number; body: any }>, TestPlayer]> = [
      ['a joins', () => join(h, a, id), host],
      ['b joins', () => join(h, b, id, { playerName: 'Bee' }), host],
      ['c joins', () => join(h, c, id), host],
      ['a readies', () => call(h.base, 'POST', `/sessions/${id}/ready`, { token: a.token, body: { isReady: true } }), host],
      ['a unreadies', () => call(h.base, 'POST', `/sessions/${id}/ready`, { token: a.token, body: { isReady: false } }), host],
      ['host promotes b', () => call(h.base, 'POST', `/sessions/${id}/players/${b.id}/promote`, { token: host.token, body: {} }), b],
      ['b kicks c', () => call(h.base, 'POST', `/sessions/${id}/players/${c.id}/kick`, { token: b.token, body: {} }), b],
      ['host readies', () => call(h.base, 'POST', `/sessions/${id}/ready`, { token: host.token, body: { isReady: true } }), b],
      ['a readies', () => call(h.base, 'POST', `/sessions/${id}/ready`, { token: a.token, body: { isReady: true } }), b],
      ['b readies last: the match starts', () => call(h.base, 'POST', `/sessions/${id}/ready`, { token: b.token, body: { isReady: true } }), b],
    ];
    let events = 1;
    for (const [name, step, reader] of steps) {
      const reply = await step();
      const now = (await call(h.base, 'GET', `/sessions/${id}`, { token: reader.token })).body;
      expect({ name, status: reply.status, answer: reply.body }).toEqual({ name, status: 200, answer: now });
      const published = await log.waitFor(id, ++events);
      expect({ name, event: published[events - 1].session }).toEqual({ name, event: now });
    }
    expect(await read()).toMatchObject({ status: 'PREPARING_INSTANCE' });

    // Leaving answers 204; the event carries the session without the seat, as GET then reads it.
    const left = await call(h.base, 'POST', `/sessions/${id}/leave`, { token: a.token });
    expect(left.status).toBe(204);
    const afterLeave = (await call(h.base, 'GET', `/sessions/${id}`, { token: b.token })).body;
    expect((await log.waitFor(id, ++events))[events - 1].session).toEqual(afterLeave);
    expect(afterLeave.players.map((p: { playerId: string }) => p.playerId)).toEqual([host.id, b.id]);
  });
});
