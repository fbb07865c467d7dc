/**
 * The embedded default's object storage: one file per key under a folder. A write goes to a
 * temporary file in the same folder, is synced, then renamed into place, so a reader never sees
 * half an object and a crash mid-write leaves only a temporary file (swept by name).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  ObjectNotFound,
  ObjectTooLarge,
  StorageUnavailable,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from './object-store';

/** Keys are slash-separated names of `[A-Za-z0-9._+*-]` parts; no part may be `.` or `..`. */
const KEY_PART = /^[A-Za-z0-9._+*-]{1,255}$/;

export function assertObjectKey(key: string): void {
  const parts = key.split('/');
  if (key.length > 1024 || parts.some((p) => !KEY_PART.test(p) || p === '.' || p === '..')) {
    throw new Error(`not an object key: ${JSON.stringify(key)}`);
  }
}

/** Counts and hashes the bytes passing through; fails the stream past `maxBytes`. */
export class MeteredStream extends Transform {
  bytes = 0;
  private readonly hash = createHash('sha256');

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null, data?: Buffer) => void): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return done(new ObjectTooLarge(this.maxBytes));
    this.hash.update(chunk);
    done(null, chunk);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}

export class DiskObjectStore implements ObjectStore {
  readonly kind = 'disk' as const;

  constructor(readonly root: string) {}

  private file(key: string): string {
    assertObjectKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  async put(key: string, body: Readable, options: PutOptions): Promise<StoredObject> {
    const target = this.file(key);
    await mkdir(path.dirname(target), { recursive: true });
    const temporary = `${target}.partial-${randomBytes(6).toString('hex')}`;
    const meter = new MeteredStream(options.maxBytes);
    try {
      await pipeline(body, meter, createWriteStream(temporary, { flags: 'wx' }));
      const handle = await open(temporary, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, target);
    } catch (err) {
      await rm(temporary, { force: true });
      throw err;
    }
    return { key, sizeBytes: meter.bytes, sha256: meter.digest() };
  }

  async get(key: string): Promise<Readable> {
    const file = this.file(key);
    const stream = createReadStream(file);
    // Open before handing the stream out, so a missing object is ObjectNotFound, not a stream error.
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT' ? new ObjectNotFound(key) : err));
    });
    return stream;
  }

  async head(key: string): Promise<{ sizeBytes: number } | null> {
    try {
      const s = await stat(this.file(key));
      return { sizeBytes: s.size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }

  async ping(): Promise<void> {
    try {
      await mkdir(this.root, { recursive: true });
    } catch (err) {
      throw new StorageUnavailable(`the storage folder ${this.root} cannot be written`, { cause: err });
    }
  }
}
