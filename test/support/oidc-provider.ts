/**
 * The stand-in for an organisation's OpenID Connect provider in the custom-dashboard tests: the local
 * provider `hearth dev` runs (apps/cli/src/dev/oidc-provider.ts), one implementation for both.
 */
export { type AuthorizationCode, type OidcClient, OidcProviderStandIn, type PersonClaims, type ProviderAccount } from '../../apps/cli/src/dev/oidc-provider';
