/**
 * Players (spec §4 Players, §3 player lifecycle, §8 player cap): reading, renaming through the word
 * filter, deleting, the `me` path rule, and the plan's player cap under concurrency.
 */
import { type ApiInstance, type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { environment, plan, project, serverKey, standardManifests } from '../support/manifests';
import { eventually } from '../support/wait';

let h: Harness;
let other: ApiInstance;
let liveKey: string;

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      // Project alpha's own words add to the built-in list.
      ...standardManifests().map((doc) =>
        doc.kind === 'Project' && doc.metadata.name === 'alpha' ? project('alpha', { wordFilter: { words: ['Grief', 'noob'] } }) : doc,
      ),
      plan('tiny', { playersPerEnvironment: 3 }),
      project('capped', { plan: 'tiny' }),
      environment('capped-a', 'capped'),
      environment('capped-b', 'capped'),
      environment('capped-c', 'capped'),
      serverKey('capped-a-key', 'capped-a'),
      serverKey('capped-b-key', 'capped-b'),
      serverKey('capped-c-key', 'capped-c'),
    ],
  });
  other = await h.startAnotherApi();
  liveKey = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const rename = (path: string, token: string, displayName: unknown) => call(h.base, 'PATCH', path, { token, body: { displayName } });
const me = (token: string, base = h.base) => call(base, 'GET', '/players/me', { token });

async function playersIn(appKey: string): Promise<number> {
  const env = await h.core.environments.byAppKey(appKey);
  const [{ n }] = await h.db('players').where({ environment_id: env!.id }).count({ n: '*' });
  return Number(n);
}

describe('GET /players/:playerId', () => {
  test('a player token reads itself as `me`; naming any id, even its own, is forbidden', async () => {
    const tokens = await signIn(h.base, liveKey, 'pl-me', 'Mia');
    const read = await me(tokens.accessToken);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ id: tokens.player.id, displayName: 'Mia', createdAt: tokens.player.createdAt });
    expectError(await call(h.base, 'GET', `/players/${tokens.player.id}`, { token: tokens.accessToken }), 403, 'forbidden');
    expectError(await rename(`/players/${tokens.player.id}`, tokens.accessToken, 'Other'), 403, 'forbidden');
    expectError(await call(h.base, 'GET', '/players/someone-else', { token: tokens.accessToken }), 403, 'forbidden');
    expect((await me(tokens.accessToken)).body.displayName).toBe('Mia');
  });

  test('a server key reads a player by id; `me`, an unknown id and a player of another environment are not-found', async () => {
    const tokens = await signIn(h.base, liveKey, 'pl-server', 'Sam');
    const read = await call(h.base, 'GET', `/players/${tokens.player.id}`, { token: liveKey });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(tokens.player);
    const keyMe = await call(h.base, 'GET', '/players/me', { token: liveKey });
    expectError(keyMe, 404, 'not-found');
    // Not "the player was not found": the key has no player of its own, and the answer says so.
    expect(keyMe.body.message).toBe('A server key has no `me`: name the player by id, as /players/{playerId}.');
    expectError(await call(h.base, 'GET', '/players/no-such-player', { token: liveKey }), 404, 'not-found');
    const elsewhere = await signIn(h.base, h.serverKeys['alpha-test-key'], 'pl-server');
    expectError(await call(h.base, 'GET', `/players/${elsewhere.player.id}`, { token: liveKey }), 404, 'not-found');
    expectError(await rename(`/players/${elsewhere.player.id}`, liveKey, 'Hijack'), 404, 'not-found');
    expect((await me(elsewhere.accessToken)).body.displayName).toBeNull();
  });

  test('path rules: an id over 64 characters is invalid-request; a query parameter is not taken', async () => {
    expectError(await call(h.base, 'GET', `/players/${'p'.repeat(65)}`, { token: liveKey }), 400, 'invalid-request', 'path.playerId');
    const tokens = await signIn(h.base, liveKey, 'pl-query');
    expectError(await call(h.base, 'GET', '/players/me?x=1', { token: tokens.accessToken }), 400, 'invalid-request', 'query.x');
    expectError(await call(h.base, 'GET', '/players/me'), 401, 'unauthorized');
  });
});

