/**
 * Object storage on S3 or an S3-compatible server (versitygw in the tests). Bodies of unknown length are
 * streamed in parts (`@aws-sdk/lib-storage`'s Upload) through a MeteredStream, so the size and
 * SHA-256 are known when the upload completes and the cap holds while the bytes pass; a failed or
 * capped upload is aborted, leaving nothing under the key.
 */
import { pipeline } from 'node:stream';
import type { Readable } from 'node:stream';
import type * as ClientS3 from '@aws-sdk/client-s3';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type * as LibStorage from '@aws-sdk/lib-storage';
import type * as Presigner from '@aws-sdk/s3-request-presigner';
import { MeteredStream, assertObjectKey } from './disk-store';
import {
  CHECKSUM_SHA256_HEADER,
  ObjectNotFound,
  StorageUnavailable,
  sha256HexToBase64,
  type ObjectStore,
  type PresignOptions,
  type PresignedPut,
  type PutOptions,
  type StoredObject,
} from './object-store';

/**
 * The AWS SDK, loaded when the first S3 store opens rather than with core: it takes about 75 ms of
 * CPU to load, and most processes (the embedded default, the CLI's reads, every test) use the disk
 * store or none.
 */
function awsSdk() {
  return {
    s3: require('@aws-sdk/client-s3') as typeof ClientS3,
    Upload: (require('@aws-sdk/lib-storage') as typeof LibStorage).Upload,
    getSignedUrl: (require('@aws-sdk/s3-request-presigner') as typeof Presigner).getSignedUrl,
  };
}

export interface S3StoreOptions {
  bucket: string;
  /** Prepended to every key ('' or ending in '/'). */
  prefix?: string;
  region: string;
  endpoint?: string;
  forcePathStyle?: boolean;
  /** Default: the AWS SDK's chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, web identity, …). */
  credentials?: S3ClientConfig['credentials'];
}

/** Errors that mean the storage is out of reach or will not work for us, rather than a fault of ours. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);
const REFUSING_NAMES = new Set([
  'TimeoutError',
  'RequestTimeout',
  'CredentialsProviderError',
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'NoSuchBucket',
  'SlowDown',
]);

export function isStorageUnavailable(err: unknown): boolean {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number }; cause?: unknown } | undefined;
  if (!e || typeof e !== 'object') return false;
  if (e.code && UNREACHABLE_CODES.has(e.code)) return true;
  if (e.name && REFUSING_NAMES.has(e.name)) return true;
  // An SDK error with no HTTP status got no answer at all (HEAD's connection errors come wrapped so).
  if (e.$metadata !== undefined && e.$metadata.httpStatusCode === undefined) return true;
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined && status >= 500) return true;
  return e.cause !== undefined && e.cause !== err && isStorageUnavailable(e.cause);
}

/** Rethrows what the storage's outage or refusal caused as StorageUnavailable (the API's 503). */
function mapped(err: unknown, doing: string): unknown {
  if (err instanceof StorageUnavailable) return err;
  if (isStorageUnavailable(err)) return new StorageUnavailable(`object storage could not ${doing}: ${(err as Error).message}`, { cause: err });
  return err;
}

/**
 * The SDK warns once, on standard error in several plain-text lines, that its releases after January
 * 2027 need Node 22. The processes write JSON lines only, and the project runs on Node 20 (the image's,
 * package.json's engines; pg-boss 10 is the last for it): the warning is known and kept out of the logs.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** Parts of 8 MiB, two in flight: a bounded amount of memory per upload, whatever its size. */
const PART_SIZE = 8 * 1024 * 1024;
const QUEUE_SIZE = 2;

