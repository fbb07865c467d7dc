/**
 * Licence keys made the two ways staff make them: `hearth licence-keys create|list|revoke` as a real
 * subprocess, and a LicenceKey document applied (minted once, refused a move, deleted). Either key works on
 * the licence routes at once and is refused there at once when revoked, and covers the products it
 * was made with (`--product`, `spec.products`) and no other.
 */
import { API_VERSION, type AnyManifest, ManifestError, applyManifests, removeManifest, validateManifest } from '@hearth/core/manifests';
import { mintLicenceKey } from '@hearth/core/licence';
import { organisationNamed } from '@hearth/core/tenancy';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { NAMESPACE, standardManifests } from '../support/manifests';
import { oneLine, runHearth } from '../cli/run-hearth';
import { eventually } from '../support/wait';

jest.setTimeout(120_000); // the CLI steps start a process each

let h: Harness;
let vars: Record<string, string>;

beforeAll(async () => {
  h = await startHarness({ manifests: standardManifests() });
  // With the harness's Redis and prefix, the commands' announcements reach its API at once.
  vars = { DATABASE_URL: h.database.url, REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', REDIS_PREFIX: h.redisPrefix };
});
afterAll(async () => {
  await h.close();
});

/** Applies documents as `hearth apply` does, answering what each did (with a minted key, this once). */
const apply = (docs: unknown[]) =>
  applyManifests(
    h.db,
    docs.map((doc, i) => ({ doc: validateManifest(doc, `test#${i + 1}`) as AnyManifest, origin: `test#${i + 1}` })),
    h.core.bus,
  );

const release = (token: string) => call(h.base, 'POST', '/licence/release', { token, body: { machineId: 'keys-test' } });

describe('hearth licence-keys', () => {
  test('create prints the whole key once; list shows a hint of it; revoke refuses it at once', async () => {
    const created = await runHearth(
      [
        'licence-keys',
        'create',
        '--project',
        'alpha',
        '--namespace',
        NAMESPACE,
        '--name',
        'editor plugin',
        '--product',
        'editor',
        '--product',
        'editor-pro',
        '--json',
      ],
      vars,
    );
    expect(created.code).toBe(0);
    const minted = JSON.parse(created.stdout);
    expect(minted).toEqual({
      keyId: expect.any(String),
      key: expect.stringMatching(/^hlk_[0-9A-Za-z]{16}_[0-9A-Za-z]{40}$/),
      project: `${NAMESPACE}/alpha`,
      name: 'editor plugin',
      products: ['editor', 'editor-pro'],
      audience: `hearth-licence:${NAMESPACE}/alpha`,
    });
    expect(minted.key.startsWith(`hlk_${minted.keyId}_`)).toBe(true);
    expect((await release(minted.key)).status).toBe(204);
    // It activates the products it was made for, and no other.
    const activate = (product: string) =>
      call(h.base, 'POST', '/licence/activate', { token: minted.key, body: { machineId: 'keys-test', product, version: '1' } });
    expect((await activate('editor-pro')).status).toBe(200);
    expectError(await activate('runtime'), 403, 'forbidden', 'body.product');
    expect((await release(minted.key)).status).toBe(204);

    const listed = await runHearth(['licence-keys', 'list', '--project', 'alpha', '--namespace', NAMESPACE, '--json'], vars);
    expect(listed.code).toBe(0);
    const { keys, audience } = JSON.parse(listed.stdout);
    expect(audience).toBe(`hearth-licence:${NAMESPACE}/alpha`);
    expect(keys).toEqual([
      expect.objectContaining({
        keyId: minted.keyId,
        name: 'editor plugin',
        products: ['editor', 'editor-pro'],
        secretHint: minted.key.slice(-4),
        revokedAt: null,
      }),
    ]);
    expect(listed.stdout).not.toContain(minted.key);
    const text = await runHearth(['licence-keys', 'list', '--project', 'alpha', '--namespace', NAMESPACE], vars);
    expect(text.stdout).toMatch(/^KEY ID +NAME +PRODUCTS +SECRET/);
    expect(text.stdout).toContain('editor,editor-pro');

    // The whole key pasted instead of its id: refused without printing it back, nothing revoked.
    const pasted = await runHearth(['licence-keys', 'revoke', minted.key], vars);
    expect(pasted.code).toBe(1);
    expect(oneLine(pasted.stderr)).toBe(
      `hearth: that is a whole key, not its id (a secret: not printed back here); revoke it by its id: hearth licence-keys revoke ${minted.keyId}`,
    );
    expect(pasted.stderr).not.toContain(minted.key.split('_')[2]);
    const revoked = await runHearth(['licence-keys', 'revoke', minted.keyId, '--json'], vars);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ keyId: minted.keyId, revokedAt: expect.any(String) });
    const after = JSON.parse((await runHearth(['licence-keys', 'list', '--project', 'alpha', '--namespace', NAMESPACE, '--json'], vars)).stdout);
    expect(after.keys[0].revokedAt).toEqual(expect.any(String));
    // Announced: the API refuses it without waiting for its cache to expire (5 s).
    await eventually(async () => (await release(minted.key)).status === 401, 2000);
  });

  test('create without --product, or with a product that is not one, is refused and mints nothing', async () => {
    const create = (...extra: string[]) =>
      runHearth(['licence-keys', 'create', '--project', 'alpha', '--namespace', NAMESPACE, '--name', 'no-products', ...extra], vars);
    const none = await create();
    expect(none.code).not.toBe(0);
    expect(none.stderr.trim().split('\n').pop()).toMatch(/--product is required/);
    const spaced = await create('--product', 'two words');
    expect(spaced.code).not.toBe(0);
    expect(spaced.stderr.trim().split('\n').pop()).toMatch(/^hearth: invalid-request \(--product\): product "two words" is not a product name/);
    const twice = await create('--product', 'same', '--product', 'same');
    expect(twice.code).not.toBe(0);
    expect(twice.stderr).toMatch(/invalid-request \(--product\): product "same" is named twice/);
    expect(await h.db('licence_keys').where({ name: 'no-products' })).toEqual([]);
  });

  test('failures are one line and non-zero', async () => {
    const noProject = await runHearth(['licence-keys', 'create', '--project', 'nope', '--namespace', NAMESPACE, '--name', 'x', '--product', 'p'], vars);
    expect(noProject.code).not.toBe(0);
    expect(noProject.stderr.trim().split('\n').pop()).toMatch(/no project "nope"/);
    const noKey = await runHearth(['licence-keys', 'revoke', '0000000000000000'], vars);
    expect(noKey.code).not.toBe(0);
    expect(noKey.stderr).toMatch(/no live licence key/);
  });
});

