import { createHash } from 'node:crypto';

/** Polling clients ask the same few things over and over; a flood of distinct asks only resets the memo. */
const MAX_REMEMBERED = 10_000;

/**
 * The part of a conditional read's ETag that names what was asked (route, query) and where (the
 * environment: one URL answers each environment its own content, and a client that changes credential
 * must not get a 304 for another environment's copy). Remembered per distinct ask, so the hot path
 * hashes nothing. Every cached content read (config, flags, legal, blog) makes its ETags with it.
 */
export class AskDigests {
  /** By environment, then ask: no key is built per call, and an ask string the API keeps hashes once. */
  private readonly digests = new Map<number, Map<string, string>>();
  private remembered = 0;

  of(environmentId: number, ask: string): string {
    let ofEnvironment = this.digests.get(environmentId);
    let digest = ofEnvironment?.get(ask);
    if (digest === undefined) {
      digest = createHash('sha256').update(`${environmentId}|${ask}`).digest('base64url').slice(0, 16);
      if (this.remembered >= MAX_REMEMBERED) {
        this.digests.clear();
        this.remembered = 0;
        ofEnvironment = undefined;
      }
      if (!ofEnvironment) this.digests.set(environmentId, (ofEnvironment = new Map()));
      ofEnvironment.set(ask, digest);
      this.remembered++;
    }
    return digest;
  }
}
