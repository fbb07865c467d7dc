/**
 * Licence keys made the two ways staff make them: `hearth licence-keys create|list|revoke` as a real
 * subprocess, and a LicenceKey document applied (minted once, moved, deleted). Either key works on
 * the licence routes at once and is refused there at once when revoked.
 */
import { API_VERSION, type AnyManifest, applyManifests, removeManifest, validateManifest } from '@hearth/core';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { NAMESPACE, standardManifests } from '../support/manifests';
import { runHearth } from '../cli/run-hearth';

jest.setTimeout(120_000); // the CLI steps start a process each

let h: Harness;
let vars: Record<string, string>;

beforeAll(async () => {
  h = await startHarness({ manifests: standardManifests() });
  vars = { DATABASE_URL: h.database.url };
});
afterAll(async () => {
  await h.close();
});

/** Applies documents as `hearth apply` does, answering what each did (with a minted key, this once). */
const apply = (docs: unknown[]) =>
  applyManifests(h.db, docs.map((doc, i) => ({ doc: validateManifest(doc, `test#${i + 1}`) as AnyManifest, origin: `test#${i + 1}` })), h.core.bus);

const release = (token: string) => call(h.base, 'POST', '/licence/release', { token, body: { machineId: 'keys-test' } });

describe('hearth licence-keys', () => {
  test('create prints the whole key once; list shows a hint of it; revoke refuses it at once', async () => {
    const created = await runHearth(['licence-keys', 'create', '--project', 'alpha', '--namespace', NAMESPACE, '--name', 'editor plugin', '--json'], vars);
    expect(created.code).toBe(0);
    const minted = JSON.parse(created.stdout);
    expect(minted).toEqual({ keyId: expect.any(String), key: expect.stringMatching(/^hlk_[0-9A-Za-z]{16}_[0-9A-Za-z]{40}$/), project: `${NAMESPACE}/alpha`, name: 'editor plugin' });
    expect(minted.key.startsWith(`hlk_${minted.keyId}_`)).toBe(true);
    expect((await release(minted.key)).status).toBe(204);

    const listed = await runHearth(['licence-keys', 'list', '--project', 'alpha', '--namespace', NAMESPACE, '--json'], vars);
    expect(listed.code).toBe(0);
    const { keys } = JSON.parse(listed.stdout);
    expect(keys).toEqual([expect.objectContaining({ keyId: minted.keyId, name: 'editor plugin', secretHint: minted.key.slice(-4), revokedAt: null })]);
    expect(listed.stdout).not.toContain(minted.key);

    const revoked = await runHearth(['licence-keys', 'revoke', minted.keyId, '--json'], vars);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ keyId: minted.keyId, revokedAt: expect.any(String) });
    const after = JSON.parse((await runHearth(['licence-keys', 'list', '--project', 'alpha', '--namespace', NAMESPACE, '--json'], vars)).stdout);
    expect(after.keys[0].revokedAt).toEqual(expect.any(String));
    // (Refused at once by every API process: the revocation is announced; routes.test.ts holds that.)
  });

  test('failures are one line and non-zero', async () => {
    const noProject = await runHearth(['licence-keys', 'create', '--project', 'nope', '--namespace', NAMESPACE, '--name', 'x'], vars);
    expect(noProject.code).not.toBe(0);
    expect(noProject.stderr.trim().split('\n').pop()).toMatch(/no project "nope"/);
    const noKey = await runHearth(['licence-keys', 'revoke', '0000000000000000'], vars);
    expect(noKey.code).not.toBe(0);
    expect(noKey.stderr).toMatch(/no live licence key/);
  });
});

describe('a LicenceKey document', () => {
  const doc = (project: string) => ({ apiVersion: API_VERSION, kind: 'LicenceKey', metadata: { name: 'plugin-licence', namespace: NAMESPACE }, spec: { project } });

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

  test('naming a project that does not exist is refused on spec.project', async () => {
    await expect(apply([doc('no-such-project')])).rejects.toThrow(/spec\.project/);
  });
});
