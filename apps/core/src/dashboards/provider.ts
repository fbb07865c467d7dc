/**
 * The sign-in of a person at a project's OpenID Connect provider, with openid-client: the
 * authorization code is exchanged at the provider's token endpoint with the PKCE verifier (and the
 * client secret for a confidential client), and the id token is checked: signature by the provider's
 * published keys, issuer, audience, expiry and the nonce. Answers who the provider says it is.
 */
import type * as oidc from 'openid-client';
import { TtlCache } from '../cache';
import { Refusal, refuse } from '../errors';
import type { DashboardSettings } from '../contract/dashboards';
import type { CodeExchange } from '../shapes/dashboards';
import type { AssertedPerson } from './members';

/** openid-client, loaded at the first sign-in rather than with core: most processes never sign anyone in. */
let openidClient: typeof oidc | undefined;
const openid = (): typeof oidc => (openidClient ??= require('openid-client') as typeof oidc);

/** Every call to a provider has a deadline and a bound on what it reads; redirects are not followed. */
export const PROVIDER_FETCH = { timeoutMs: 5_000, maxBytes: 256 * 1024, discoveryCacheMs: 10 * 60_000 };

/** A provider that cannot be reached, or answers what is not a provider's answer: 503 (retry later). */
class ProviderUnreachable extends Error {}

const boundedFetch: oidc.CustomFetch = async (url, options) => {
  let answer: Response;
  try {
    answer = await fetch(url, { ...options, redirect: 'manual', signal: AbortSignal.timeout(PROVIDER_FETCH.timeoutMs) } as RequestInit);
  } catch (err) {
    throw new ProviderUnreachable(`the provider could not be reached (${(err as Error).message})`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (answer.body) {
    for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > PROVIDER_FETCH.maxBytes) throw new ProviderUnreachable('the provider answered more than a provider answers');
      chunks.push(chunk);
    }
  }
  return new Response(size === 0 && answer.status === 204 ? null : Buffer.concat(chunks), { status: answer.status, headers: answer.headers });
};

/** Plain http is taken only from a provider on this machine (development and tests). */
function isLoopback(url: URL): boolean {
  return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

export class DashboardProviders {
  /** Discovery documents (and the key sets openid-client caches on them), per provider and client. */
  private configurations = new TtlCache<string, Promise<oidc.Configuration>>(PROVIDER_FETCH.discoveryCacheMs, 1_000);

  /**
   * Exchanges the code and checks the id token. Refusals: `unauthorized` when the provider refuses
   * the code (bad, used, issued for another sign-in: another verifier or redirect) or the id token
   * does not check out (nonce included); `unavailable` when the provider cannot be reached or refuses
   * the client itself (a wrong client id or secret is the deployment's to fix, not the person's).
   */
  async exchange(settings: DashboardSettings, clientSecret: string | undefined, input: CodeExchange): Promise<AssertedPerson> {
    const config = await this.configuration(settings, clientSecret);
    const callback = new URL(settings.redirectUri);
    callback.search = '';
    callback.hash = '';
    callback.searchParams.set('code', input.code);
    // The code arrives alone in the body; a provider that names itself in its redirects (RFC 9207) is
    // the issuer we already trust, so its name is supplied for openid-client's check.
    if (config.serverMetadata().authorization_response_iss_parameter_supported) callback.searchParams.set('iss', config.serverMetadata().issuer);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await openid().authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: input.codeVerifier,
        expectedNonce: input.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw refusalOf(err);
    }
    const claims = tokens.claims();
    if (!claims) throw refuse.unauthorized('The provider answered no id token.');
    return {
      subject: claims.sub,
      email: typeof claims.email === 'string' ? claims.email : undefined,
      emailVerified: claims.email_verified === true,
    };
  }

  private configuration(settings: DashboardSettings, clientSecret: string | undefined): Promise<oidc.Configuration> {
    const key = JSON.stringify([settings.issuer, settings.clientId, clientSecret ?? null]);
    let found = this.configurations.get(key);
    if (!found) {
      found = this.discover(settings, clientSecret);
      // A failed discovery is not kept: the next sign-in tries again.
      found.catch(() => this.configurations.delete(key));
      this.configurations.set(key, found);
    }
    return found;
  }

  private async discover(settings: DashboardSettings, clientSecret: string | undefined): Promise<oidc.Configuration> {
    const issuer = new URL(settings.issuer);
    const client = openid();
    try {
      const config = await client.discovery(
        issuer,
        settings.clientId,
        undefined,
        clientSecret === undefined ? client.None() : client.ClientSecretBasic(clientSecret),
        { [client.customFetch]: boundedFetch, execute: issuer.protocol === 'http:' && isLoopback(issuer) ? [client.allowInsecureRequests] : [] },
      );
      // The id token comes straight from the token endpoint; its signature is checked all the same.
      client.enableNonRepudiationChecks(config);
      config[client.customFetch] = boundedFetch;
      return config;
    } catch (err) {
      throw refuse.unavailable(`The dashboard's sign-in provider could not be reached: ${(err as Error).message}`);
    }
  }
}

function refusalOf(err: unknown): Refusal {
  if (err instanceof Refusal) return err;
  const client = openid();
  // The token endpoint answers 401 (with a challenge) only to a client it does not authenticate.
  if (err instanceof client.WWWAuthenticateChallengeError || (err instanceof client.ResponseBodyError && err.status === 401)) {
    return refuse.unavailable("The dashboard's sign-in provider does not accept this deployment's client: its settings need fixing.");
  }
  if (err instanceof client.ResponseBodyError) {
    if (err.error === 'invalid_client' || err.error === 'unauthorized_client') {
      return refuse.unavailable("The dashboard's sign-in provider does not accept this deployment's client: its settings need fixing.");
    }
    return refuse.unauthorized(`The provider refused the code (${err.error}): it is bad, used, or for another sign-in.`);
  }
  if (err instanceof ProviderUnreachable || (err instanceof Error && err.cause instanceof ProviderUnreachable)) {
    return refuse.unavailable(`The dashboard's sign-in provider could not be reached.`);
  }
  if (err instanceof client.ClientError || err instanceof client.AuthorizationResponseError) {
    // openid-client's message is generic; the check that failed (`unexpected ID Token "nonce" claim value`) is its cause's.
    const reason = err.cause instanceof Error ? err.cause.message : err.message;
    return refuse.unauthorized(`The sign-in did not check out: ${reason}.`);
  }
  return refuse.unavailable(`The dashboard's sign-in provider could not be used: ${(err as Error).message}`);
}