describe('PATCH /players/:playerId', () => {
  test('the name is trimmed and answered as stored; a server key renames by id', async () => {
    const tokens = await signIn(h.base, liveKey, 'pl-rename');
    const renamed = await rename('/players/me', tokens.accessToken, '  Nova Prime  ');
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ id: tokens.player.id, displayName: 'Nova Prime', createdAt: tokens.player.createdAt });
    expect((await me(tokens.accessToken)).body.displayName).toBe('Nova Prime');

    const byServer = await rename(`/players/${tokens.player.id}`, liveKey, 'Server Named');
    expect(byServer.status).toBe(200);
    expect(byServer.body.displayName).toBe('Server Named');
    // Another process reads the new name at once (no stale copy of the name is served).
    expect((await me(tokens.accessToken, other.base)).body.displayName).toBe('Server Named');
    expectError(await rename('/players/me', liveKey, 'Nobody'), 404, 'not-found');
  });

  test('the word filter stars out built-in and project words, whole words only, any case', async () => {
    const tokens = await signIn(h.base, liveKey, 'pl-filter');
    const cases: Array<[string, string]> = [
      ['shit happens', '**** happens'],
      ['SHIT Happens', '**** Happens'],
      ['big fucking deal', 'big ******* deal'],
      ['Grief Lord', '***** Lord'],
      ['the NOOB slayer', 'the **** slayer'],
      ['noob-noob', '****-****'],
      ['Scunthorpe United', 'Scunthorpe United'],
      ['Shitake Grower', 'Shitake Grower'],
      ['Griefless noobish', 'Griefless noobish'],
      ['Bullshit Artist', 'Bullshit Artist'],
      ['supernoob 2', 'supernoob 2'],
      ['noob2 x', 'noob2 x'],
      ['(shit) [noob]', '(****) [****]'],
      ['Plain Name', 'Plain Name'],
    ];
    for (const [asked, stored] of cases) {
      const reply = await rename('/players/me', tokens.accessToken, asked);
      expect({ asked, status: reply.status, name: reply.body.displayName }).toEqual({ asked, status: 200, name: stored });
      expect((await me(tokens.accessToken)).body.displayName).toBe(stored);
    }
  });

  test('the word filter applies to the name given at sign-in, and only the project that lists a word stars it', async () => {
    const live = await signIn(h.base, liveKey, 'pl-filter-signin', 'Grief shit');
    expect(live.player.displayName).toBe('***** ****');
    const plain = await signIn(h.base, h.serverKeys['plain-live-key'], 'pl-filter-signin', 'Grief shit');
    expect(plain.player.displayName).toBe('Grief ****');
  });

  test('displayName is 1-40 characters after trimming; refusals change nothing', async () => {
    const tokens = await signIn(h.base, liveKey, 'pl-limits', 'Before');
    const refused: Array<[unknown, string]> = [
      ['', 'body.displayName'],
      ['    ', 'body.displayName'],
      ['x'.repeat(41), 'body.displayName'],
      [` ${'x'.repeat(41)} `, 'body.displayName'],
      [7, 'body.displayName'],
      [null, 'body.displayName'],
    ];
    for (const [displayName, field] of refused) {
      expectError(await rename('/players/me', tokens.accessToken, displayName), 400, 'invalid-request', field);
    }
    expectError(await call(h.base, 'PATCH', '/players/me', { token: tokens.accessToken, body: {} }), 400, 'invalid-request', 'body.displayName');
    expectError(
      await call(h.base, 'PATCH', '/players/me', { token: tokens.accessToken, body: { displayName: 'Ok', extra: 1 } }),
      400,
      'invalid-request',
      'body.extra',
    );
    expectError(
      await call(h.base, 'PATCH', '/players/me', { token: tokens.accessToken, rawBody: 'displayName=x', headers: { 'Content-Type': 'text/plain' } }),
      400,
      'invalid-request',
      'body',
    );
    expect((await me(tokens.accessToken)).body.displayName).toBe('Before');

    // The limits count characters, not bytes or UTF-16 units.
    const forty = `  ${'x'.repeat(40)}  `;
    expect((await rename('/players/me', tokens.accessToken, forty)).body.displayName).toBe('x'.repeat(40));
    const emoji = '😀'.repeat(40);
    const wide = await rename('/players/me', tokens.accessToken, emoji);
    expect({ status: wide.status, name: wide.body.displayName }).toEqual({ status: 200, name: emoji });
    expectError(await rename('/players/me', tokens.accessToken, '😀'.repeat(41)), 400, 'invalid-request', 'body.displayName');
    expect((await rename('/players/me', tokens.accessToken, 'Ö')).body.displayName).toBe('Ö');
  });
});

