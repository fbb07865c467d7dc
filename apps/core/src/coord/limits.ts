/**
 * The per-address rate limits (spec §8): what a caller without a credential is held to, by its address.
 * One definition for the API (requests with no or a bad credential) and the sessions socket (an upgrade,
 * which carries no credential until its authorize frame), so both count against the same counter.
 */
import type { RateCheck } from './coordination';

/** Requests with no or a bad credential, per address, across every environment. */
export const ADDRESS_LIMIT_PER_MINUTE = 600;
/** The identity-provider sign-in, per address, in the environment it names. */
export const IDP_ADDRESS_LIMIT_PER_MINUTE = 120;

/**
 * The checks of a request without a credential from `ip` (and of an identity-provider sign-in into
 * `idpEnvironment`). `perMinute` is the product's figure: only tests and benches pass another.
 */
export function addressChecks(ip: string, idpEnvironment?: { id: number }, perMinute = ADDRESS_LIMIT_PER_MINUTE): RateCheck[] {
  const tag = `{a${ip}}`;
  const checks: RateCheck[] = [{ name: 'address-minute', key: `${tag}:m`, limit: perMinute, windowSeconds: 60 }];
  if (idpEnvironment) {
    checks.push({ name: 'idp-address-minute', key: `${tag}:idp:${idpEnvironment.id}`, limit: IDP_ADDRESS_LIMIT_PER_MINUTE, windowSeconds: 60 });
  }
  return checks;
}
