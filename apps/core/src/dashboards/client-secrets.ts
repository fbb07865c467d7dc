/**
 * Dashboard client secrets that the operator carries from a project's Kubernetes Secret to the API
 * processes, without the operator holding the master key (it gets only the credentials it needs):
 * sealed to a public key. The API processes derive an X25519 key pair from the master key and
 * publish the public half (`dashboard_secret_key`); the operator reads the Secret a Project names,
 * seals its value to that key (an ephemeral X25519 agreement, HKDF-SHA256, AES-256-GCM) and stores
 * the sealed text on the project's row; only an API process can open it. The operator can write a
 * client secret but never read one back.
 */
import {
  type KeyObject,
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
} from 'node:crypto';
import type { Queryable } from '../db/knex';
import { deriveKey } from '../sealing';

/** The DER head of a PKCS #8 X25519 private key, before its 32 raw bytes (RFC 8410). */
const PKCS8_X25519_HEAD = Buffer.from('302e020100300506032b656e04220420', 'hex');
const INFO = Buffer.from('hearth dashboard client secret v1');

export interface ClientSecretKeys {
  privateKey: KeyObject;
  /** The public key, base64url of its 32 raw bytes (a JWK's `x`): what the operator seals to. */
  publicKey: string;
}

export function clientSecretKeys(masterKey: Buffer): ClientSecretKeys {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_X25519_HEAD, deriveKey(masterKey, 'dashboard-client-secrets')]), format: 'der', type: 'pkcs8' });
  const publicKey = (createPublicKey(privateKey).export({ format: 'jwk' }) as { x: string }).x;
  return { privateKey, publicKey };
}

function aesKey(shared: Buffer, ephemeral: string): Buffer {
  return Buffer.from(hkdfSync('sha256', shared, Buffer.from(ephemeral), INFO, 32));
}

/** Seals `secret` so that only the holder of `publicKey`'s private half opens it. */
export function sealClientSecret(publicKey: string, secret: string): string {
  const recipient = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: publicKey }, format: 'jwk' });
  const ephemeral = generateKeyPairSync('x25519');
  const ephemeralX = (ephemeral.publicKey.export({ format: 'jwk' }) as { x: string }).x;
  const key = aesKey(diffieHellman({ privateKey: ephemeral.privateKey, publicKey: recipient }), ephemeralX);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return ['x1', ephemeralX, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

export function openClientSecret(keys: ClientSecretKeys, sealed: string): string {
  const [version, ephemeralX, iv, body, tag] = sealed.split('.');
  if (version !== 'x1' || !ephemeralX || !iv || !body || !tag) throw new Error('sealed client secret has an unknown format');
  const ephemeral = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: ephemeralX }, format: 'jwk' });
  const key = aesKey(diffieHellman({ privateKey: keys.privateKey, publicKey: ephemeral }), ephemeralX);
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}

/** API processes publish the public key at start (the same for every process of one master key). */
export async function publishClientSecretKey(db: Queryable, keys: ClientSecretKeys): Promise<void> {
  await db.raw('INSERT INTO dashboard_secret_key (id, public_key) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET public_key = excluded.public_key, updated_at = now()', [keys.publicKey]);
}

/** The public key the operator seals to; undefined until an API process has started once. */
export async function clientSecretPublicKey(db: Queryable): Promise<string | undefined> {
  const row = await db('dashboard_secret_key').where({ id: 1 }).first('public_key');
  return row?.public_key as string | undefined;
}

/**
 * Where a project's stored client secret came from: the Secret's uid and resourceVersion, its key,
 * and the public key it was sealed to. The operator seals again only when one of them changed.
 */
export type ClientSecretOrigin = string;

/**
 * Keeps a project's sealed client secret (null: none), unless it was sealed from the same origin
 * already. Answers whether it wrote.
 */
export async function storeClientSecret(
  db: Queryable,
  project: { namespace: string; name: string },
  secret: { origin: ClientSecretOrigin; seal: () => string } | null,
): Promise<boolean> {
  const row = await db('projects').where(project).first('dashboard_client_secret_origin');
  if (!row) return false;
  const origin = secret?.origin ?? null;
  if (row.dashboard_client_secret_origin === origin) return false;
  await db('projects').where(project).update({ dashboard_client_secret: secret ? secret.seal() : null, dashboard_client_secret_origin: origin });
  return true;
}

/** A project's client secret as the operator stored it, opened; undefined when it stored none. */
export async function storedClientSecret(db: Queryable, keys: ClientSecretKeys, projectId: number): Promise<string | undefined> {
  const row = await db('projects').where({ id: projectId }).first('dashboard_client_secret');
  const sealed = row?.dashboard_client_secret as string | null | undefined;
  return sealed ? openClientSecret(keys, sealed) : undefined;
}
