import { createLocalJWKSet, jwtVerify, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { Refusal, refuse } from '../errors';
import type { EnvironmentContext } from '../tenancy/environments';

/**
 * Verifies an identity provider's Connect id token against the project's settings: signature by the
 * provider's published keys, issuer, audience (the client id), expiry, and the deployment (`pfdid`).
 * Answers the provider's user id (`sub`).
 */
/** Failures that say the token itself is bad, as opposed to the provider being unreachable. */
const TOKEN_FAULTS = [
  joseErrors.JWTClaimValidationFailed,
  joseErrors.JWTExpired,
  joseErrors.JWTInvalid,
  joseErrors.JWSInvalid,
  joseErrors.JWSSignatureVerificationFailed,
  joseErrors.JWKSNoMatchingKey,
  joseErrors.JWKSMultipleMatchingKeys,
  joseErrors.JOSEAlgNotAllowed,
  joseErrors.JOSENotSupported,
];

/**
 * How the provider's key set is fetched. jose's own remote key set bounds only the wait for the
 * answer's head: a provider (or whatever answers at its URL) that sent its head and then trickled or
 * stalled its body held the sign-in forever, and one that sent a gigabyte was read into memory whole
 * (test/security/api10-unsafe-consumption.test.ts). Here the whole fetch has a deadline and the body
 * a size bound; redirects are not followed (the URL is the manifest's, not wherever it points).
 */
export const KEY_SET_FETCH = { timeoutMs: 5_000, maxBytes: 256 * 1024, cooldownMs: 30_000, maxAgeMs: 10 * 60_000 };

class ProviderUnreachable extends Error {}

interface KeySet {
  get: JWTVerifyGetKey;
  fetchedAt: number;
}

/** The provider's published keys, fetched with bounds, cached, and fetched again for an unknown key id at most once per cooldown. */
class RemoteKeySet {
  private keys: KeySet | undefined;
  private pending: Promise<KeySet> | undefined;

  constructor(private readonly url: string) {}

  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    const keys = this.keys && Date.now() - this.keys.fetchedAt <= KEY_SET_FETCH.maxAgeMs ? this.keys : await this.refresh();
    try {
      return await keys.get(header, token);
    } catch (err) {
      // A key the set does not hold yet: the provider may have rotated; ask again, not more often than the cooldown.
      if (!(err instanceof joseErrors.JWKSNoMatchingKey) || Date.now() - keys.fetchedAt < KEY_SET_FETCH.cooldownMs) throw err;
      return (await this.refresh()).get(header, token);
    }
  };

  /** The key set fetched now (one fetch for every caller waiting at once). */
  private refresh(): Promise<KeySet> {
    this.pending ??= fetchKeySet(this.url)
      .then((set) => (this.keys = { get: createLocalJWKSet(set), fetchedAt: Date.now() }))
      .finally(() => (this.pending = undefined));
    return this.pending;
  }
}

/**
 * The whole fetch races one deadline of its own: aborting the request's signal alone did not always
 * end a read of a body that had stalled (the sign-in then waited past any bound, seen in
 * test/security/api10). On the deadline the request is aborted and the fetch answered unreachable.
 */
async function fetchKeySet(url: string): Promise<JSONWebKeySet> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new ProviderUnreachable('the key set did not arrive in time'));
    }, KEY_SET_FETCH.timeoutMs);
  });
  const reading = readKeySet(url, controller.signal);
  reading.catch(() => undefined); // settled after the deadline, if ever: nobody waits for it then
  try {
    return await Promise.race([reading, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function readKeySet(url: string, signal: AbortSignal): Promise<JSONWebKeySet> {
  try {
    const answer = await fetch(url, { signal, redirect: 'error', headers: { Accept: 'application/json' } });
    if (answer.status !== 200 || !answer.body) throw new ProviderUnreachable(`the key set answered ${answer.status}`);
    if (Number(answer.headers.get('content-length') ?? 0) > KEY_SET_FETCH.maxBytes) throw new ProviderUnreachable('the key set is too large');
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > KEY_SET_FETCH.maxBytes) throw new ProviderUnreachable('the key set is too large');
      chunks.push(chunk);
    }
    const set = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JSONWebKeySet;
    if (!set || !Array.isArray(set.keys)) throw new ProviderUnreachable('the key set holds no keys');
    return set;
  } catch (err) {
    throw err instanceof ProviderUnreachable ? err : new ProviderUnreachable(String(err));
  }
}

export class IdentityProviderVerifier {
  private keySets = new Map<string, RemoteKeySet>();

  async verify(env: EnvironmentContext, idToken: string): Promise<{ subject: string }> {
    const settings = env.identityProvider;
    if (!settings || settings.enabled === false) {
      throw new Refusal('provider-disabled', 'This environment does not accept identity-provider sign-in.');
    }
    let keySet = this.keySets.get(settings.jwksUri);
    if (!keySet) {
      keySet = new RemoteKeySet(settings.jwksUri);
      this.keySets.set(settings.jwksUri, keySet);
    }
    try {
      const { payload } = await jwtVerify(idToken, keySet.getKey, {
        issuer: settings.issuer,
        audience: settings.clientId,
        clockTolerance: 5,
        requiredClaims: ['sub', 'exp'],
      });
      if (payload.pfdid !== settings.deploymentId) throw refuse.unauthorized('The id token is for another deployment.');
      if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 200) {
        throw refuse.unauthorized('The id token names no user.');
      }
      return { subject: payload.sub };
    } catch (err) {
      if (err instanceof Refusal) throw err;
      if (TOKEN_FAULTS.some((fault) => err instanceof fault)) throw refuse.unauthorized('The id token could not be verified.');
      // Anything else is about reaching the provider's key set (network, timeout, size, bad JSON there).
      throw refuse.unavailable('The identity provider could not be reached.');
    }
  }
}
