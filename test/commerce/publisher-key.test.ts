/**
 * Where the store's publisher key is read from (apps/core/src/commerce/publisher-key.ts): for a
 * secretRef, the key the operator stored sealed on the project's row first, else the Secret mounted
 * under the store secrets directory; a file; an environment variable. A source that holds no key is
 * PublisherKeyMissing, whose words never carry a key.
 */
import { mkdtemp, mkdir, writeFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StoreSpec } from '@hearth/core/contract';
import { Value } from '@sinclair/typebox/value';
import { PublisherKeys, PublisherKeyMissing } from '../../apps/core/src/commerce/publisher-key';
import { projectSecretKeys, sealProjectSecret, storeProjectSecret } from '../../apps/core/src/tenancy/project-secrets';
import { type Harness, startHarness } from '../support/harness';
import { NAMESPACE, environment, plan, project } from '../support/manifests';

const REF = { secretRef: { name: 'store-key', key: 'publisherKey' } };
let dir: string;
let h: Harness;
let projects: { sealed: { id: number }; other: { id: number } };

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'hearth-store-keys-'));
  await mkdir(path.join(dir, NAMESPACE, 'store-key'), { recursive: true });
  await writeFile(path.join(dir, NAMESPACE, 'store-key', 'publisherKey'), 'MOUNTED0123456789\n');
  await writeFile(path.join(dir, 'plain-file'), 'from-a-file');
  await writeFile(path.join(dir, 'empty'), '  \n');
  h = await startHarness({
    manifests: [plan('test'), project('sealed'), environment('sealed-live', 'sealed'), project('other'), environment('other-live', 'other')],
  });
  const idOf = async (name: string) => ({ id: Number((await h.db('projects').where({ namespace: NAMESPACE, name }).first('id')).id) });
  projects = { sealed: await idOf('sealed'), other: await idOf('other') };
});
afterAll(async () => {
  await h?.close();
  await rm(dir, { recursive: true, force: true });
});

const at = (project: { id: number }, namespace = NAMESPACE) => ({
  namespace,
  project: { id: project.id, name: '', review: 'approved' as const, sessionSeats: 1 },
});

test("a secretRef reads the key the operator stored sealed, else the mounted Secret of the project's namespace", async () => {
  const keys = new PublisherKeys(projectSecretKeys(h.masterKey), { HEARTH_STORE_SECRETS_DIR: dir });
  // Nothing stored yet: the mounted Secret, trimmed; another namespace's mount does not hold it.
  expect(await keys.read(h.db, at(projects.sealed), REF)).toBe('MOUNTED0123456789');
  await expect(keys.read(h.db, at(projects.sealed, 'elsewhere'), REF)).rejects.toThrow(PublisherKeyMissing);

  const publicKey = projectSecretKeys(h.masterKey).publicKey;
  await storeProjectSecret(h.db, { namespace: NAMESPACE, name: 'sealed' }, 'storePublisherKey', {
    origin: 'uid/1/publisherKey',
    seal: () => sealProjectSecret(publicKey, ' SEALED-KEY-42\n'),
  });
  const row = await h.db('projects').where({ id: projects.sealed.id }).first('store_publisher_key');
  expect(row.store_publisher_key).toMatch(/^x1\./);
  expect(row.store_publisher_key).not.toContain('SEALED-KEY-42');
  // Stored: it wins over the mount, in any namespace; another project's row is its own.
  expect(await keys.read(h.db, at(projects.sealed, 'elsewhere'), REF)).toBe('SEALED-KEY-42');
  expect(await keys.read(h.db, at(projects.other), REF)).toBe('MOUNTED0123456789');

  // The operator clearing it (the Project names no Secret any more) falls back to the mount.
  await storeProjectSecret(h.db, { namespace: NAMESPACE, name: 'sealed' }, 'storePublisherKey', null);
  expect(await keys.read(h.db, at(projects.sealed), REF)).toBe('MOUNTED0123456789');
});

test('a file and an environment variable are read outside Kubernetes', async () => {
  const keys = new PublisherKeys(projectSecretKeys(h.masterKey), { STORE_KEY: 'from-the-environment' });
  expect(await keys.read(h.db, at(projects.other), { file: path.join(dir, 'plain-file') })).toBe('from-a-file');
  expect(await keys.read(h.db, at(projects.other), { env: 'STORE_KEY' })).toBe('from-the-environment');
});

test('a missing, empty or unprintable key is PublisherKeyMissing, naming where and never a key', async () => {
  const keys = new PublisherKeys(projectSecretKeys(h.masterKey), { HEARTH_STORE_SECRETS_DIR: dir, SPACED: 'has a space' });
  for (const source of [
    { env: 'ABSENT' },
    { env: 'SPACED' },
    { file: path.join(dir, 'empty') },
    { file: path.join(dir, 'nope') },
    { secretRef: { name: 'absent', key: 'k' } },
  ]) {
    const err = await keys.read(h.db, at(projects.other), source).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PublisherKeyMissing);
    expect((err as Error).message).not.toContain('has a space');
  }
});

test('the settings take a reference to the key, never the key itself', () => {
  const base = { provider: 'steam', appId: 480, identity: 'hearth-commerce' };
  expect(Value.Check(StoreSpec, { ...base, publisherKey: { secretRef: { name: 'store-key', key: 'publisherKey' } } })).toBe(true);
  expect(Value.Check(StoreSpec, { ...base, publisherKey: 'ABCDEF0123456789' })).toBe(false);
  expect(Value.Check(StoreSpec, { ...base, publisherKey: { value: 'ABCDEF0123456789' } })).toBe(false);
  expect(Value.Check(StoreSpec, { ...base, appId: 4294967296, publisherKey: { env: 'K' } })).toBe(false);
  expect(Value.Check(StoreSpec, { ...base, provider: 'other', publisherKey: { env: 'K' } })).toBe(false);
});
