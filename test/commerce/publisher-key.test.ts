/**
 * Where the store's publisher key is read from (apps/core/src/commerce/publisher-key.ts): a Secret
 * mounted under the store secrets directory, a file, an environment variable; a source that holds no
 * key is PublisherKeyMissing, whose words never carry a key.
 */
import { mkdtemp, mkdir, writeFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PublisherKeys, PublisherKeyMissing, StoreSpec } from '@hearth/core';
import { Value } from '@sinclair/typebox/value';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'hearth-store-keys-'));
  await mkdir(path.join(dir, 'game-a', 'store-key'), { recursive: true });
  await writeFile(path.join(dir, 'game-a', 'store-key', 'publisherKey'), 'ABCDEF0123456789\n');
  await writeFile(path.join(dir, 'plain-file'), 'from-a-file');
  await writeFile(path.join(dir, 'empty'), '  \n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('a secretRef reads the mounted Secret of the project\'s own namespace, trimmed', async () => {
  const keys = new PublisherKeys({ HEARTH_STORE_SECRETS_DIR: dir });
  expect(await keys.read('game-a', { secretRef: { name: 'store-key', key: 'publisherKey' } })).toBe('ABCDEF0123456789');
  // The same reference from another namespace is that namespace's Secret, which does not exist.
  await expect(keys.read('game-b', { secretRef: { name: 'store-key', key: 'publisherKey' } })).rejects.toThrow(PublisherKeyMissing);
});

test('a file and an environment variable are read outside Kubernetes', async () => {
  const keys = new PublisherKeys({ STORE_KEY: 'from-the-environment' });
  expect(await keys.read('any', { file: path.join(dir, 'plain-file') })).toBe('from-a-file');
  expect(await keys.read('any', { env: 'STORE_KEY' })).toBe('from-the-environment');
});

test('a missing, empty or unprintable key is PublisherKeyMissing, naming where and never a key', async () => {
  const keys = new PublisherKeys({ HEARTH_STORE_SECRETS_DIR: dir, SPACED: 'has a space' });
  for (const source of [{ env: 'ABSENT' }, { env: 'SPACED' }, { file: path.join(dir, 'empty') }, { file: path.join(dir, 'nope') }]) {
    const err = await keys.read('game-a', source).catch((e: unknown) => e);
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
