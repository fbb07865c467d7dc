/**
 * Server keys (spec §5.3; docs/api-conventions.md, Credentials): one environment per key, hash-only storage, revocation
 * felt by every API process within moments, last use written once an hour, the plan's live-key limit.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Refusal } from '@hearth/core';
import { mintServerKey, revokeServerKey, SERVER_KEY_PREFIX } from '@hearth/core/auth';
import { type ApiInstance, type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { environment, plan, project, serverKey, standardManifests } from '../support/manifests';
import { eventually, poolSettled } from '../support/wait';

let h: Harness;
let other: ApiInstance;

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      // A plan with room for only three live keys, and two empty environments under it.
      plan('three-keys', { serverKeysPerEnvironment: 3 }),
      project('keys', { plan: 'three-keys' }),
      environment('keys-a', 'keys'),
      environment('keys-b', 'keys'),
    ],
  });
  other = await h.startAnotherApi();
});
afterAll(async () => {
  await h.close();
});

const keyIdOf = (key: string) => key.split('_')[1];

async function environmentId(appKey: string): Promise<number> {
  const env = await h.core.environments.byAppKey(appKey);
  if (!env) throw new Error(`no environment ${appKey}`);
  return env.id;
}

async function mint(appKey: string, name: string, limit = 5) {
  const envId = await environmentId(appKey);
  return mintServerKey(h.db, envId, name, limit);
}

async function liveKeys(appKey: string): Promise<number> {
  const [{ count }] = await h
    .db('server_keys')
    .where({ environment_id: await environmentId(appKey) })
    .whereNull('revoked_at')
    .count({ count: '*' });
  return Number(count);
}

describe('a key acts only in its environment', () => {
  test('a key of alpha-test cannot read, rename, sign out or delete a player of alpha-live', async () => {
    const live = await signIn(h.base, h.serverKeys['alpha-live-key'], 'env-bound-1', 'Livia');
    const testKey = h.serverKeys['alpha-test-key'];
    const path = `/players/${live.player.id}`;

    expectError(await call(h.base, 'GET', path, { token: testKey }), 404, 'not-found');
    expectError(await call(h.base, 'PATCH', path, { token: testKey, body: { displayName: 'Hijacked' } }), 404, 'not-found');
    expectError(await call(h.base, 'POST', `${path}/sign-out`, { token: testKey }), 404, 'not-found');
    expectError(await call(h.base, 'DELETE', path, { token: testKey }), 404, 'not-found');

    // Nothing changed: the player is still there, named as before, and its token still works.
    const read = await call(h.base, 'GET', path, { token: h.serverKeys['alpha-live-key'] });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(live.player);
    expect((await call(h.base, 'GET', '/players/me', { token: live.accessToken })).status).toBe(200);
  });

  test('the same subject signed in with each key is two players, one per environment', async () => {
    const live = await signIn(h.base, h.serverKeys['alpha-live-key'], 'env-bound-2');
    const inTest = await call(h.base, 'POST', '/auth/server', { token: h.serverKeys['alpha-test-key'], body: { subject: 'env-bound-2' } });
    expect(inTest.status).toBe(201);
    expect(inTest.body.player.id).not.toBe(live.player.id);
    const rows = await h.db('players').whereIn('id', [live.player.id, inTest.body.player.id]).select('id', 'environment_id');
    const byId = Object.fromEntries(rows.map((r) => [r.id, Number(r.environment_id)]));
    expect(byId[live.player.id]).toBe(await environmentId('alpha-live'));
    expect(byId[inTest.body.player.id]).toBe(await environmentId('alpha-test'));
  });
});

describe('keys that are not good are unauthorized', () => {
  const good = () => h.serverKeys['alpha-live-key'];
  const cases: Array<[string, () => string]> = [
    ['the bare prefix', () => SERVER_KEY_PREFIX],
    ['a key id too short', () => `hsk_abc_${'a'.repeat(40)}`],
    ['a secret one character short', () => good().slice(0, -1)],
    ['a secret one character long', () => `${good()}x`],
    ['a character outside the alphabet', () => `${good().slice(0, -1)}-`],
    ['a different prefix', () => `hsx_${good().slice(4)}`],
    ['an unknown key id', () => `hsk_${'Z'.repeat(16)}_${'a'.repeat(40)}`],
    ['a known key id with another secret', () => `hsk_${keyIdOf(good())}_${'b'.repeat(40)}`],
    ['a JWT-looking string', () => 'aaa.bbb.ccc'],
  ];
  test.each(cases)('%s → 401 unauthorized', async (_label, key) => {
    expectError(await call(h.base, 'POST', '/auth/server', { token: key(), body: { subject: 'never-made' } }), 401, 'unauthorized');
    expectError(await call(h.base, 'GET', '/players/me', { token: key() }), 401, 'unauthorized');
  });

  test('no credential, or not a Bearer one → 401 unauthorized; nothing was made', async () => {
    expectError(await call(h.base, 'POST', '/auth/server', { body: { subject: 'never-made' } }), 401, 'unauthorized');
    expectError(
      await call(h.base, 'POST', '/auth/server', { headers: { Authorization: `Basic ${good()}` }, body: { subject: 'never-made' } }),
      401,
      'unauthorized',
    );
    expect(await h.db('player_identities').where({ subject: 'never-made' }).first()).toBeUndefined();
  });
});

describe('revocation', () => {
  test('a revoked key is refused at once here and within moments on another API process', async () => {
    const minted = await mint('alpha-live', 'to-revoke');
    // Both processes have the key cached as good.
    expect((await call(h.base, 'POST', '/auth/server', { token: minted.key, body: { subject: 'rev-1' } })).status).toBe(201);
    expect((await call(other.base, 'POST', '/auth/server', { token: minted.key, body: { subject: 'rev-1' } })).status).toBe(200);

    // What `hearth keys revoke` calls: it revokes, and announces once that commits.
    expect(await revokeServerKey(h.db, h.core.bus, minted.keyId)).toMatchObject({ keyId: minted.keyId, revokedAt: expect.any(String) });

    expectError(await call(h.base, 'GET', '/players/me', { token: minted.key }), 401, 'unauthorized');
    // The other process's cache lives 5 s; the announcement must beat it by far.
    const tookMs = await eventually(async () => (await call(other.base, 'GET', '/players/me', { token: minted.key })).status === 401, 1500);
    expect(tookMs).toBeLessThan(1500);
    expectError(await call(other.base, 'POST', '/auth/server', { token: minted.key, body: { subject: 'rev-2' } }), 401, 'unauthorized');
    expect(await h.db('player_identities').where({ subject: 'rev-2' }).first()).toBeUndefined();

    // Revoking again finds no live key; other keys of the environment are untouched.
    expect(await revokeServerKey(h.db, h.core.bus, minted.keyId)).toBeNull();
    expect((await call(other.base, 'POST', '/auth/server', { token: h.serverKeys['alpha-live-key'], body: { subject: 'rev-1' } })).status).toBe(200);
  });
});

describe('storage', () => {
  test('only the SHA-256 of the secret is stored, never the secret or the whole key', async () => {
    const minted = await mint('alpha-test', 'hash-only');
    const secret = minted.key.split('_')[2];
    expect(minted.key).toMatch(/^hsk_[0-9A-Za-z]{16}_[0-9A-Za-z]{40}$/);
    const row = await h.db('server_keys').where({ key_id: minted.keyId }).first();
    expect(Buffer.compare(row.secret_hash, createHash('sha256').update(secret).digest())).toBe(0);
    expect(row.secret_hint).toBe(secret.slice(-4));
    for (const [column, value] of Object.entries(row)) {
      const text = Buffer.isBuffer(value) ? value.toString('latin1') + value.toString('hex') + value.toString('base64') : String(value);
      expect({ column, hasSecret: text.includes(secret) || text.includes(minted.key) }).toEqual({ column, hasSecret: false });
    }
    await revokeServerKey(h.db, h.core.bus, minted.keyId);
  });

  test('last use is written once (to within an hour), not on every request, whichever process serves', async () => {
    const minted = await mint('alpha-test', 'last-use');
    const lastUsed = async () => (await h.db('server_keys').where({ key_id: minted.keyId }).first('last_used_at')).last_used_at as Date | null;
    expect(await lastUsed()).toBeNull();

    // Both processes share this knex instance: count every statement that touches the key's row.
    const updates: string[] = [];
    const onQuery = (q: { sql: string }) => {
      if (/^update "server_keys"/i.test(q.sql)) updates.push(q.sql);
    };
    h.db.on('query', onQuery);
    const use = (base: string) => call(base, 'POST', '/auth/server', { token: minted.key, body: { subject: 'last-use-1' } });
    const first = await Promise.all([use(h.base), use(h.base), use(other.base), use(other.base)]);
    expect(first.map((r) => r.status).sort()).toEqual([200, 200, 200, 201]);
    await eventually(async () => (await lastUsed()) !== null, 2000);
    const written = (await lastUsed())!;
    expect(Math.abs(written.getTime() - Date.now())).toBeLessThan(60_000);
    await poolSettled(h.db); // the other process's write, if it made one, has landed too
    // At most one write per process (the second is a no-op in the database, guarded by the hour).
    expect(updates.length).toBeGreaterThanOrEqual(1);
    expect(updates.length).toBeLessThanOrEqual(2);
    updates.length = 0;

    for (let i = 0; i < 5; i++) {
      expect((await use(h.base)).status).toBe(200);
      expect((await use(other.base)).status).toBe(200);
    }
    await poolSettled(h.db); // the write is off the request's path, started before the answer: any stray one has landed
    h.db.removeListener('query', onQuery);
    expect(updates).toEqual([]);
    expect((await lastUsed())!.getTime()).toBe(written.getTime());
    await revokeServerKey(h.db, h.core.bus, minted.keyId);
  });
});

describe("the plan's live-key limit", () => {
  test('past the limit mintServerKey throws quota-exceeded; revoked keys do not count', async () => {
    const limit = (await h.core.environments.byAppKey('keys-a'))!.plan.serverKeysPerEnvironment;
    expect(limit).toBe(3);
    const keys = [];
    for (let i = 0; i < limit; i++) keys.push(await mint('keys-a', `k${i}`, limit));

    const refused = await mint('keys-a', 'one-too-many', limit).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(Refusal);
    expect(refused).toMatchObject({ code: 'quota-exceeded', details: { quota: 'serverKeysPerEnvironment', limit: 3 } });
    expect(await liveKeys('keys-a')).toBe(3);
    expect(await h.db('server_keys').where({ name: 'one-too-many' }).first()).toBeUndefined();

    // Another environment of the same plan has its own count.
    const elsewhere = await mint('keys-b', 'elsewhere', limit);
    await revokeServerKey(h.db, h.core.bus, elsewhere.keyId);

    await revokeServerKey(h.db, h.core.bus, keys[0].keyId);
    const again = await mint('keys-a', 'after-revoke', limit);
    expect(again.key.startsWith(SERVER_KEY_PREFIX)).toBe(true);
    expect(await liveKeys('keys-a')).toBe(3);
    await expect(mint('keys-a', 'still-too-many', limit)).rejects.toMatchObject({ code: 'quota-exceeded' });

    // Applying a ServerKey manifest past the limit is refused the same way, and applies nothing.
    await expect(h.apply([serverKey('keys-a-manifest', 'keys-a')])).rejects.toThrow(/3 live server keys/);
    expect(await liveKeys('keys-a')).toBe(3);
  });

  test('concurrent mints at the limit never pass it', async () => {
    const limit = 3;
    // keys-b holds no live key now (the one made above was revoked).
    expect(await liveKeys('keys-b')).toBe(0);
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => mint('keys-b', `race-${i}-${randomBytes(2).toString('hex')}`, limit)));
    const made = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(made).toHaveLength(limit);
    expect(refused).toHaveLength(10 - limit);
    for (const r of refused) expect(r.reason).toMatchObject({ code: 'quota-exceeded' });
    expect(await liveKeys('keys-b')).toBe(limit);
  });
});
