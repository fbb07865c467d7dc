/**
 * A project's secrets that the operator carries from Kubernetes Secrets of the Project's namespace to
 * the API processes, without the operator holding the master key (it gets only the credentials it
 * needs): sealed to a public key. Today two: the custom dashboard's client secret
 * (`spec.dashboard.clientSecretRef`) and the store's publisher key (`spec.store.publisherKey.secretRef`).
 *
 * The API processes derive an X25519 key pair from the master key and publish the public half
 * (`dashboard_secret_key`, named after its first use); the operator reads the Secret a Project names,
 * seals its value to that key (an ephemeral X25519 agreement, HKDF-SHA256, AES-256-GCM) and stores
 * the sealed text and where it came from on the project's row (one pair of columns per secret); only
 * an API process can open it. The operator can write a secret but never read one back.
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
/** The derivation label and HKDF info keep the names of their first use: texts sealed under them must still open. */
const KEY_LABEL = 'dashboard-client-secrets';
const INFO = Buffer.from('hearth dashboard client secret v1');

/** Each secret the operator carries, and the columns of `projects` that hold it sealed and its origin. */
export const PROJECT_SECRETS = {
  dashboardClientSecret: { sealed: 'dashboard_client_secret', origin: 'dashboard_client_secret_origin' },
  storePublisherKey: { sealed: 'store_publisher_key', origin: 'store_publisher_key_origin' },
} as const;
export type ProjectSecretName = keyof typeof PROJECT_SECRETS;

export interface ProjectSecretKeys {
  privateKey: KeyObject;
  /** The public key, base64url of its 32 raw bytes (a JWK's `x`): what the operator seals to. */
  publicKey: string;
}

export function projectSecretKeys(masterKey: Buffer): ProjectSecretKeys {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_X25519_HEAD, deriveKey(masterKey, KEY_LABEL)]), format: 'der', type: 'pkcs8' });
  const publicKey = (createPublicKey(privateKey).export({ format: 'jwk' }) as { x: string }).x;
  return { privateKey, publicKey };
}

function aesKey(shared: Buffer, ephemeral: string): Buffer {
  return Buffer.from(hkdfSync('sha256', shared, Buffer.from(ephemeral), INFO, 32));
}

/** Seals `secret` so that only the holder of `publicKey`'s private half opens it. */
export function sealProjectSecret(publicKey: string, secret: string): string {
  const recipient = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: publicKey }, format: 'jwk' });
  const ephemeral = generateKeyPairSync('x25519');
  const ephemeralX = (ephemeral.publicKey.export({ format: 'jwk' }) as { x: string }).x;
  const key = aesKey(diffieHellman({ privateKey: ephemeral.privateKey, publicKey: recipient }), ephemeralX);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return ['x1', ephemeralX, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

export function openProjectSecret(keys: ProjectSecretKeys, sealed: string): string {
  const [version, ephemeralX, iv, body, tag] = sealed.split('.');
  if (version !== 'x1' || !ephemeralX || !iv || !body || !tag) throw new Error('sealed project secret has an unknown format');
  const ephemeral = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: ephemeralX }, format: 'jwk' });
  const key = aesKey(diffieHellman({ privateKey: keys.privateKey, publicKey: ephemeral }), ephemeralX);
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}

/** API processes publish the public key at start (the same for every process of one master key). */
export async function publishProjectSecretKey(db: Queryable, keys: ProjectSecretKeys): Promise<void> {
  await db.raw(
    'INSERT INTO dashboard_secret_key (id, public_key) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET public_key = excluded.public_key, updated_at = now()',
    [keys.publicKey],
  );
}

/** The public key the operator seals to; undefined until an API process has started once. */
export async function projectSecretPublicKey(db: Queryable): Promise<string | undefined> {
  const row = await db('dashboard_secret_key').where({ id: 1 }).first('public_key');
  return row?.public_key as string | undefined;
}

/**
 * Where a project's stored secret came from: the Secret's uid and resourceVersion, its key, and the
 * public key it was sealed to. The operator seals again only when one of them changed.
 */
export type ProjectSecretOrigin = string;

/**
 * Keeps one of a project's sealed secrets (null: none), unless it was sealed from the same origin
 * already. Answers whether it wrote.
 */
export async function storeProjectSecret(
  db: Queryable,
  project: { namespace: string; name: string },
  name: ProjectSecretName,
  secret: { origin: ProjectSecretOrigin; seal: () => string } | null,
): Promise<boolean> {
  const columns = PROJECT_SECRETS[name];
  const row = await db('projects').where(project).first(columns.origin);
  if (!row) return false;
  const origin = secret?.origin ?? null;
  if (row[columns.origin] === origin) return false;
  await db('projects')
    .where(project)
    .update({ [columns.sealed]: secret ? secret.seal() : null, [columns.origin]: origin });
  return true;
}

/** One of a project's secrets as the operator stored it, opened; undefined when it stored none. */
export async function storedProjectSecret(db: Queryable, keys: ProjectSecretKeys, projectId: number, name: ProjectSecretName): Promise<string | undefined> {
  const column = PROJECT_SECRETS[name].sealed;
  const row = await db('projects').where({ id: projectId }).first(column);
  const sealed = row?.[column] as string | null | undefined;
  return sealed ? openProjectSecret(keys, sealed) : undefined;
}