describe('DELETE /players/:playerId', () => {
  test('a server key deletes; tokens stop working everywhere; reads and a second delete are not-found; the subject comes back as a new player', async () => {
    const tokens = await signIn(h.base, liveKey, 'pl-delete', 'Doomed');
    // The other process has the player cached as good.
    expect((await me(tokens.accessToken, other.base)).status).toBe(200);
    const countBefore = await playersIn('alpha-live');

    const deleted = await call(h.base, 'DELETE', `/players/${tokens.player.id}`, { token: liveKey });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(await playersIn('alpha-live')).toBe(countBefore - 1);
    expect(await h.db('player_identities').where({ player_id: tokens.player.id }).first()).toBeUndefined();

    expectError(await me(tokens.accessToken), 401, 'unauthorized');
    const tookMs = await eventually(async () => (await me(tokens.accessToken, other.base)).status === 401, 1500);
    expect(tookMs).toBeLessThan(1500);
    expectError(await call(h.base, 'POST', '/auth/refresh', { body: { refreshToken: tokens.refreshToken } }), 401, 'unauthorized');
    expectError(await call(h.base, 'GET', `/players/${tokens.player.id}`, { token: liveKey }), 404, 'not-found');
    expectError(await call(h.base, 'DELETE', `/players/${tokens.player.id}`, { token: liveKey }), 404, 'not-found');
    expect(await playersIn('alpha-live')).toBe(countBefore - 1);

    const reborn = await call(h.base, 'POST', '/auth/server', { token: liveKey, body: { subject: 'pl-delete' } });
    expect(reborn.status).toBe(201);
    expect(reborn.body.player.id).not.toBe(tokens.player.id);
    expect(reborn.body.player.displayName).toBeNull();
    expectError(await me(tokens.accessToken), 401, 'unauthorized');
    expect((await me(reborn.body.accessToken)).status).toBe(200);
  });

  test('a player token may not delete (forbidden); `me`, unknown and other-environment ids are not-found with a server key', async () => {
    const tokens = await signIn(h.base, liveKey, 'pl-delete-refused');
    expectError(await call(h.base, 'DELETE', '/players/me', { token: tokens.accessToken }), 403, 'forbidden');
    expectError(await call(h.base, 'DELETE', `/players/${tokens.player.id}`, { token: tokens.accessToken }), 403, 'forbidden');
    expectError(await call(h.base, 'DELETE', '/players/me', { token: liveKey }), 404, 'not-found');
    expectError(await call(h.base, 'DELETE', '/players/no-such-player', { token: liveKey }), 404, 'not-found');
    expectError(await call(h.base, 'DELETE', `/players/${tokens.player.id}`, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    expect((await me(tokens.accessToken)).status).toBe(200);
  });
});

describe('the player cap of the plan', () => {
  test('at the cap an unseen subject is refused 409 conflict; existing players still sign in; a deletion frees a place', async () => {
    const key = h.serverKeys['capped-a-key'];
    const made = [];
    for (let i = 0; i < 3; i++) {
      const reply = await call(h.base, 'POST', '/auth/server', { token: key, body: { subject: `cap-${i}` } });
      expect(reply.status).toBe(201);
      made.push(reply.body);
    }
    const full = await call(h.base, 'POST', '/auth/server', { token: key, body: { subject: 'cap-3' } });
    expect(expectError(full, 409, 'conflict').details).toEqual({ limit: 3 });
    expect(await h.db('player_identities').where({ subject: 'cap-3' }).first()).toBeUndefined();
    for (let i = 0; i < 3; i++) {
      const again = await call(h.base, 'POST', '/auth/server', { token: key, body: { subject: `cap-${i}`, displayName: `Cap ${i}` } });
      expect(again.status).toBe(200);
      expect(again.body.player.id).toBe(made[i].player.id);
    }
    expect(await playersIn('capped-a')).toBe(3);
    // Each environment has a cap of its own.
    expect((await call(h.base, 'POST', '/auth/server', { token: h.serverKeys['capped-c-key'], body: { subject: 'cap-3' } })).status).toBe(201);

    expect((await call(h.base, 'DELETE', `/players/${made[0].player.id}`, { token: key })).status).toBe(204);
    expect((await call(h.base, 'POST', '/auth/server', { token: key, body: { subject: 'cap-3' } })).status).toBe(201);
    expectError(await call(h.base, 'POST', '/auth/server', { token: key, body: { subject: 'cap-4' } }), 409, 'conflict');
    expect(await playersIn('capped-a')).toBe(3);
  });

  test('10 concurrent first sign-ins of distinct subjects at cap 3 make exactly 3 players', async () => {
    const key = h.serverKeys['capped-b-key'];
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call(i % 2 ? other.base : h.base, 'POST', '/auth/server', { token: key, body: { subject: `rush-${i}` } })),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of replies.filter((x) => x.status === 409)) expect(r.body).toMatchObject({ error: 'conflict', details: { limit: 3 } });
    expect(await playersIn('capped-b')).toBe(3);
    const env = await h.core.environments.byAppKey('capped-b');
    expect(Number((await h.db('environments').where({ id: env!.id }).first('player_count')).player_count)).toBe(3);
  });

  test('10 concurrent first sign-ins of the same subject make exactly one player (one 201, the rest 200)', async () => {
    const before = await playersIn('alpha-live');
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call(i % 2 ? other.base : h.base, 'POST', '/auth/server', { token: liveKey, body: { subject: 'same-subject' } })),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(replies.map((r) => r.body.player.id)).size).toBe(1);
    expect(await playersIn('alpha-live')).toBe(before + 1);
    expect(await h.db('player_identities').where({ subject: 'same-subject' }).count({ n: '*' })).toEqual([{ n: '1' }]);
  });
});