describe('hearth licence seats|release', () => {
  test('lists the machines holding seats, and frees one as the route does', async () => {
    const organisation = await organisationNamed(h.db, NAMESPACE, 'plain');
    const key = (await mintLicenceKey(h.db, organisation!.id, 'seats-test', ['plugin'])).key;
    for (const machineId of ['desk-1', 'desk-2']) {
      expect((await call(h.base, 'POST', '/licence/activate', { token: key, body: { machineId, product: 'plugin', version: '2.0' } })).status).toBe(200);
    }
    const project = ['--project', 'plain', '--namespace', NAMESPACE];
    const listed = await runHearth(['licence', 'seats', ...project, '--json'], vars);
    expect(listed.code).toBe(0);
    const before = JSON.parse(listed.stdout);
    expect(before).toMatchObject({ project: `${NAMESPACE}/plain`, limit: 2 });
    expect(before.seats.map((s: { machineId: string }) => s.machineId)).toEqual(['desk-1', 'desk-2']);
    const text = await runHearth(['licence', 'seats', ...project], vars);
    expect(text.stdout).toMatch(/^2 of 2 seats taken in tests\/plain\nMACHINE +PRODUCT +VERSION/);

    const released = await runHearth(['licence', 'release', ...project, '--machine', 'desk-1', '--json'], vars);
    expect(JSON.parse(released.stdout)).toEqual({ project: `${NAMESPACE}/plain`, machineId: 'desk-1', released: true });
    expectError(await call(h.base, 'POST', '/licence/check', { token: key, body: { machineId: 'desk-1' } }), 404, 'not-found');
    const again = await runHearth(['licence', 'release', ...project, '--machine', 'desk-1', '--json'], vars);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).released).toBe(false);
    // The freed seat is another machine's to take.
    expect((await call(h.base, 'POST', '/licence/activate', { token: key, body: { machineId: 'desk-3', product: 'plugin', version: '2.0' } })).status).toBe(
      200,
    );
  });
});

