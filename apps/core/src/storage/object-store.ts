/**
 * Object storage for crash uploads and symbol files (DESIGN.md: S3-compatible in production, a
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

export interface ObjectStore {
  readonly kind: 's3' | 'disk';
  /**
   * Streams `body` under `key` and resolves once it is durable. A body that errors or runs past
   * `maxBytes` leaves nothing under `key` (the error is rethrown; past the cap, ObjectTooLarge).
   */
  put(key: string, body: Readable, options: PutOptions): Promise<StoredObject>;
  /** The object's bytes as a stream; ObjectNotFound when there is none. */
  get(key: string): Promise<Readable>;
  /** The object's size, or null when there is none. */
  head(key: string): Promise<{ sizeBytes: number } | null>;
  /** Removes the object; removing a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** Resolves when the storage answers (readiness); StorageUnavailable otherwise. */
  ping(): Promise<void>;
}
