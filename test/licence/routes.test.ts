/**
 * The licence routes (docs/licence.md): a plugin activates, checks and releases its machine's seat
 * with its organisation's licence key. Every route with its refusals, the licence key refused
 * everywhere else and other credentials refused here, racing activations never past the plan's
 * seats, revocation at once, tokens verified offline with the licence key set (and not the player
 * set), rotation, and organisations kept apart: a token is bound to its organisation (its `aud`) and
 * to a product its key covers, so another organisation's token fails the check docs/licence.md gives
 * a plugin (test/support/licence.ts).
 */
import { createLocalJWKSet, jwtVerify } from 'jose';
import { LICENCE_SIGNING_KEYS, LICENCE_TOKEN_SECONDS, licenceAudienceOf, mintLicenceKey, revokeLicenceKey } from '@hearth/core/licence';
import { organisationNamed } from '@hearth/core/tenancy';
import { removeManifest } from '@hearth/core/manifests';
import { rotateSigningKey } from '@hearth/core/auth';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { eventually } from '../support/wait';
import { verifyAsPlugin } from '../support/licence';
import { NAMESPACE, environment, plan, project, serverKey, standardManifests } from '../support/manifests';

let h: Harness;
/** alpha's licence key (3 seats on its plan, product hearth-unreal), beta's (another organisation, 1 seat, product beta-tool). */
let alphaKey: string;
let betaKey: string;

/** alpha's product, which its plugin is built with, and beta's. */
const ALPHA_PRODUCT = 'hearth-unreal';
const BETA_PRODUCT = 'beta-tool';

async function licenceKeyOf(projectName: string, products = [ALPHA_PRODUCT]): Promise<string> {
  const organisation = await organisationNamed(h.db, NAMESPACE, projectName);
  return (await mintLicenceKey(h.db, organisation!.id, `${projectName}-plugin`, products)).key;
}

const activation = (machineId: string, product = ALPHA_PRODUCT) => ({ machineId, product, version: '1.2.3' });
const betaActivation = (machineId: string) => activation(machineId, BETA_PRODUCT);
/** What alpha's plugin is built with (docs/licence.md "What a plugin checks"). */
const ALPHA_PLUGIN = { audience: `hearth-licence:${NAMESPACE}/alpha`, product: ALPHA_PRODUCT };

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests({ licenceSeats: 3 }),
      plan('single-seat', { licenceSeats: 1 }),
      project('beta', { plan: 'single-seat' }),
      environment('beta-live', 'beta'),
      serverKey('beta-live-key', 'beta-live'),
    ],
  });
  alphaKey = await licenceKeyOf('alpha');
  betaKey = await licenceKeyOf('beta', [BETA_PRODUCT]);
});
afterAll(async () => {
  await h.close();
});

async function jwks() {
  const reply = await call(h.base, 'GET', '/licence/jwks.json');
  expect(reply.status).toBe(200);
  return createLocalJWKSet(reply.body);
}

