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
import { refuse } from '../errors';
import {
  CHECKSUM_SHA256_HEADER,
  ObjectNotFound,
  ObjectTooLarge,
  StorageUnavailable,
  sha256HexToBase64,
  type ObjectStore,
  type PresignOptions,
  type PresignedPut,
  type PutOptions,
  type StoredObject,
} from './object-store';
import { UploadTokens, type UploadGrant } from './upload-tokens';

/** Where the API serves the disk store's presigned PUTs (outside the route table; see apps/api/src/http/object-upload.ts). */
export const DISK_UPLOAD_PATH = '/v1/object-uploads/';

export interface DiskStoreOptions {
  /**
   * MACs the presigned PUTs' tokens: derive it from the master key (`deriveKey(masterKey,
   * 'object-uploads')`) so that every API process over the folder accepts the others' URLs. Default:
   * a random key, good for one process (tests).
   */
  uploadKey?: Buffer;
}

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

  private readonly uploads: UploadTokens;

  constructor(
    readonly root: string,
    options: DiskStoreOptions = {},
  ) {
    this.uploads = new UploadTokens(options.uploadKey ?? randomBytes(32));
  }

  private file(key: string): string {
    assertObjectKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  async put(key: string, body: Readable, options: PutOptions): Promise<StoredObject> {
    return this.write(key, body, options.maxBytes);
  }

  /**
   * Streams to a temporary file, syncs it and renames it into place; `accept` (when given) sees the
   * size and digest before the rename and may refuse (throw), which keeps nothing.
   */
  private async write(key: string, body: Readable, maxBytes: number, accept?: (written: StoredObject) => void): Promise<StoredObject> {
    const target = this.file(key);
    await mkdir(path.dirname(target), { recursive: true });
    const temporary = `${target}.partial-${randomBytes(6).toString('hex')}`;
    const meter = new MeteredStream(maxBytes);
    let written: StoredObject;
    try {
      await pipeline(body, meter, createWriteStream(temporary, { flags: 'wx' }));
      written = { key, sizeBytes: meter.bytes, sha256: meter.digest() };
      accept?.(written);
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
    return written;
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

  /** No digest: a file's is only known by reading it (the presigned PUT checks it on the way in). */
  async head(key: string): Promise<{ sizeBytes: number; sha256?: string } | null> {
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

  /** A URL of the API's own (DISK_UPLOAD_PATH) whose token pins key, size, digest and expiry. */
  async presignPut(key: string, options: PresignOptions): Promise<PresignedPut> {
    assertObjectKey(key);
    const expiresAt = Math.floor(Date.now() / 1000) + options.expiresInSeconds;
    const token = this.uploads.issue({ key, sizeBytes: options.sizeBytes, sha256: options.sha256Hex, expiresAt });
    return {
      url: `${options.apiOrigin}${DISK_UPLOAD_PATH}${token}`,
      headers: { 'Content-Length': String(options.sizeBytes), [CHECKSUM_SHA256_HEADER]: sha256HexToBase64(options.sha256Hex) },
      expiresAt: new Date(expiresAt * 1000),
    };
  }

  /**
   * The grant of a presigned PUT, when the token is this store's, unexpired, and the request carries
   * exactly the headers it was given (as S3 would check them: 403 otherwise).
   */
  checkUpload(token: string, headers: { contentLength?: string; checksum?: string }): UploadGrant {
    const checked = this.uploads.check(token);
    if (!checked.ok) throw refuse.forbidden(checked.reason === 'expired' ? 'The upload URL has expired.' : 'The upload URL is not valid.');
    const { grant } = checked;
    if (headers.contentLength !== String(grant.sizeBytes)) {
      throw refuse.forbidden(`The upload must be sent with Content-Length: ${grant.sizeBytes}.`);
    }
    if (headers.checksum !== sha256HexToBase64(grant.sha256)) {
      throw refuse.forbidden(`The upload must be sent with the ${CHECKSUM_SHA256_HEADER} header it was given.`);
    }
    return grant;
  }

  /**
   * Stores the body of a checked presigned PUT: exactly the granted size and digest, checked while
   * streaming and before the object appears; anything else keeps nothing (400).
   */
  async receiveUpload(grant: UploadGrant, body: Readable): Promise<StoredObject> {
    try {
      return await this.write(grant.key, body, grant.sizeBytes, (written) => {
        if (written.sizeBytes !== grant.sizeBytes) throw refuse.invalid('body', `The body must be exactly ${grant.sizeBytes} bytes.`);
        if (written.sha256 !== grant.sha256) throw refuse.invalid('body', 'The body does not have the SHA-256 the upload URL names (BadDigest).');
      });
    } catch (err) {
      if (err instanceof ObjectTooLarge) throw refuse.invalid('body', `The body must be exactly ${grant.sizeBytes} bytes.`);
      throw err;
    }
  }

  async ping(): Promise<void> {
    try {
      await mkdir(this.root, { recursive: true });
    } catch (err) {
      throw new StorageUnavailable(`the storage folder ${this.root} cannot be written`, { cause: err });
    }
  }
}
