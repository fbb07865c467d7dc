/**
 * An upload that can never be read: retrying it would fail the same way, so the worker records it
 * as poison with `reason` (a stable code, counted in metrics and shown by `hearth crashes`) and
 * completes its job. Anything else that goes wrong (storage, database) is retried.
 */
export const POISON_REASONS = [
  'body-missing', // the upload's body is not in object storage
  'inflate-failed', // not a zlib stream, or a corrupt one
  'inflated-too-large', // inflates past the cap (a zip bomb, or a dump too big to keep)
  'truncated', // the archive ends inside a field
  'length-out-of-bounds', // a string or file length that is negative, too long, or past the end
  'too-many-files', // FileCount past what the bytes can hold or the absolute cap
  'trailing-bytes', // bytes after the last field
  'no-context', // no CrashContext.runtime-xml file
  'bad-xml', // the context is not well-formed XML, has a DOCTYPE, or lacks FGenericCrashContext
  'retries-exhausted', // storage or database failed on every attempt (set by the worker)
] as const;
export type PoisonReason = (typeof POISON_REASONS)[number];

export class CrashPoison extends Error {
  constructor(
    readonly reason: PoisonReason,
    detail: string,
  ) {
    super(`${reason}: ${detail}`);
    this.name = 'CrashPoison';
  }
}