describe('the licence key', () => {
  test('has a format of its own, distinguishable from server keys', () => {
    expect(alphaKey).toMatch(/^hlk_[0-9A-Za-z]{16}_[0-9A-Za-z]{40}$/);
  });

  test('is refused with forbidden on every route of an environment', async () => {
    for (const [method, path] of [
      ['GET', '/players/me'],
      ['GET', '/flags'],
      ['POST', '/auth/server'],
    ] as const) {
      const reply = await call(h.base, method, path, { token: alphaKey, body: method === 'POST' ? { subject: 'x' } : undefined });
      expectError(reply, 403, 'forbidden');
    }
  });

  test('is the only credential the licence routes take', async () => {
    const player = await signIn(h.base, h.serverKeys['alpha-live-key'], 'licence-player');
    for (const token of [h.serverKeys['alpha-live-key'], player.accessToken]) {
      expectError(await call(h.base, 'POST', '/licence/activate', { token, body: activation('m-wrong-kind') }), 403, 'forbidden');
    }
    expectError(await call(h.base, 'POST', '/licence/check', { body: { machineId: 'm' } }), 401, 'unauthorized');
    expectError(
      await call(h.base, 'POST', '/licence/release', { token: `${alphaKey.slice(0, -1)}${alphaKey.endsWith('x') ? 'y' : 'x'}`, body: { machineId: 'm' } }),
      401,
      'unauthorized',
    );
    expectError(await call(h.base, 'POST', '/licence/activate', { token: 'hlk_nonsense', body: activation('m') }), 401, 'unauthorized');
  });

  test('stays usable while the project awaits review (licence routes stay open)', async () => {
    const pendingKey = await licenceKeyOf('pending');
    const reply = await call(h.base, 'POST', '/licence/activate', { token: pendingKey, body: activation('m-pending') });
    expect(reply.status).toBe(200);
  });

  test('revoked, it is refused at once', async () => {
    const organisation = await organisationNamed(h.db, NAMESPACE, 'alpha');
    const minted = await mintLicenceKey(h.db, organisation!.id, 'short-lived', [ALPHA_PRODUCT]);
    expect((await call(h.base, 'POST', '/licence/release', { token: minted.key, body: { machineId: 'nobody' } })).status).toBe(204);
    expect(await revokeLicenceKey(h.db, h.core.bus, minted.keyId)).not.toBeNull();
    expectError(await call(h.base, 'POST', '/licence/release', { token: minted.key, body: { machineId: 'nobody' } }), 401, 'unauthorized');
    // Another key of the organisation is untouched.
    expect((await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: { machineId: 'nobody' } })).status).toBe(204);
  });

  test('a key of a project that was deleted (retired) is refused', async () => {
    await h.apply([project('short-lived')]);
    const key = await licenceKeyOf('short-lived');
    expect((await call(h.base, 'POST', '/licence/release', { token: key, body: { machineId: 'nobody' } })).status).toBe(204);
    expect((await removeManifest(h.db, { kind: 'Project', namespace: NAMESPACE, name: 'short-lived' }, h.core.bus)).action).toBe('removed');
    expectError(await call(h.base, 'POST', '/licence/release', { token: key, body: { machineId: 'nobody' } }), 401, 'unauthorized');
  });

  test('counts against the caller address, not an environment', async () => {
    const reply = await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: { machineId: 'nobody' } });
    expect(reply.status).toBe(204);
    expect(Number(reply.headers.get('x-ratelimit-limit'))).toBe(600);
  });
});