describe('hearth signing-keys rotate --key-set licence', () => {
  test("rotates the licence tokens' keys only; the licence key set publishes both, the new first", async () => {
    const playerBefore = (await call(h.base, 'GET', '/.well-known/jwks.json')).body.keys;
    const [old] = (await call(h.base, 'GET', '/licence/jwks.json')).body.keys;
    const run = await runHearth(['signing-keys', 'rotate', '--key-set', 'licence', '--json'], { ...vars, HEARTH_MASTER_KEY: h.masterKey.toString('hex') });
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toEqual({ kid: expect.any(String), retired: [old.kid] });
    const rows = await h.db('signing_keys').where({ key_set: 'licence' }).orderBy('created_at');
    expect(rows.map((r) => [r.kid, r.retired_at === null])).toEqual([
      [old.kid, false],
      [result.kid, true],
    ]);
    // The command announces the rotation; the API's ring reloads on hearing it.
    let kids: string[] = [];
    await eventually(
      async () => {
        kids = (await call(h.base, 'GET', '/licence/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
        return kids[0] === result.kid;
      },
      2000,
      50,
    );
    expect(kids).toEqual([result.kid, old.kid]);
    expect((await call(h.base, 'GET', '/.well-known/jwks.json')).body.keys).toEqual(playerBefore);
  });

  test('a project not in the namespace asked (default without --namespace) but in another: the line says which --namespace', async () => {
    const run = await runHearth(['licence-keys', 'list', '--project', 'alpha'], vars);
    expect(run.code).toBe(1);
    expect(oneLine(run.stderr)).toBe(`hearth: no project "alpha" in namespace "default"; it is in --namespace ${NAMESPACE}`);
    const nowhere = await runHearth(['licence-keys', 'list', '--project', 'nowhere'], vars);
    expect(oneLine(nowhere.stderr)).toBe('hearth: no project "nowhere" in namespace "default"');
  });

  test('a key set it does not know is one line and non-zero', async () => {
    const run = await runHearth(['signing-keys', 'rotate', '--key-set', 'dashboard'], { ...vars, HEARTH_MASTER_KEY: h.masterKey.toString('hex') });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/--key-set must be player or licence/);
  });
});

describe('a LicenceKey document', () => {
  const doc = (project: string, products = ['plugin']) => ({
    apiVersion: API_VERSION,
    kind: 'LicenceKey',
    metadata: { name: 'plugin-licence', namespace: NAMESPACE },
    spec: { project, products },
  });
  const activate = (key: string, product: string) =>
    call(h.base, 'POST', '/licence/activate', { token: key, body: { machineId: 'keys-test', product, version: '1' } });

  test('mints its key once, is unchanged when applied again, and is revoked when deleted', async () => {
    const first = await apply([doc('alpha')]);
    const minted = first[0].licenceKey!;
    expect(minted.key).toMatch(/^hlk_/);
    expect((await release(minted.key)).status).toBe(204);
    const again = await apply([doc('alpha')]);
    expect(again[0]).toMatchObject({ action: 'unchanged' });
    expect(again[0].licenceKey).toBeUndefined();

    const removed = await removeManifest(h.db, { kind: 'LicenceKey', namespace: NAMESPACE, name: 'plugin-licence' }, h.core.bus);
    expect(removed.action).toBe('removed');
    expectError(await release(minted.key), 401, 'unauthorized');
  });

  test('pointed at another project: refused, saying how a key moves; the live key keeps working', async () => {
    const [first] = await apply([doc('alpha')]);
    const key = first.licenceKey!.key;
    const err = await apply([doc('plain')]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ManifestError);
    expect([(err as ManifestError).field, (err as ManifestError).reason]).toEqual([
      'spec.project',
      'is immutable: it names an identity; a key does not move: create a LicenceKey for the other project, ship its key, then delete this one (it is "alpha")',
    ]);
    expect((await activate(key, 'plugin')).body.seat).toMatchObject({ machineId: 'keys-test', product: 'plugin' });
    expect((await release(key)).status).toBe(204);
    await removeManifest(h.db, { kind: 'LicenceKey', namespace: NAMESPACE, name: 'plugin-licence' }, h.core.bus);
  });

  test('covers spec.products; changed, the same key covers the new list at once', async () => {
    const [first] = await apply([doc('alpha', ['plugin'])]);
    const key = first.licenceKey!.key;
    expect((await activate(key, 'plugin')).status).toBe(200);
    expectError(await activate(key, 'plugin-pro'), 403, 'forbidden', 'body.product');

    const [changed] = await apply([doc('alpha', ['plugin-pro', 'plugin-lite'])]);
    expect(changed).toMatchObject({ action: 'updated' });
    expect(changed.licenceKey).toBeUndefined();
    // The old product is covered no more: the seat held for it does not check, nor activates again.
    expectError(await call(h.base, 'POST', '/licence/check', { token: key, body: { machineId: 'keys-test' } }), 403, 'forbidden');
    expectError(await activate(key, 'plugin'), 403, 'forbidden', 'body.product');
    // The machine activated for a covered product keeps its seat, now for that product.
    const moved = await activate(key, 'plugin-pro');
    expect(moved.status).toBe(200);
    expect(moved.body.seat.product).toBe('plugin-pro');
    expect((await apply([doc('alpha', ['plugin-lite', 'plugin-pro'])]))[0]).toMatchObject({ action: 'unchanged' });
    expect((await release(key)).status).toBe(204);
    await removeManifest(h.db, { kind: 'LicenceKey', namespace: NAMESPACE, name: 'plugin-licence' }, h.core.bus);
  });

  test('spec.products is required: 1 to 32 product names, each once', () => {
    const refusal = (spec: Record<string, unknown>) => {
      try {
        validateManifest({ ...doc('alpha'), spec }, 'test#1');
        return null;
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(refusal({ project: 'alpha' })).toMatch(/spec\.products/);
    expect(refusal({ project: 'alpha', products: [] })).toMatch(/spec\.products/);
    expect(refusal({ project: 'alpha', products: ['two words'] })).toMatch(/spec\.products\.0/);
    expect(refusal({ project: 'alpha', products: ['a', 'b', 'a'] })).toMatch(/spec\.products.*each product once/);
    expect(refusal({ project: 'alpha', products: Array.from({ length: 33 }, (_, i) => `p${i}`) })).toMatch(/spec\.products/);
    expect(refusal({ project: 'alpha', products: ['a', 'b'] })).toBeNull();
  });

  test('naming a project that does not exist is refused on spec.project', async () => {
    await expect(apply([doc('no-such-project')])).rejects.toThrow(/spec\.project/);
  });
});
