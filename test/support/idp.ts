/**
 * The identity provider stand-in's side of the tests: the settings a project applies and the id
 * tokens the provider signs. Each test serves its own key set (a local HTTP server) and keeps its own
 * keys; this module only fixes what the provider and the project agree on.
 */
import { exportJWK, type KeyLike, SignJWT } from 'jose';

export const IDP_ISSUER = 'https://idp.example.test/auth';
export const IDP_CLIENT_ID = 'hearth-client-1';
export const IDP_DEPLOYMENT_ID = 'deployment-live-1';

/** A project's `identityProvider` for a provider whose key set is at `jwksUri`. */
export function idpSettings(jwksUri: string): { issuer: string; jwksUri: string; clientId: string; deploymentId: string } {
  return { issuer: IDP_ISSUER, jwksUri, clientId: IDP_CLIENT_ID, deploymentId: IDP_DEPLOYMENT_ID };
}

/** A public key as the provider's key set lists it. */
export async function publicJwk(key: KeyLike, kid: string, alg: string): Promise<Record<string, unknown>> {
  return { ...(await exportJWK(key)), kid, alg, use: 'sig' };
}

export interface IdTokenOptions {
  /** The subject; null leaves the claim out. */
  sub?: string | null;
  iss?: string;
  aud?: string;
  /** The deployment claim; null leaves it out. */
  pfdid?: string | null;
  /** Expiry, seconds since the epoch (default: ten minutes from now). */
  exp?: number;
  alg?: string;
  kid?: string;
  /** More protected-header fields (jku, x5u, …), over alg and kid. */
  header?: Record<string, unknown>;
}

/** An id token as the provider signs it with `key`; each option changes one thing. */
export async function signIdToken(key: KeyLike, options: IdTokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {};
  if (options.pfdid !== null) claims.pfdid = options.pfdid ?? IDP_DEPLOYMENT_ID;
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? 'EdDSA', kid: options.kid ?? 'ed-1', ...options.header })
    .setIssuer(options.iss ?? IDP_ISSUER)
    .setAudience(options.aud ?? IDP_CLIENT_ID)
    .setIssuedAt(now)
    .setExpirationTime(options.exp ?? now + 600);
  if (options.sub !== null) jwt.setSubject(options.sub ?? 'product-user-1');
  return jwt.sign(key);
}
