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
  private readonly digests = new Map<string, string>();

  of(environmentId: number, ask: string): string {
    const asked = `${environmentId}|${ask}`;
    let digest = this.digests.get(asked);
    if (digest === undefined) {
      digest = createHash('sha256').update(asked).digest('base64url').slice(0, 16);
      if (this.digests.size >= MAX_REMEMBERED) this.digests.clear();
      this.digests.set(asked, digest);
    }
    return digest;
  }
}