describe('activate, check, release', () => {
  test('a seat is taken once per machine; the same machine again is the same seat', async () => {
    const first = await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation('m-same') });
    expect(first.status).toBe(200);
    expect(first.body.seat).toMatchObject({ machineId: 'm-same', product: 'hearth-unreal', version: '1.2.3' });
    const again = await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: { ...activation('m-same'), version: '1.2.4' } });
    expect(again.status).toBe(200);
    expect(again.body.seat.activatedAt).toBe(first.body.seat.activatedAt);
    expect(again.body.seat.version).toBe('1.2.4');
    expect(again.body.seats).toEqual(first.body.seats);
    await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: { machineId: 'm-same' } });
  });

  test('check answers the seat and a fresh token; a machine without a seat is not-found', async () => {
    await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation('m-check') });
    const checked = await call(h.base, 'POST', '/licence/check', { token: alphaKey, body: { machineId: 'm-check' } });
    expect(checked.status).toBe(200);
    expect(checked.body.seat.machineId).toBe('m-check');
    expect(checked.body.expiresIn).toBe(LICENCE_TOKEN_SECONDS);
    const never = expectError(
      await call(h.base, 'POST', '/licence/check', { token: alphaKey, body: { machineId: 'm-never' } }),
      404,
      'not-found',
      'body.machineId',
    );
    expect(never.message).toBe('The machine "m-never" holds no seat of this licence; activate it first.');
    await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: { machineId: 'm-check' } });
  });

  test('release frees the seat; releasing twice is fine', async () => {
    await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation('m-release') });
    expect((await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: { machineId: 'm-release' } })).status).toBe(204);
    expect((await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: { machineId: 'm-release' } })).status).toBe(204);
    expectError(await call(h.base, 'POST', '/licence/check', { token: alphaKey, body: { machineId: 'm-release' } }), 404, 'not-found');
  });

  test('past the plan seats: quota-exceeded with details, and nothing changes', async () => {
    expect((await call(h.base, 'POST', '/licence/activate', { token: betaKey, body: betaActivation('b-one') })).status).toBe(200);
    const refused = expectError(await call(h.base, 'POST', '/licence/activate', { token: betaKey, body: betaActivation('b-two') }), 403, 'quota-exceeded');
    expect(refused.details).toEqual({ quota: 'licenceSeats', limit: 1 });
    expectError(await call(h.base, 'POST', '/licence/check', { token: betaKey, body: { machineId: 'b-two' } }), 404, 'not-found');
    // The seat held still checks; freed, another machine takes it.
    expect((await call(h.base, 'POST', '/licence/check', { token: betaKey, body: { machineId: 'b-one' } })).status).toBe(200);
    await call(h.base, 'POST', '/licence/release', { token: betaKey, body: { machineId: 'b-one' } });
    expect((await call(h.base, 'POST', '/licence/activate', { token: betaKey, body: betaActivation('b-two') })).status).toBe(200);
    await call(h.base, 'POST', '/licence/release', { token: betaKey, body: { machineId: 'b-two' } });
  });

  test('racing activations of different machines never take more seats than the plan gives', async () => {
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation(`race-${i}`) })),
    );
    const taken = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 403);
    expect(taken).toHaveLength(3);
    expect(refused).toHaveLength(9);
    for (const r of refused) expect(r.body.error).toBe('quota-exceeded');
    const organisation = await organisationNamed(h.db, NAMESPACE, 'alpha');
    const [{ count }] = await h.db('licence_seats').where({ project_id: organisation!.id }).count({ count: '*' });
    expect(Number(count)).toBe(3);
    for (const r of taken) await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: { machineId: r.body.seat.machineId } });
  });

  test('racing activations of one machine are one seat', async () => {
    const replies = await Promise.all(
      Array.from({ length: 8 }, () => call(h.base, 'POST', '/licence/activate', { token: betaKey, body: betaActivation('b-racer') })),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(replies.every((r) => r.body.seats.used === 1)).toBe(true);
    await call(h.base, 'POST', '/licence/release', { token: betaKey, body: { machineId: 'b-racer' } });
  });

  test('bad bodies are refused naming the field, and change nothing', async () => {
    expectError(await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: { machineId: 'm' } }), 400, 'invalid-request', 'body.product');
    expectError(await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: { ...activation('m'), extra: 1 } }), 400, 'invalid-request');
    expectError(await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation('has space') }), 400, 'invalid-request', 'body.machineId');
    expectError(
      await call(h.base, 'POST', '/licence/check', { token: alphaKey, body: { machineId: 'x'.repeat(129) } }),
      400,
      'invalid-request',
      'body.machineId',
    );
    expectError(await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: {} }), 400, 'invalid-request', 'body.machineId');
    expectError(
      await call(h.base, 'POST', '/licence/check', {
        token: alphaKey,
        body: { machineId: 'm' },
        headers: { 'Content-Length': String(16 * 1024 + 1) },
        rawBody: 'x'.repeat(16 * 1024 + 1),
      }),
      413,
      'payload-too-large',
    );
    const organisation = await organisationNamed(h.db, NAMESPACE, 'alpha');
    expect(await h.db('licence_seats').where({ project_id: organisation!.id, machine_id: 'm' }).first()).toBeUndefined();
  });

  test('organisations are kept apart: one machine id is a seat in each, and one cannot release the other', async () => {
    expect((await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation('shared-machine') })).status).toBe(200);
    expect((await call(h.base, 'POST', '/licence/release', { token: betaKey, body: { machineId: 'shared-machine' } })).status).toBe(204);
    expect((await call(h.base, 'POST', '/licence/check', { token: alphaKey, body: { machineId: 'shared-machine' } })).status).toBe(200);
    expectError(await call(h.base, 'POST', '/licence/check', { token: betaKey, body: { machineId: 'shared-machine' } }), 404, 'not-found');
    const beta = await call(h.base, 'POST', '/licence/activate', { token: betaKey, body: betaActivation('shared-machine') });
    expect(beta.body.seats).toEqual({ used: 1, limit: 1 });
    await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: { machineId: 'shared-machine' } });
    await call(h.base, 'POST', '/licence/release', { token: betaKey, body: { machineId: 'shared-machine' } });
  });
});

