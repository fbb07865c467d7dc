/**
 * How a call reaches the API: the credential on every attempt, an Idempotency-Key the SDK makes for
 * every operation that takes one, conditional reads answered from the ETag store on 304, and retries
 * where a retry cannot do a thing twice.
 */
import type { Middleware } from 'openapi-fetch';
import type { EtagStore } from './etag-store';
import { ETAG_OPERATIONS, IDEMPOTENT_OPERATIONS } from './generated/operations';

export interface RetryOptions {
  /** Tries in all, the first included (default 4). */
  attempts: number;
  /** The first back-off; each next one doubles, with jitter (default 250 ms). */
  baseDelayMs: number;
  /** The longest wait, back-off or Retry-After; an answer asking for longer is returned as is (default 10 s). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 4, baseDelayMs: 250, maxDelayMs: 10_000 };

/** What a session puts on its requests. */
export interface Credential {
  /** The Authorization header's value now (a player session refreshes a token about to expire first). */
  authorization(): Promise<string | undefined>;
  /** After a 401: get a new credential if there is a way (a player's refresh token). Tried once per call. */
  renew?(): Promise<boolean>;
  /** Separates the ETag store's entries of different callers. */
  readonly cacheScope: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Whether sending the request again can do nothing twice: a read, or a move with its Idempotency-Key
 * (the API answers a retry with the first answer). A 429 is always safe: the API refused before acting.
 */
function repeatable(request: Request): boolean {
  return request.method === 'GET' || request.method === 'HEAD' || request.headers.has('Idempotency-Key');
}

/** Seconds of a Retry-After header (the API sends seconds), in ms; undefined when absent or unreadable. */
function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get('retry-after');
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value) * 1000;
}

/**
 * The fetch every call goes through: the credential set on each attempt; on a network error or a 503,
 * a repeatable request is sent again after a back-off; on a 429, any request is, after Retry-After;
 * on a 401, the credential is renewed once and the request sent again. Never otherwise.
 */
export function transport(credential: Credential, baseFetch: typeof fetch, retry: RetryOptions): (request: Request) => Promise<Response> {
  return async (request) => {
    let renewed = false;
    for (let attempt = 1; ; attempt++) {
      const sent = request.clone();
      const authorization = await credential.authorization();
      if (authorization) sent.headers.set('Authorization', authorization);
      let response: Response;
      try {
        response = await baseFetch(sent);
      } catch (err) {
        if (attempt >= retry.attempts || !repeatable(request) || isAbort(err)) throw err;
        await sleep(backoff(retry, attempt));
        continue;
      }
      if (response.status === 401 && !renewed && credential.renew) {
        renewed = true;
        if (await credential.renew()) {
          attempt--;
          continue;
        }
        return response;
      }
      const again = response.status === 429 || (response.status === 503 && repeatable(request));
      if (!again || attempt >= retry.attempts) return response;
      const wait = retryAfterMs(response) ?? backoff(retry, attempt);
      if (wait > retry.maxDelayMs) return response;
      // The answer is dropped: read it so its connection goes back to the pool.
      await response.body?.cancel().catch(() => undefined);
      await sleep(wait);
    }
  };
}

function isAbort(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: string }).name === 'AbortError';
}

/** Full jitter on a doubling back-off: spreads the retries of many clients that failed together. */
function backoff(retry: RetryOptions, attempt: number): number {
  return Math.round(Math.random() * Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1)));
}

/** A fresh Idempotency-Key: a random UUID. */
export function idempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/** Adds an Idempotency-Key to every operation that takes one, unless the caller gave its own. */
export const idempotencyKeys: Middleware = {
  onRequest({ request, schemaPath }) {
    if (IDEMPOTENT_OPERATIONS[`${request.method.toLowerCase()} ${schemaPath}`] && !request.headers.has('Idempotency-Key')) {
      request.headers.set('Idempotency-Key', idempotencyKey());
    }
    return request;
  },
};

/**
 * Conditional reads: the kept ETag goes out as If-None-Match, and a 304 is answered with the kept body
 * (status 200, header `X-Hearth-Cache: revalidated`); a 200 with an ETag is kept.
 */
export function conditionalReads(store: EtagStore, scope: () => string): Middleware {
  const keys = new Map<string, string>();
  return {
    async onRequest({ request, schemaPath, id }) {
      if (!ETAG_OPERATIONS.has(`${request.method.toLowerCase()} ${schemaPath}`)) return request;
      const key = `${scope()} ${request.url}`;
      keys.set(id, key);
      const kept = await store.get(key);
      if (kept && !request.headers.has('If-None-Match')) request.headers.set('If-None-Match', kept.etag);
      return request;
    },
    async onResponse({ response, id }) {
      const key = keys.get(id);
      if (key === undefined) return response;
      keys.delete(id);
      if (response.status === 304) {
        const kept = await store.get(key);
        if (!kept) return response;
        const headers = new Headers(response.headers);
        headers.set('Content-Type', 'application/json');
        headers.set('X-Hearth-Cache', 'revalidated');
        return new Response(kept.body, { status: 200, headers });
      }
      const etag = response.headers.get('etag');
      if (response.status === 200 && etag) await store.set(key, { etag, body: await response.clone().text() });
      return response;
    },
    onError({ id }) {
      keys.delete(id);
    },
  };
}