export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  readonly bucket: string;
  private readonly prefix: string;
  private readonly sdk = awsSdk();
  private readonly client: S3Client;
  /**
   * Presigned URLs come from a client that adds no checksum of its own: since 3.729 the SDK's
   * default (WHEN_SUPPORTED) signs a CRC32 of the empty body into the URL, and every upload then
   * fails (docs/crashes.md).
   */
  private readonly presigner: S3Client;

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.prefix = options.prefix ?? '';
    const config: S3ClientConfig = {
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle ?? false,
      credentials: options.credentials,
      maxAttempts: 3,
      // A storage that does not answer is unavailable, not a request that hangs.
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
    };
    this.client = new this.sdk.s3.S3Client(config);
    this.presigner = new this.sdk.s3.S3Client({ ...config, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
  }

  private full(key: string): string {
    assertObjectKey(key);
    return this.prefix + key;
  }

  async put(key: string, body: Readable, options: PutOptions): Promise<StoredObject> {
    const Key = this.full(key);
    const meter = new MeteredStream(options.maxBytes);
    // pipeline (not pipe) so that the body's error, or the cap, fails the stream the Upload reads.
    pipeline(body, meter, () => undefined);
    const upload = new this.sdk.Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key, Body: meter, ContentType: options.contentType ?? 'application/octet-stream' },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      // A multipart upload already aborts its parts on error; abort again in case it had not begun,
      // and never let the abort's own failure hide the cause.
      await upload.abort().catch(() => undefined);
      body.destroy();
      meter.destroy();
      throw mapped(err, `store ${key}`);
    }
    return { key, sizeBytes: meter.bytes, sha256: meter.digest() };
  }

  async get(key: string): Promise<Readable> {
    try {
      const answer = await this.client.send(new this.sdk.s3.GetObjectCommand({ Bucket: this.bucket, Key: this.full(key) }));
      return answer.Body as Readable;
    } catch (err) {
      if ((err as Error).name === 'NoSuchKey' || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) {
        throw new ObjectNotFound(key);
      }
      throw mapped(err, `read ${key}`);
    }
  }

  async head(key: string): Promise<{ sizeBytes: number; sha256?: string } | null> {
    try {
      const answer = await this.client.send(new this.sdk.s3.HeadObjectCommand({ Bucket: this.bucket, Key: this.full(key), ChecksumMode: 'ENABLED' }));
      // A multipart object's checksum is of its parts ("…-N"), not of its bytes: not a digest to compare.
      const checksum = answer.ChecksumSHA256;
      const sha256 = checksum && !checksum.includes('-') ? Buffer.from(checksum, 'base64').toString('hex') : undefined;
      return { sizeBytes: answer.ContentLength ?? 0, ...(sha256 ? { sha256 } : {}) };
    } catch (err) {
      if ((err as Error).name === 'NotFound' || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null;
      throw mapped(err, `look up ${key}`);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new this.sdk.s3.DeleteObjectCommand({ Bucket: this.bucket, Key: this.full(key) }));
    } catch (err) {
      throw mapped(err, `delete ${key}`);
    }
  }

  /**
   * PutObject with ContentLength and ChecksumSHA256, presigned: Content-Length and the checksum are
   * signed headers (the checksum kept out of the query string, where S3 would not check it), so S3
   * refuses another size (403), a missing or other checksum header (403) and a body of another
   * digest (400 BadDigest).
   */
  async presignPut(key: string, options: PresignOptions): Promise<PresignedPut> {
    const checksum = sha256HexToBase64(options.sha256Hex);
    const command = new this.sdk.s3.PutObjectCommand({ Bucket: this.bucket, Key: this.full(key), ContentLength: options.sizeBytes, ChecksumSHA256: checksum });
    const signedAt = new Date();
    const url = await this.sdk.getSignedUrl(this.presigner, command, {
      expiresIn: options.expiresInSeconds,
      signingDate: signedAt,
      unhoistableHeaders: new Set([CHECKSUM_SHA256_HEADER]),
    });
    return {
      url,
      headers: { 'Content-Length': String(options.sizeBytes), [CHECKSUM_SHA256_HEADER]: checksum },
      // Whole seconds, as the signature counts them.
      expiresAt: new Date(Math.floor(signedAt.getTime() / 1000) * 1000 + options.expiresInSeconds * 1000),
    };
  }

  async ping(): Promise<void> {
    try {
      await this.client.send(new this.sdk.s3.HeadBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      throw new StorageUnavailable(`object storage bucket ${this.bucket} does not answer: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Closes the clients' connections (processes that stop, tests). */
  close(): void {
    this.client.destroy();
    this.presigner.destroy();
  }
}
