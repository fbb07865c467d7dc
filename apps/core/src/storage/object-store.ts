/**
 * Object storage for crash uploads and symbol files (docs/crashes.md: S3-compatible in production, a
 * folder on disk on the embedded default, behind one interface). Bodies are streamed through,
 * never held whole: `put` counts and hashes while the bytes pass and stops past `maxBytes`.
 */
import type { Readable } from 'node:stream';

export interface StoredObject {
  key: string;
  sizeBytes: number;
  /** SHA-256 of the bytes stored, 64 lower-case hex digits. */
  sha256: string;
}

export interface PutOptions {
  /** More bytes than this abort the write (ObjectTooLarge) and nothing is kept under `key`. */
  maxBytes: number;
  contentType?: string;
}

/** A body ran past its `maxBytes`; the partial object was removed. */
export class ObjectTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the object is larger than ${maxBytes} bytes`);
    this.name = 'ObjectTooLarge';
  }
}

export class ObjectNotFound extends Error {
  constructor(readonly key: string) {
    super(`no object under ${key}`);
    this.name = 'ObjectNotFound';
  }
}

/** The storage cannot be reached or refused to work (the API answers 503 `unavailable`). */
export class StorageUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageUnavailable';
  }
}

export interface PresignOptions {
  /** The exact size the PUT must carry (a signed Content-Length). */
  sizeBytes: number;
  /** The SHA-256 the body must have, 64 lower-case hex digits (a signed x-amz-checksum-sha256). */
  sha256Hex: string;
  expiresInSeconds: number;
  /**
   * Where the API that asked is reached (`https://host`), for stores whose uploads the API serves
   * itself (the folder on disk); S3 ignores it.
   */
  apiOrigin: string;
}

/** A PUT that may be sent once by anyone holding it: to `url`, with exactly `headers`, before `expiresAt`. */
export interface PresignedPut {
  url: string;
  /** Exactly the headers the PUT must carry (the symbol upload answers them as they are). */
  headers: { 'Content-Length': string; [CHECKSUM_SHA256_HEADER]: string };
  expiresAt: Date;
}

/** The header that pins a presigned PUT's digest: base64 of the raw SHA-256 (as S3 has it). */
export const CHECKSUM_SHA256_HEADER = 'x-amz-checksum-sha256';

export function sha256HexToBase64(hex: string): string {
  return Buffer.from(hex, 'hex').toString('base64');
}

export interface ObjectStore {
  readonly kind: 's3' | 'disk';
  /**
   * Streams `body` under `key` and resolves once it is durable. A body that errors or runs past
   * `maxBytes` leaves nothing under `key` (the error is rethrown; past the cap, ObjectTooLarge).
   */
  put(key: string, body: Readable, options: PutOptions): Promise<StoredObject>;
  /** The object's bytes as a stream; ObjectNotFound when there is none. */
  get(key: string): Promise<Readable>;
  /**
   * The object's size, or null when there is none; with its SHA-256 (hex) where the store knows it
   * without reading the bytes (S3: an object PUT with x-amz-checksum-sha256).
   */
  head(key: string): Promise<{ sizeBytes: number; sha256?: string } | null>;
  /** Removes the object; removing a missing one is not an error. */
  delete(key: string): Promise<void>;
  /**
   * A PUT URL for `key` that only a body of exactly `sizeBytes` with digest `sha256Hex` can use, and
   * only before it expires: the storage itself refuses anything else (docs/crashes.md, "Symbol files").
   */
  presignPut(key: string, options: PresignOptions): Promise<PresignedPut>;
  /** Resolves when the storage answers (readiness); StorageUnavailable otherwise. */
  ping(): Promise<void>;
}
