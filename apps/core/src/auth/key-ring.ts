import type { KeyObject } from 'node:crypto';
import { errors as joseErrors } from 'jose';
import type { Db } from '../db/knex';
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
  constructor(private readonly pool: Db, private readonly masterKey: Buffer, private readonly set: SigningKeySet, bus: InvalidationBus) {
    bus.on((event) => {
      // A reload already under way may have read the keys before the change: load again after it.
      if (event.kind === 'signing-keys') void (this.reloading ?? Promise.resolve()).catch(() => undefined).then(() => this.reload()).catch(() => undefined);
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
