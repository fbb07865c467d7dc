import { createHash } from 'node:crypto';

/** Polling clients ask the same few things over and over; a flood of distinct asks only resets the memo. */
const MAX_REMEMBERED = 10_000;

/** One ask's digest, and the ETag last made from it (a content version changes it, rarely). */
interface Ask {
  digest: string;
  version?: string | number;
  etag?: string;
}

/**
 * The ETags of conditional reads: `"<content version>-<ask digest>"`, where the digest names what was
 * asked (route, query) and where (the environment: one URL answers each environment its own content,
 * and a client that changes credential must not get a 304 for another environment's copy).
 * Remembered per distinct ask with the ETag of the version last asked at, so the hot path hashes
 * nothing and builds no string: the same ETag string comes back, its hash kept by V8 for the lookup of
 * the answer kept under it. Every cached content read (config, flags, legal, blog, definitions) makes
 * its ETags here.
 */
export class AskDigests {
  /** By environment, then ask: no key is built per call, and an ask string the API keeps hashes once. */
  private readonly asks = new Map<number, Map<string, Ask>>();
  private remembered = 0;

  /** The strong ETag of `ask` in the environment at a content version (a number, or a tag that names one). */
  etag(environmentId: number, ask: string, version: string | number): string {
    const entry = this.of(environmentId, ask);
    if (entry.version !== version || entry.etag === undefined) {
      entry.version = version;
      entry.etag = `"${version}-${entry.digest}"`;
    }
    return entry.etag;
  }

  private of(environmentId: number, ask: string): Ask {
    let ofEnvironment = this.asks.get(environmentId);
    let entry = ofEnvironment?.get(ask);
    if (entry === undefined) {
      entry = { digest: createHash('sha256').update(`${environmentId}|${ask}`).digest('base64url').slice(0, 16) };
      if (this.remembered >= MAX_REMEMBERED) {
        this.asks.clear();
        this.remembered = 0;
        ofEnvironment = undefined;
      }
      if (!ofEnvironment) this.asks.set(environmentId, (ofEnvironment = new Map()));
      ofEnvironment.set(ask, entry);
      this.remembered++;
    }
    return entry;
  }
}
