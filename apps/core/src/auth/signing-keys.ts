import { generateKeyPairSync, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import type { Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { randomId } from '../ids';
import { ConfigError } from '../config';
import { deriveKey, seal, unseal } from '../sealing';
import { REFRESH_TOKEN_SECONDS } from './token-claims';

export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  jwk: PublicJwk;
  createdAt: Date;
  retiredAt: Date | null;
}

/**
 * A set of signing keys for one kind of token, rotated on its own: the player tokens' keys, and the
 * licence tokens' (licence/tokens.ts), which a plugin verifies offline and which must not be usable as
 * player tokens. Sets share one table and these functions; each has its own sealing key and lock.
 */
export interface SigningKeySet {
  /** `signing_keys.key_set`. */
  name: 'player' | 'licence';
  /** Derives the key that seals the set's private keys from the master key. */
  sealingPurpose: string;
  advisoryLock: number;
  /** A retired key stays published (and accepted) until the last token it signed has expired. */
  publishAfterRetirementMs: number;
}

export const PLAYER_SIGNING_KEYS: SigningKeySet = {
  name: 'player',
  sealingPurpose: 'signing-keys',
  advisoryLock: 727_001,
  publishAfterRetirementMs: (REFRESH_TOKEN_SECONDS + 60) * 1000,
};

function newKeyPair(): { kid: string; jwk: PublicJwk; privatePem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const kid = randomId(16);
  const x = (publicKey.export({ format: 'jwk' }) as { x: string }).x;
  return {
    kid,
    jwk: { kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig' },
    privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }) as string,
  };
}

async function insertKey(trx: Queryable, masterKey: Buffer, set: SigningKeySet): Promise<string> {
  const { kid, jwk, privatePem } = newKeyPair();
  await trx('signing_keys').insert({
    kid,
    key_set: set.name,
    public_jwk: jwk,
    private_key_encrypted: seal(deriveKey(masterKey, set.sealingPurpose), privatePem),
  });
  return kid;
}

/** Makes the set's first signing key when it has none; safe when several processes start at once. */
export async function ensureSigningKey(db: Queryable, masterKey: Buffer, set = PLAYER_SIGNING_KEYS): Promise<void> {
  await inTransaction(db, async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(?)', [set.advisoryLock]);
    const active = await trx('signing_keys').where({ key_set: set.name }).whereNull('retired_at').first();
    if (!active) await insertKey(trx, masterKey, set);
  });
}

/** `hearth signing-keys rotate`: a new key of the set signs from now on; the old one is retired but still published. */
export async function rotateSigningKey(db: Queryable, masterKey: Buffer, set = PLAYER_SIGNING_KEYS): Promise<{ kid: string; retired: string[] }> {
  return inTransaction(db, async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(?)', [set.advisoryLock]);
    const retired = await trx('signing_keys').where({ key_set: set.name }).whereNull('retired_at').update({ retired_at: trx.fn.now() }).returning('kid');
    const kid = await insertKey(trx, masterKey, set);
    return { kid, retired: retired.map((r: { kid: string }) => r.kid) };
  });
}

/** Loads the set's keys still worth knowing: the active one first, then retired ones still published. */
export async function loadSigningKeys(db: Queryable, masterKey: Buffer, now = Date.now(), set = PLAYER_SIGNING_KEYS): Promise<SigningKey[]> {
  const sealingKey = deriveKey(masterKey, set.sealingPurpose);
  const rows = await db('signing_keys')
    .where({ key_set: set.name })
    .where((q) => {
      q.whereNull('retired_at').orWhere('retired_at', '>', new Date(now - set.publishAfterRetirementMs));
    })
    .orderByRaw('retired_at IS NOT NULL, created_at DESC');
  return rows.map((row: Record<string, unknown>) => {
    let pem: string;
    try {
      pem = unseal(sealingKey, row.private_key_encrypted as string);
    } catch {
      throw new ConfigError('HEARTH_MASTER_KEY', `does not decrypt signing key ${row.kid as string}: it is not the key they were stored with`);
    }
    const privateKey = createPrivateKey(pem);
    return {
      kid: row.kid as string,
      privateKey,
      publicKey: createPublicKey(privateKey),
      jwk: row.public_jwk as PublicJwk,
      createdAt: new Date(row.created_at as string),
      retiredAt: row.retired_at ? new Date(row.retired_at as string) : null,
    };
  });
}