describe('licence tokens', () => {
  test('verify offline with the licence key set, and say machine, organisation and product', async () => {
    const reply = await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation('m-token') });
    const { payload, protectedHeader } = await jwtVerify(reply.body.token, await jwks(), { audience: ALPHA_PLUGIN.audience, algorithms: ['EdDSA'] });
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', kid: expect.any(String), typ: 'licence+jwt' });
    // One audience, the organisation's own: not an array that also holds a deployment-wide one.
    expect(payload).toMatchObject({
      aud: `hearth-licence:${NAMESPACE}/alpha`,
      sub: 'm-token',
      org: `${NAMESPACE}/alpha`,
      product: 'hearth-unreal',
      type: 'licence',
    });
    expect(licenceAudienceOf({ namespace: NAMESPACE, name: 'alpha' })).toBe(payload.aud);
    // The check docs/licence.md gives a plugin passes for alpha's own token.
    expect(await verifyAsPlugin(reply.body.token, await jwks(), ALPHA_PLUGIN, 'm-token')).toMatchObject({ sub: 'm-token' });
    expect(payload.exp! - payload.iat!).toBe(LICENCE_TOKEN_SECONDS);
    await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: { machineId: 'm-token' } });
  });

  test('are signed by keys apart from the player tokens: neither set verifies the other', async () => {
    const licence = await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation('m-apart') });
    const playerSet = createLocalJWKSet((await call(h.base, 'GET', '/.well-known/jwks.json')).body);
    await expect(jwtVerify(licence.body.token, playerSet)).rejects.toThrow();
    const player = await signIn(h.base, h.serverKeys['alpha-live-key'], 'licence-apart');
    await expect(jwtVerify(player.accessToken, await jwks())).rejects.toThrow();
    // Nor is a licence token a credential of the API.
    expectError(await call(h.base, 'GET', '/players/me', { token: licence.body.token }), 401, 'unauthorized');
    await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: { machineId: 'm-apart' } });
  });

  test('rotation: new tokens are signed by the new key, old ones still verify until they expire', async () => {
    const before = await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation('m-rotate') });
    const playerKids = (await call(h.base, 'GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
    const rotated = await rotateSigningKey(h.db, h.masterKey, LICENCE_SIGNING_KEYS);
    await h.core.bus.announce({ kind: 'signing-keys' });
    let set: { keys: { kid: string }[] } = { keys: [] };
    await eventually(
      async () => {
        set = (await call(h.base, 'GET', '/licence/jwks.json')).body;
        return set.keys[0]?.kid === rotated.kid;
      },
      2500,
      50,
    );
    expect(set.keys.map((k) => k.kid)).toEqual([rotated.kid, ...rotated.retired]);
    const after = await call(h.base, 'POST', '/licence/check', { token: alphaKey, body: { machineId: 'm-rotate' } });
    const keySet = createLocalJWKSet(set as never);
    const old = await jwtVerify(before.body.token, keySet, { audience: ALPHA_PLUGIN.audience });
    const fresh = await jwtVerify(after.body.token, keySet, { audience: ALPHA_PLUGIN.audience });
    expect(old.protectedHeader.kid).toBe(rotated.retired[0]);
    expect(fresh.protectedHeader.kid).toBe(rotated.kid);
    // The player tokens' keys were not rotated.
    expect((await call(h.base, 'GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid)).toEqual(playerKids);
    await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: { machineId: 'm-rotate' } });
  });
});

