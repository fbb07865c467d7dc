import { createRemoteJWKSet, jwtVerify, errors as joseErrors } from 'jose';
import { ApiError, refuse } from '../errors';
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

export class IdentityProviderVerifier {
  private keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  async verify(env: EnvironmentContext, idToken: string): Promise<{ subject: string }> {
    const settings = env.identityProvider;
    if (!settings || settings.enabled === false) {
      throw new ApiError('provider-disabled', 'This environment does not accept identity-provider sign-in.');
    }
    let keySet = this.keySets.get(settings.jwksUri);
    if (!keySet) {
      keySet = createRemoteJWKSet(new URL(settings.jwksUri), { timeoutDuration: 5000, cooldownDuration: 30_000 });
      this.keySets.set(settings.jwksUri, keySet);
    }
    try {
      const { payload } = await jwtVerify(idToken, keySet, {
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
      if (err instanceof ApiError) throw err;
      if (TOKEN_FAULTS.some((fault) => err instanceof fault)) throw refuse.unauthorized('The id token could not be verified.');
      // Anything else is about reaching the provider's key set (network, timeout, bad JSON there).
      throw refuse.unavailable('The identity provider could not be reached.');
    }
  }
}
