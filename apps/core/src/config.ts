import { type ProxyTrust, parseTrustedProxies } from './net/client-address';

/**
 * Process configuration from environment variables, read once at start.
 * A missing or malformed variable stops the process with a message that names it.
 */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${reason}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function port(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(name, `must be a port number 0-65535, got "${raw}"`);
  return n;
}

function url(env: Env, name: string, protocols: string[], required: boolean): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    if (required) throw new ConfigError(name, 'is required');
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'is not a URL');
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(name, `must start with ${protocols.join(' or ')}`);
  return raw;
}

/** HEARTH_MASTER_KEY: 32 bytes, base64 or hex. It encrypts signing keys at rest and keys the cursor MACs. */
function masterKey(env: Env, required: boolean): Buffer | undefined {
  const raw = env.HEARTH_MASTER_KEY;
  if (raw === undefined || raw === '') {
    if (required) throw new ConfigError('HEARTH_MASTER_KEY', 'is required (32 bytes, base64 or hex)');
    return undefined;
  }
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new ConfigError('HEARTH_MASTER_KEY', 'must decode to exactly 32 bytes (base64 or hex)');
  return key;
}

/** REDIS_PREFIX: prepended to every Redis key and channel, so deployments can share one Redis. */
function redisPrefix(env: Env): string {
  const raw = env.REDIS_PREFIX;
  if (raw === undefined || raw === '') return 'hearth:';
  if (!/^[\x21-\x7e]{1,64}$/.test(raw)) throw new ConfigError('REDIS_PREFIX', 'must be 1-64 printable ASCII characters without spaces');
  return raw;
}

function trustedProxies(env: Env): ProxyTrust {
  if (env.HEARTH_TRUST_PROXY !== undefined && env.HEARTH_TRUST_PROXY !== '') {
    throw new ConfigError('HEARTH_TRUST_PROXY', 'is replaced by HEARTH_TRUSTED_PROXIES (a hop count, or a list of proxy addresses and CIDR ranges)');
  }
  try {
    return parseTrustedProxies(env.HEARTH_TRUSTED_PROXIES);
  } catch (err) {
    throw new ConfigError('HEARTH_TRUSTED_PROXIES', (err as Error).message);
  }
}

/**
 * Where crash uploads and symbol files are kept (docs/crashes.md): OBJECT_STORAGE_URL is
 * `s3://BUCKET[/PREFIX]` (with S3_ENDPOINT, S3_REGION, S3_FORCE_PATH_STYLE; credentials from the AWS
 * SDK's default chain) or `file:///ABSOLUTE/FOLDER`. Absent: no object store.
 */
export type ObjectStorageConfig =
  { kind: 's3'; bucket: string; prefix: string; endpoint?: string; region: string; forcePathStyle: boolean } | { kind: 'disk'; folder: string };

/** S3 bucket names: 3-63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

function objectStorage(env: Env): ObjectStorageConfig | undefined {
  const raw = env.OBJECT_STORAGE_URL;
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError('OBJECT_STORAGE_URL', 'is not a URL (s3://BUCKET[/PREFIX] or file:///ABSOLUTE/FOLDER)');
  }
  if (parsed.protocol === 'file:') {
    if (parsed.host !== '') throw new ConfigError('OBJECT_STORAGE_URL', 'a file URL names no host: file:///ABSOLUTE/FOLDER');
    const folder = decodeURIComponent(parsed.pathname).replace(/\/+$/, '');
    if (folder === '') throw new ConfigError('OBJECT_STORAGE_URL', 'a file URL must name a folder other than /');
    return { kind: 'disk', folder };
  }
  if (parsed.protocol !== 's3:') throw new ConfigError('OBJECT_STORAGE_URL', 'must start with s3:// or file://');
  const bucket = parsed.hostname;
  if (!BUCKET.test(bucket))
    throw new ConfigError('OBJECT_STORAGE_URL', `"${bucket}" is not an S3 bucket name (3-63 lower-case letters, digits, dots, hyphens)`);
  if (parsed.port !== '' || parsed.username !== '' || parsed.password !== '' || parsed.search !== '' || parsed.hash !== '') {
    throw new ConfigError('OBJECT_STORAGE_URL', 'an s3 URL is s3://BUCKET[/PREFIX], with no port, credentials, query or fragment');
  }
  const prefix = parsed.pathname.replace(/^\/+|\/+$/g, '');
  if (prefix !== '' && !/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/.test(prefix)) {
    throw new ConfigError('OBJECT_STORAGE_URL', 'the prefix may hold only letters, digits, ".", "_", "-" and "/"');
  }
  const region = env.S3_REGION || 'us-east-1';
  if (!/^[a-z0-9-]{1,64}$/.test(region)) throw new ConfigError('S3_REGION', `"${region}" is not a region name`);
  const forcePathStyleRaw = env.S3_FORCE_PATH_STYLE || 'false';
  if (forcePathStyleRaw !== 'true' && forcePathStyleRaw !== 'false') throw new ConfigError('S3_FORCE_PATH_STYLE', 'must be true or false');
  return {
    kind: 's3',
    bucket,
    prefix: prefix === '' ? '' : `${prefix}/`,
    endpoint: url(env, 'S3_ENDPOINT', ['http:', 'https:'], false),
    region,
    forcePathStyle: forcePathStyleRaw === 'true',
  };
}

/**
 * Who answers for this deployment's API and under what terms, as its OpenAPI document's `info.contact`
 * and `info.license` say (docs/api-conventions.md "The OpenAPI document"): they are the operator's,
 * not Hearth's. HEARTH_API_CONTACT is an https or mailto URL; HEARTH_API_LICENSE an SPDX identifier
 * (`Apache-2.0`, `LicenseRef-Acme-Terms`) or an https URL of the terms.
 */