describe('a licence token is worth nothing to another organisation', () => {
  const VICTIM = 'victim-machine';
  const BETA_PLUGIN = { audience: `hearth-licence:${NAMESPACE}/beta`, product: BETA_PRODUCT };

  async function seatsOf(projectName: string, machineId: string) {
    const organisation = await organisationNamed(h.db, NAMESPACE, projectName);
    return h.db('licence_seats').where({ project_id: organisation!.id, machine_id: machineId });
  }

  test("the reproduction: beta's key naming alpha's product and a victim's machine is refused, and takes no seat", async () => {
    const refused = expectError(
      await call(h.base, 'POST', '/licence/activate', { token: betaKey, body: activation(VICTIM, ALPHA_PRODUCT) }),
      403,
      'forbidden',
      'body.product',
    );
    expect(refused.message).toContain(`"${ALPHA_PRODUCT}"`);
    expect(await seatsOf('beta', VICTIM)).toEqual([]);
    expect(await seatsOf('alpha', VICTIM)).toEqual([]);
  });

  test("a token beta's key legitimately gets fails alpha's plugin check: another audience, another product", async () => {
    const reply = await call(h.base, 'POST', '/licence/activate', { token: betaKey, body: betaActivation(VICTIM) });
    expect(reply.status).toBe(200);
    const keys = await jwks();
    // alpha's audience is not the token's: jose refuses it, as alpha's plugin does.
    await expect(jwtVerify(reply.body.token, keys, { audience: ALPHA_PLUGIN.audience, algorithms: ['EdDSA'] })).rejects.toThrow(/"aud"/);
    await expect(verifyAsPlugin(reply.body.token, keys, ALPHA_PLUGIN, VICTIM)).rejects.toThrow(/"aud"/);
    // Nor does the deployment-wide audience of before pass any token.
    await expect(jwtVerify(reply.body.token, keys, { audience: 'hearth-licence' })).rejects.toThrow(/"aud"/);
    // With the audience set aside, alpha's product check still fails it.
    const { payload } = await jwtVerify(reply.body.token, keys, { audience: BETA_PLUGIN.audience });
    expect(payload.product).toBe(BETA_PRODUCT);
    await expect(verifyAsPlugin(reply.body.token, keys, { ...BETA_PLUGIN, product: ALPHA_PRODUCT }, VICTIM)).rejects.toThrow(/product/);
    // It is beta's own licence, good for beta's plugin on that machine.
    expect(await verifyAsPlugin(reply.body.token, keys, BETA_PLUGIN, VICTIM)).toMatchObject({ sub: VICTIM, org: `${NAMESPACE}/beta` });
    await call(h.base, 'POST', '/licence/release', { token: betaKey, body: { machineId: VICTIM } });
  });

  test("a product of the same name as alpha's, covered by a key of beta's, still gives nothing alpha's plugin accepts", async () => {
    // Product names belong to no one: beta may name its own product as alpha named its.
    const sameName = await licenceKeyOf('beta', [ALPHA_PRODUCT]);
    const reply = await call(h.base, 'POST', '/licence/activate', { token: sameName, body: activation(VICTIM, ALPHA_PRODUCT) });
    expect(reply.status).toBe(200);
    await expect(verifyAsPlugin(reply.body.token, await jwks(), ALPHA_PLUGIN, VICTIM)).rejects.toThrow(/"aud"/);
    await call(h.base, 'POST', '/licence/release', { token: sameName, body: { machineId: VICTIM } });
  });

  test("alpha's own token passes alpha's plugin check, and only on the machine it names", async () => {
    const reply = await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation(VICTIM) });
    const keys = await jwks();
    expect(await verifyAsPlugin(reply.body.token, keys, ALPHA_PLUGIN, VICTIM)).toMatchObject({
      aud: ALPHA_PLUGIN.audience,
      sub: VICTIM,
      product: ALPHA_PRODUCT,
      type: 'licence',
    });
    await expect(verifyAsPlugin(reply.body.token, keys, ALPHA_PLUGIN, 'another-machine')).rejects.toThrow(/"sub"/);
    await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: { machineId: VICTIM } });
  });
});

