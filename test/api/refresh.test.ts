/**
 * POST /auth/refresh (spec §4, §5.4-5.5; docs/api-conventions.md, "Refresh rotation has a grace"): a refresh token works once; presented
 * again within 60 s it answers what it answered the first time; later it is unauthorized. Sign out
 * everywhere ends access and refresh tokens, on every API process.
 */
import { type ApiInstance, type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { environment, project, serverKey, standardManifests } from '../support/manifests';
import { eventually } from '../support/wait';

let h: Harness;
let other: ApiInstance;
let liveKey: string;

beforeAll(async () => {
  h = await startHarness({
    manifests: [...standardManifests(), project('gamma'), environment('gamma-live', 'gamma'), serverKey('gamma-live-key', 'gamma-live')],
  });
  other = await h.startAnotherApi();
  liveKey = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const refresh = (refreshToken: unknown, base = h.base) => call(base, 'POST', '/auth/refresh', { body: { refreshToken } });
const me = (token: string, base = h.base) => call(base, 'GET', '/players/me', { token });
const jtiOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')).jti as string;

describe('rotation', () => {
  test('a refresh answers new tokens in the PlatformTokens shape; the new refresh token works in turn', async () => {
    const signedIn = await signIn(h.base, liveKey, 'ref-1', 'Rhea');
    const first = await refresh(signedIn.refreshToken);
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(['accessToken', 'expiresIn', 'player', 'refreshToken']);
    expect(first.body.expiresIn).toBe(3600);
    expect(first.body.player).toEqual(signedIn.player);
    expect(first.body.accessToken).not.toBe(signedIn.accessToken);
    expect(first.body.refreshToken).not.toBe(signedIn.refreshToken);
    expect((await me(first.body.accessToken)).body).toEqual(signedIn.player);

    const second = await refresh(first.body.refreshToken);
    expect(second.status).toBe(200);
    expect(second.body.refreshToken).not.toBe(first.body.refreshToken);
    expect(second.body.accessToken).not.toBe(first.body.accessToken);
    expect((await me(second.body.accessToken)).status).toBe(200);
  });

  test('presented again within 60 s it answers what it answered the first time, on any process; later it is unauthorized', async () => {
    const signedIn = await signIn(h.base, liveKey, 'ref-replay');
    const first = await refresh(signedIn.refreshToken);
    expect(first.status).toBe(200);
    const again = await refresh(signedIn.refreshToken);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const elsewhere = await refresh(signedIn.refreshToken, other.base);
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body).toEqual(first.body);

    // Two minutes later the replay window is over.
    const updated = await h
      .db('refresh_tokens_used')
      .where({ jti: jtiOf(signedIn.refreshToken) })
      .update({ used_at: new Date(Date.now() - 120_000) });
    expect(updated).toBe(1);
    expectError(await refresh(signedIn.refreshToken), 401, 'unauthorized');
    expectError(await refresh(signedIn.refreshToken, other.base), 401, 'unauthorized');
    // What it answered first is unaffected.
    expect((await refresh(first.body.refreshToken)).status).toBe(200);
  });

  test('concurrent double use answers the same tokens twice and records one use', async () => {
    const signedIn = await signIn(h.base, liveKey, 'ref-race');
    const [a, b, c] = await Promise.all([refresh(signedIn.refreshToken), refresh(signedIn.refreshToken), refresh(signedIn.refreshToken, other.base)]);
    expect([a.status, b.status, c.status]).toEqual([200, 200, 200]);
    expect(b.body).toEqual(a.body);
    expect(c.body).toEqual(a.body);
    expect(
      await h
        .db('refresh_tokens_used')
        .where({ jti: jtiOf(signedIn.refreshToken) })
        .count({ n: '*' }),
    ).toEqual([{ n: '1' }]);
    // Exactly one new refresh token exists, and it works.
    expect((await refresh(a.body.refreshToken)).status).toBe(200);
  });

  test('the stored answer is sealed: no token appears in clear in the database', async () => {
    const signedIn = await signIn(h.base, liveKey, 'ref-sealed');
    const first = await refresh(signedIn.refreshToken);
    const row = await h
      .db('refresh_tokens_used')
      .where({ jti: jtiOf(signedIn.refreshToken) })
      .first();
    expect(row.player_id).toBe(signedIn.player.id);
    expect(row.answer_encrypted).not.toContain(first.body.refreshToken);
    expect(row.answer_encrypted).not.toContain(first.body.accessToken.split('.')[1]);
  });
});

describe('refusals', () => {
  test('an access token, garbage, or a refresh token of no player → 401 unauthorized', async () => {
    const signedIn = await signIn(h.base, liveKey, 'ref-wrong');
    expectError(await refresh(signedIn.accessToken), 401, 'unauthorized');
    // A signature with its first character changed (the last ones carry bits a decoder may ignore).
    const [header, payload, signature] = signedIn.refreshToken.split('.');
    const forged = `${header}.${payload}.${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    for (const garbage of ['x', 'a.b.c', forged, h.serverKeys['alpha-live-key']]) {
      expectError(await refresh(garbage), 401, 'unauthorized');
    }
    // None of these used the good refresh token up.
    expect((await refresh(signedIn.refreshToken)).status).toBe(200);
  });

  test('body rules', async () => {
    expectError(await call(h.base, 'POST', '/auth/refresh', { body: {} }), 400, 'invalid-request', 'body.refreshToken');
    expectError(await call(h.base, 'POST', '/auth/refresh'), 400, 'invalid-request', 'body.refreshToken');
    expectError(await refresh(''), 400, 'invalid-request', 'body.refreshToken');
    expectError(await refresh(12), 400, 'invalid-request', 'body.refreshToken');
    expectError(await refresh('r'.repeat(4001)), 400, 'invalid-request', 'body.refreshToken');
    expectError(await call(h.base, 'POST', '/auth/refresh', { body: { refreshToken: 'x', extra: 1 } }), 400, 'invalid-request', 'body.extra');
    expectError(
      await call(h.base, 'POST', '/auth/refresh', { rawBody: 'refreshToken=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }),
      400,
      'invalid-request',
      'body',
    );
    expectError(
      await call(h.base, 'POST', '/auth/refresh', {
        rawBody: JSON.stringify({ refreshToken: 'x'.repeat(17_000) }),
        headers: { 'Content-Type': 'application/json' },
      }),
      413,
      'payload-too-large',
    );
  });

  test('a refresh of a deleted player → 401, even within the replay window', async () => {
    const signedIn = await signIn(h.base, liveKey, 'ref-deleted');
    const used = await signIn(h.base, liveKey, 'ref-deleted');
    expect((await refresh(used.refreshToken)).status).toBe(200);
    expect((await call(h.base, 'DELETE', `/players/${signedIn.player.id}`, { token: liveKey })).status).toBe(204);
    expectError(await refresh(signedIn.refreshToken), 401, 'unauthorized');
    expectError(await refresh(used.refreshToken), 401, 'unauthorized');
    expectError(await refresh(signedIn.refreshToken, other.base), 401, 'unauthorized');
  });

  test('a refresh for a project no longer approved → 403 project-not-approved, and the token is not used up', async () => {
    const signedIn = await signIn(h.base, h.serverKeys['gamma-live-key'], 'ref-suspended');
    await h.apply([project('gamma', { review: 'suspended' })]);
    try {
      expectError(await refresh(signedIn.refreshToken), 403, 'project-not-approved');
      await eventually(async () => (await refresh(signedIn.refreshToken, other.base)).status === 403, 1500);
      expect(
        await h
          .db('refresh_tokens_used')
          .where({ jti: jtiOf(signedIn.refreshToken) })
          .first(),
      ).toBeUndefined();
    } finally {
      await h.apply([project('gamma')]);
    }
    const after = await refresh(signedIn.refreshToken);
    expect(after.status).toBe(200);
    expect(after.body.player.id).toBe(signedIn.player.id);
  });
});

describe('sign out everywhere', () => {
  test('POST /players/me/sign-out → 204; access and refresh tokens then fail here and on another process within moments', async () => {
    const a = await signIn(h.base, liveKey, 'ref-out');
    const b = await signIn(h.base, liveKey, 'ref-out');
    // The other process has the player's state cached as good.
    expect((await me(a.accessToken, other.base)).status).toBe(200);

    const out = await call(h.base, 'POST', '/players/me/sign-out', { token: a.accessToken });
    expect(out.status).toBe(204);
    expect(out.text).toBe('');

    for (const token of [a.accessToken, b.accessToken]) expectError(await me(token), 401, 'unauthorized');
    const tookMs = await eventually(async () => (await me(b.accessToken, other.base)).status === 401, 1500);
    expect(tookMs).toBeLessThan(1500);
    expectError(await me(a.accessToken, other.base), 401, 'unauthorized');
    for (const token of [a.refreshToken, b.refreshToken]) {
      expectError(await refresh(token), 401, 'unauthorized');
      expectError(await refresh(token, other.base), 401, 'unauthorized');
    }
    // Signing out again needs a good token.
    expectError(await call(h.base, 'POST', '/players/me/sign-out', { token: a.accessToken }), 401, 'unauthorized');
  });

  test('a sign-in right after the sign-out, in the same second, gets tokens that work everywhere', async () => {
    const before = await signIn(h.base, liveKey, 'ref-out-again');
    expect((await call(h.base, 'POST', '/players/me/sign-out', { token: before.accessToken })).status).toBe(204);
    const after = await signIn(h.base, liveKey, 'ref-out-again');
    const afterOther = await signIn(other.base, liveKey, 'ref-out-again');
    for (const base of [h.base, other.base]) {
      expect((await me(after.accessToken, base)).status).toBe(200);
      expect((await me(afterOther.accessToken, base)).status).toBe(200);
    }
    const refreshed = await refresh(after.refreshToken, other.base);
    expect(refreshed.status).toBe(200);
    expect((await me(refreshed.body.accessToken)).status).toBe(200);
    expectError(await me(before.accessToken), 401, 'unauthorized');
  });

  test('a server key signs a player out by id; an unknown id or `me` is not-found', async () => {
    const signedIn = await signIn(h.base, liveKey, 'ref-out-server');
    const out = await call(h.base, 'POST', `/players/${signedIn.player.id}/sign-out`, { token: liveKey });
    expect(out.status).toBe(204);
    expectError(await me(signedIn.accessToken), 401, 'unauthorized');
    expectError(await refresh(signedIn.refreshToken), 401, 'unauthorized');
    // The player and their name are untouched.
    expect((await call(h.base, 'GET', `/players/${signedIn.player.id}`, { token: liveKey })).body).toEqual(signedIn.player);

    expectError(await call(h.base, 'POST', '/players/no-such-player/sign-out', { token: liveKey }), 404, 'not-found');
    expectError(await call(h.base, 'POST', '/players/me/sign-out', { token: liveKey }), 404, 'not-found');
    // A player of another environment is not-found, and stays signed in.
    const elsewhere = await signIn(h.base, h.serverKeys['alpha-test-key'], 'ref-out-server');
    expectError(await call(h.base, 'POST', `/players/${elsewhere.player.id}/sign-out`, { token: liveKey }), 404, 'not-found');
    expect((await me(elsewhere.accessToken)).status).toBe(200);
  });

  test('with a player token the path must say `me`', async () => {
    const signedIn = await signIn(h.base, liveKey, 'ref-out-me');
    expectError(await call(h.base, 'POST', `/players/${signedIn.player.id}/sign-out`, { token: signedIn.accessToken }), 403, 'forbidden');
    expect((await me(signedIn.accessToken)).status).toBe(200);
  });
});
