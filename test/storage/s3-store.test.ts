/**
 * S3ObjectStore against a real S3 server (versitygw, test/support/s3-gateway.ts): streamed puts of
 * unknown length (one part and several), reads, heads, deletes, and the cap: a body past maxBytes, or
 * one that fails mid-way, leaves nothing (no object, no multipart upload left open). A storage out of
 * reach is StorageUnavailable.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3';
import { ObjectNotFound, ObjectTooLarge, S3ObjectStore, StorageUnavailable } from '@hearth/core/storage';
import { type S3Gateway, startS3Gateway } from '../support/s3-gateway';

jest.setTimeout(120_000);

let s3: S3Gateway;
let store: S3ObjectStore;

beforeAll(async () => {
  s3 = await startS3Gateway();
  store = await s3.newStore({ prefix: 'unit/' });
});
afterAll(async () => {
  await s3?.stop();
});

/** A stream of `bytes` in 64 KiB chunks, of a length nobody declares. */
function chunked(bytes: Buffer): Readable {
  let offset = 0;
  return new Readable({
    read() {
      if (offset >= bytes.length) return this.push(null);
      this.push(bytes.subarray(offset, offset + 65536));
      offset += 65536;
    },
  });
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function openMultipartUploads(): Promise<number> {
  const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials });
  try {
    const answer = await client.send(new ListMultipartUploadsCommand({ Bucket: store.bucket }));
    return answer.Uploads?.length ?? 0;
  } finally {
    client.destroy();
  }
}

test('a small body: put, head, get, delete', async () => {
  const bytes = randomBytes(1000);
  const stored = await store.put('crash-uploads/1/small.zlib', chunked(bytes), { maxBytes: 20 * 1024 * 1024 });
  expect(stored).toEqual({ key: 'crash-uploads/1/small.zlib', sizeBytes: 1000, sha256: sha(bytes) });
  expect((await store.head('crash-uploads/1/small.zlib'))?.sizeBytes).toBe(1000);
  expect(await readAll(await store.get('crash-uploads/1/small.zlib'))).toEqual(bytes);
  await store.delete('crash-uploads/1/small.zlib');
  expect(await store.head('crash-uploads/1/small.zlib')).toBeNull();
  await expect(store.get('crash-uploads/1/small.zlib')).rejects.toBeInstanceOf(ObjectNotFound);
  await store.delete('crash-uploads/1/small.zlib'); // a missing object is not an error
});

test('a body of several parts (20 MB, parts of 8 MiB) arrives whole, with its size and digest', async () => {
  const bytes = randomBytes(20 * 1000 * 1000);
  const stored = await store.put('crash-uploads/1/big.zlib', chunked(bytes), { maxBytes: 20 * 1024 * 1024 });
  expect(stored.sizeBytes).toBe(bytes.length);
  expect(stored.sha256).toBe(sha(bytes));
  expect(sha(await readAll(await store.get('crash-uploads/1/big.zlib')))).toBe(sha(bytes));
  expect(await openMultipartUploads()).toBe(0);
});

test('a body past maxBytes in its first part is ObjectTooLarge and leaves nothing', async () => {
  await expect(store.put('crash-uploads/1/over-small.zlib', chunked(randomBytes(300_000)), { maxBytes: 200_000 })).rejects.toBeInstanceOf(ObjectTooLarge);
  expect(await store.head('crash-uploads/1/over-small.zlib')).toBeNull();
});

test('a body past maxBytes after parts were sent is ObjectTooLarge: the multipart upload is aborted', async () => {
  await expect(store.put('crash-uploads/1/over-big.zlib', chunked(randomBytes(21 * 1024 * 1024)), { maxBytes: 20 * 1024 * 1024 })).rejects.toBeInstanceOf(
    ObjectTooLarge,
  );
  expect(await store.head('crash-uploads/1/over-big.zlib')).toBeNull();
  expect(await openMultipartUploads()).toBe(0);
});

test('a body that fails mid-way leaves nothing', async () => {
  let sent = 0;
  const failing = new Readable({
    read() {
      if (sent >= 10 * 1024 * 1024) return this.destroy(new Error('client went away'));
      sent += 65536;
      this.push(randomBytes(65536));
    },
  });
  await expect(store.put('crash-uploads/1/broken.zlib', failing, { maxBytes: 20 * 1024 * 1024 })).rejects.toThrow('client went away');
  expect(await store.head('crash-uploads/1/broken.zlib')).toBeNull();
  expect(await openMultipartUploads()).toBe(0);
});

test('keys are checked before anything is sent', async () => {
  await expect(store.put('symbols/1/../x', chunked(Buffer.from('x')), { maxBytes: 10 })).rejects.toThrow('not an object key');
});

test('a storage out of reach is StorageUnavailable', async () => {
  const down = new S3ObjectStore({
    bucket: 'nowhere',
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:9',
    forcePathStyle: true,
    credentials: s3.credentials,
  });
  try {
    await expect(down.ping()).rejects.toBeInstanceOf(StorageUnavailable);
    await expect(down.head('a/b')).rejects.toBeInstanceOf(StorageUnavailable);
    await expect(down.put('a/b', chunked(Buffer.from('abc')), { maxBytes: 10 })).rejects.toBeInstanceOf(StorageUnavailable);
  } finally {
    down.close();
  }
});

test('a bucket that does not exist is StorageUnavailable; the real one pings', async () => {
  await store.ping();
  const missing = new S3ObjectStore({
    bucket: 'no-such-bucket',
    region: 'us-east-1',
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: s3.credentials,
  });
  try {
    await expect(missing.ping()).rejects.toBeInstanceOf(StorageUnavailable);
    await expect(missing.put('a/b', chunked(Buffer.from('abc')), { maxBytes: 10 })).rejects.toBeInstanceOf(StorageUnavailable);
  } finally {
    missing.close();
  }
});