describe('the products a licence key covers', () => {
  test('a product the key does not cover is forbidden naming body.product; the seat held keeps its product', async () => {
    const first = await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation('m-product') });
    expect(first.status).toBe(200);
    expectError(
      await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation('m-product', 'not-covered') }),
      403,
      'forbidden',
      'body.product',
    );
    expectError(
      await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation('m-other', 'not-covered') }),
      403,
      'forbidden',
      'body.product',
    );
    const checked = await call(h.base, 'POST', '/licence/check', { token: alphaKey, body: { machineId: 'm-product' } });
    expect(checked.body.seat.product).toBe(ALPHA_PRODUCT);
    expect(checked.body.seats).toEqual(first.body.seats);
    const organisation = await organisationNamed(h.db, NAMESPACE, 'alpha');
    expect(await h.db('licence_seats').where({ project_id: organisation!.id, machine_id: 'm-other' }).first()).toBeUndefined();
    await call(h.base, 'POST', '/licence/release', { token: alphaKey, body: { machineId: 'm-product' } });
  });

  test('a key covering several products gives each machine a token for the product it activated', async () => {
    const both = await licenceKeyOf('alpha', [ALPHA_PRODUCT, 'hearth-unity']);
    const reply = await call(h.base, 'POST', '/licence/activate', { token: both, body: activation('m-unity', 'hearth-unity') });
    expect(reply.status).toBe(200);
    const keys = await jwks();
    expect(await verifyAsPlugin(reply.body.token, keys, { ...ALPHA_PLUGIN, product: 'hearth-unity' }, 'm-unity')).toMatchObject({ product: 'hearth-unity' });
    await expect(verifyAsPlugin(reply.body.token, keys, ALPHA_PLUGIN, 'm-unity')).rejects.toThrow(/product/);
    await call(h.base, 'POST', '/licence/release', { token: both, body: { machineId: 'm-unity' } });
  });

  test("check with a key that does not cover the seat's product is forbidden and notes no check; any key of the organisation releases", async () => {
    const other = await licenceKeyOf('alpha', ['alpha-other-tool']);
    expect((await call(h.base, 'POST', '/licence/activate', { token: alphaKey, body: activation('m-cover') })).status).toBe(200);
    const organisation = await organisationNamed(h.db, NAMESPACE, 'alpha');
    const before = await h.db('licence_seats').where({ project_id: organisation!.id, machine_id: 'm-cover' }).first();
    const refused = expectError(await call(h.base, 'POST', '/licence/check', { token: other, body: { machineId: 'm-cover' } }), 403, 'forbidden');
    expect(refused.message).toContain(`"${ALPHA_PRODUCT}"`);
    const after = await h.db('licence_seats').where({ project_id: organisation!.id, machine_id: 'm-cover' }).first();
    expect(after.checked_at).toEqual(before.checked_at);
    expect((await call(h.base, 'POST', '/licence/check', { token: alphaKey, body: { machineId: 'm-cover' } })).status).toBe(200);
    // A seat is the organisation's: freeing it needs no product.
    expect((await call(h.base, 'POST', '/licence/release', { token: other, body: { machineId: 'm-cover' } })).status).toBe(204);
    expectError(await call(h.base, 'POST', '/licence/check', { token: alphaKey, body: { machineId: 'm-cover' } }), 404, 'not-found');
  });

  test('a key is minted covering 1 to 32 well-formed products, each once', async () => {
    const organisation = await organisationNamed(h.db, NAMESPACE, 'alpha');
    const mint = (products: string[]) => mintLicenceKey(h.db, organisation!.id, 'bad-products', products);
    for (const products of [[], ['has space'], ['x'.repeat(65)], ['twice', 'twice'], Array.from({ length: 33 }, (_, i) => `p${i}`)]) {
      await expect(mint(products)).rejects.toMatchObject({ code: 'invalid-request', details: { field: 'products' } });
    }
    expect(await h.db('licence_keys').where({ name: 'bad-products' })).toEqual([]);
    expect((await mint(Array.from({ length: 32 }, (_, i) => `p${i}`))).products).toHaveLength(32);
  });
});
