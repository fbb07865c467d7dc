import type { KeyObject } from 'node:crypto';
import { type JWTPayload, SignJWT, errors as joseErrors } from 'jose';
import type { Db } from '../db/knex';
import { randomId } from '../ids';
import type { InvalidationBus } from '../invalidation';
import { ensureSigningKey, loadSigningKeys, type PublicJwk, type SigningKey, type SigningKeySet } from './signing-keys';

const RELOAD_EVERY_MS = 60_000;
const UNKNOWN_KID_RELOAD_GAP_MS = 5_000;

/**
 * One signing key set as a process holds it in memory: the key that signs, the retired ones still
 * published, reloaded every minute, when a rotation is announced (`signing-keys`), and when a token
 * names a key id not known yet (another process rotated first). The player tokens (TokenService) and
 * the licence tokens (LicenceTokenService) each hold a ring of their own set.
 */
export class SigningKeyRing {
  private keys: SigningKey[] = [];
  private lastReload = 0;
  private reloading?: Promise<void>;
  private timer?: NodeJS.Timeout;

  /** `pool` loads the keys every process holds in memory (committed keys only, never a caller's transaction's). */
  constructor(
    private readonly pool: Db,
    private readonly masterKey: Buffer,
    private readonly set: SigningKeySet,
    bus: InvalidationBus,
  ) {
    bus.on((event) => {
      // A reload already under way may have read the keys before the change: load again after it.
      if (event.kind === 'signing-keys')
        void (this.reloading ?? Promise.resolve())
          .catch(() => undefined)
          .then(() => this.reload())
          .catch(() => undefined);
    });
  }

  async start(): Promise<void> {
    await ensureSigningKey(this.pool, this.masterKey, this.set);
    await this.reload();
    this.timer = setInterval(() => void this.reload().catch(() => undefined), RELOAD_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** The public key set: the signing key first, then retired keys whose tokens may still be alive. */
  jwks(): { keys: PublicJwk[] } {
    return { keys: this.keys.map((k) => k.jwk) };
  }

  /** The key that signs now. */
  signer(): SigningKey {
    const signer = this.keys[0];
    if (!signer || signer.retiredAt) throw new Error(`no active ${this.set.name} signing key`);
    return signer;
  }

  /**
   * A token signed by the key that signs now: EdDSA, with the key's `kid` and the token's `typ` in its
   * header; its audience, subject, issue time (now unless given: tokens issued together share one),
   * expiry `lifetimeSeconds` after it, and a random `jti`.
   */
  sign(claims: JWTPayload, token: { typ: string; audience: string; subject: string; lifetimeSeconds: number; issuedAt?: number }): Promise<string> {
    const signer = this.signer();
    const iat = token.issuedAt ?? Math.floor(Date.now() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA', kid: signer.kid, typ: token.typ })
      .setAudience(token.audience)
      .setSubject(token.subject)
      .setIssuedAt(iat)
      .setExpirationTime(iat + token.lifetimeSeconds)
      .setJti(randomId(22))
      .sign(signer.privateKey);
  }

  /** The public key a token's `kid` names, for jose's jwtVerify; JWKSNoMatchingKey when none. */
  async keyFor(kid: string | undefined): Promise<KeyObject> {
    let key = this.keys.find((k) => k.kid === kid);
    if (!key && kid && Date.now() - this.lastReload > UNKNOWN_KID_RELOAD_GAP_MS) {
      await this.reload();
      key = this.keys.find((k) => k.kid === kid);
    }
    if (!key) throw new joseErrors.JWKSNoMatchingKey();
    return key.publicKey;
  }

  private reload(): Promise<void> {
    this.reloading ??= loadSigningKeys(this.pool, this.masterKey, Date.now(), this.set)
      .then((keys) => {
        this.keys = keys;
        this.lastReload = Date.now();
      })
      .finally(() => {
        this.reloading = undefined;
      });
    return this.reloading;
  }
}

/**
 * What a service of tokens signed by one key set does alike (TokenService, LicenceTokenService): holds
 * the set's ring, started and stopped with the process, and publishes its public keys.
 */
export abstract class SignedTokenService {
  protected readonly ring: SigningKeyRing;

  /** `pool` loads the signing keys every process holds in memory (committed keys only, never a caller's transaction's). */
  constructor(pool: Db, masterKey: Buffer, set: SigningKeySet, bus: InvalidationBus) {
    this.ring = new SigningKeyRing(pool, masterKey, set, bus);
  }

  start(): Promise<void> {
    return this.ring.start();
  }

  stop(): void {
    this.ring.stop();
  }

  /** The public key set: the signing key first, then retired keys whose tokens may still be alive. */
  jwks(): { keys: PublicJwk[] } {
    return this.ring.jwks();
  }
}