export interface ApiDocumentAbout {
  contact: { name: string; url?: string; email?: string };
  license: { name: string; identifier?: string; url?: string };
}

/** Until the operator says: the deployment's operators and their own terms, named as such. */
export const DEFAULT_API_ABOUT: ApiDocumentAbout = {
  contact: { name: 'the operators of this deployment' },
  license: { name: "this deployment's terms", identifier: 'LicenseRef-Deployment-Terms' },
};

/** An SPDX license expression of identifiers and LicenseRef-s joined by AND, OR and WITH, in parentheses or not. */
const SPDX_EXPRESSION = /^\(?[A-Za-z0-9.+-]+\)?( (AND|OR|WITH) \(?[A-Za-z0-9.+-]+\)?)*$/;

function apiDocumentAbout(env: Env): ApiDocumentAbout {
  const contactRaw = env.HEARTH_API_CONTACT || '';
  const licenseRaw = env.HEARTH_API_LICENSE || '';
  let contact = DEFAULT_API_ABOUT.contact;
  if (contactRaw.startsWith('mailto:')) {
    const email = contactRaw.slice('mailto:'.length);
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new ConfigError('HEARTH_API_CONTACT', `"${contactRaw}" is not a mailto: address`);
    contact = { name: email, email };
  } else if (contactRaw !== '') {
    const link = url(env, 'HEARTH_API_CONTACT', ['https:'], true) as string;
    contact = { name: new URL(link).host, url: link };
  }
  let license = DEFAULT_API_ABOUT.license;
  if (licenseRaw.startsWith('https://')) license = { name: 'terms', url: url(env, 'HEARTH_API_LICENSE', ['https:'], true) };
  else if (licenseRaw !== '') {
    if (!SPDX_EXPRESSION.test(licenseRaw))
      throw new ConfigError('HEARTH_API_LICENSE', `"${licenseRaw}" is neither an SPDX expression (Apache-2.0, LicenseRef-Acme) nor an https URL`);
    license = { name: licenseRaw, identifier: licenseRaw };
  }
  return { contact, license };
}

function dashboards(env: Env): HearthConfig['dashboards'] {
  const hosted = env.HEARTH_DASHBOARDS || 'on';
  if (hosted !== 'on' && hosted !== 'off') throw new ConfigError('HEARTH_DASHBOARDS', 'must be on or off');
  const secretsDir = env.HEARTH_DASHBOARD_SECRETS_DIR || undefined;
  if (secretsDir !== undefined && !secretsDir.startsWith('/')) throw new ConfigError('HEARTH_DASHBOARD_SECRETS_DIR', 'must be an absolute path');
  return { hosted: hosted === 'on', secretsDir };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface HearthConfig {
  databaseUrl?: string;
  redisUrl?: string;
  redisPrefix: string;
  masterKey?: Buffer;
  port: number;
  metricsPort: number;
  realtimePort: number;
  logLevel: string;
  /** HEARTH_TRUSTED_PROXIES: which hops in front of us may tell the client's address, host and protocol. */
  trustedProxies: ProxyTrust;
  /** OBJECT_STORAGE_URL and the S3_* variables; absent: no object store. */
  objectStorage?: ObjectStorageConfig;
  /** HEARTH_DASHBOARDS (`on`, the default, or `off`) and HEARTH_DASHBOARD_SECRETS_DIR: docs/dashboards.md. */
  dashboards: { hosted: boolean; secretsDir?: string };
  /** HEARTH_API_CONTACT and HEARTH_API_LICENSE: the OpenAPI document's contact and licence. */
  apiDocument: ApiDocumentAbout;
}

export interface ConfigNeeds {
  database?: boolean;
  redis?: boolean;
  masterKey?: boolean;
}

/** A configuration with what its needs required: loadConfig refused it otherwise, so no caller checks again. */
export type LoadedConfig<N extends ConfigNeeds> = HearthConfig &
  (N['database'] extends true ? { databaseUrl: string } : unknown) &
  (N['redis'] extends true ? { redisUrl: string } : unknown) &
  (N['masterKey'] extends true ? { masterKey: Buffer } : unknown);

export function loadConfig<N extends ConfigNeeds = Record<string, never>>(env: Env = process.env, needs: N = {} as N): LoadedConfig<N> {
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  return {
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:'], needs.database ?? false),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:'], needs.redis ?? false),
    redisPrefix: redisPrefix(env),
    masterKey: masterKey(env, needs.masterKey ?? false),
    port: port(env, 'PORT', 8080),
    metricsPort: port(env, 'METRICS_PORT', 9090),
    realtimePort: port(env, 'REALTIME_PORT', 8081),
    logLevel,
    trustedProxies: trustedProxies(env),
    objectStorage: objectStorage(env),
    dashboards: dashboards(env),
    apiDocument: apiDocumentAbout(env),
  } as LoadedConfig<N>; // each required part was refused above when absent
}
