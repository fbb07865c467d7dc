/**
 * Starts what a test talks to: a fresh database copied from the migrated template, Redis under a key
 * prefix of its own, the domain core, and the API listening on 127.0.0.1. Tests use real HTTP.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { stringify } from 'yaml';
import { type Clock, createLogger } from '@hearth/core';
import { HearthCore } from '@hearth/core/hearth';
import type { DashboardHosting } from '@hearth/core/dashboards';
import { type Db, createDb } from '@hearth/core/db';
import { DiskObjectStore, type ObjectStore } from '@hearth/core/storage';
import { RedisCoordination } from '@hearth/core/coord';
import { applyManifests, validateManifest, type AnyManifest } from '@hearth/core/manifests';
import type { ProxyTrust } from '@hearth/core/net';
import { startApiServer, type ApiServer, type AnyRoute, type SlowClientTimeouts } from '@hearth/api';
import { TEST_DATABASE_URL, TEST_REDIS_URL, databaseUrl, templateName } from './env';
import { type Manifests, standardManifests } from './manifests';
import { declareTestRoutes } from './contract';

export interface TestDatabase {
  name: string;
  url: string;
  db: Db;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `hearth_t_${randomBytes(6).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: TEST_DATABASE_URL, pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE ${name} TEMPLATE ${templateName()}`);
  await admin.destroy();
  const url = databaseUrl(name);
  // knex's own warnings (connections a test cuts on purpose) go to the tests' logger, not the console.
  const db = createDb(url, 10, createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'));
  return {
    name,
    url,
    db,
    drop: async () => {
      await db.destroy();
      const a = knexFactory({ client: 'pg', connection: TEST_DATABASE_URL, pool: { min: 0, max: 1 } });
      await a.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.destroy();
    },
  };
}

export interface ApiInstance {
  core: HearthCore;
  api: ApiServer;
  /** Base URL including /v1. */
  base: string;
  stop(): Promise<void>;
}

/** One API process: its own core (caches) over the shared database and Redis prefix. */
export async function startApiInstance(opts: {
  db: Db;
  redisPrefix: string;
  masterKey: Buffer;
  extraRoutes?: AnyRoute[];
  trustedProxies?: ProxyTrust;
  objectStore?: ObjectStore;
  /** Slow-client deadlines, shortened by the tests of slow clients. */
  timeouts?: Partial<SlowClientTimeouts>;
  /** Custom dashboards' hosting; default hosted, client secrets from the environment variables. */
  dashboards?: DashboardHosting;
  /** The core's clock (a TestClock the test advances); default the system's. */
  clock?: Clock;
}): Promise<ApiInstance> {
  const coordination = new RedisCoordination(TEST_REDIS_URL, { prefix: opts.redisPrefix });
  const core = new HearthCore({
    db: opts.db,
    coordination,
    masterKey: opts.masterKey,
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    objectStore: opts.objectStore,
    dashboards: opts.dashboards,
    clock: opts.clock,
  });
  await core.start();
  const api = await startApiServer({
    core,
    port: 0,
    host: '127.0.0.1',
    metricsPort: 0,
    extraRoutes: opts.extraRoutes,
    trustedProxies: opts.trustedProxies,
    timeouts: opts.timeouts,
  });
  // The test client checks answers against the document; the test's own routes are not in it.
  declareTestRoutes(opts.extraRoutes ?? []);
  return {
    core,
    api,
    base: `${api.url}/v1`,
    stop: async () => {
      await api.close();
      await core.stop();
      await coordination.close();
    },
  };
}

export interface Harness extends ApiInstance {
  database: TestDatabase;
  db: Db;
  masterKey: Buffer;
  redisPrefix: string;
  /** Whole server keys minted by the applied ServerKey manifests, by manifest name. */
  serverKeys: Record<string, string>;
  apply(docs: AnyManifest[]): Promise<void>;
  /** Another API process over the same database and Redis (cross-process behaviour). */
  startAnotherApi(): Promise<ApiInstance>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  manifests?: Manifests;
  extraRoutes?: AnyRoute[];
  trustedProxies?: ProxyTrust;
  /** Object storage of the API processes; default a fresh folder on disk, removed at close. */
  objectStore?: ObjectStore;
  /** The clock of every API process's core (a TestClock the test advances); default the system's. */
  clock?: Clock;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const database = await createTestDatabase();
  const masterKey = randomBytes(32);
  const redisPrefix = `hearth-test:${randomBytes(6).toString('hex')}:`;
  const storageFolder = options.objectStore ? undefined : await mkdtemp(path.join(os.tmpdir(), 'hearth-objects-'));
  const objectStore = options.objectStore ?? new DiskObjectStore(storageFolder!);
  const instance = await startApiInstance({
    db: database.db,
    redisPrefix,
    masterKey,
    extraRoutes: options.extraRoutes,
    trustedProxies: options.trustedProxies,
    objectStore,
    clock: options.clock,
  });
  const serverKeys: Record<string, string> = {};
  const others: ApiInstance[] = [];

  const apply = async (docs: AnyManifest[]) => {
    const loaded = docs.map((doc, i) => ({ doc: validateManifest(JSON.parse(JSON.stringify(doc)), `test#${i + 1}`), origin: `test#${i + 1}` }));
    const results = await applyManifests(database.db, loaded, instance.core.bus);
    for (const r of results) if (r.serverKey) serverKeys[r.name] = r.serverKey.key;
  };
  await apply(options.manifests ?? standardManifests());

  return {
    ...instance,
    database,
    db: database.db,
    masterKey,
    redisPrefix,
    serverKeys,
    apply,
    startAnotherApi: async () => {
      const other = await startApiInstance({ db: database.db, redisPrefix, masterKey, extraRoutes: options.extraRoutes, objectStore, clock: options.clock });
      others.push(other);
      return other;
    },
    close: async () => {
      for (const other of others) await other.stop();
      await instance.stop();
      await database.drop();
      if (storageFolder) await rm(storageFolder, { recursive: true, force: true });
    },
  };
}

/** Manifests as YAML, for tests of `hearth apply`. */
export function toYaml(docs: AnyManifest[]): string {
  return docs.map((d) => stringify(d)).join('---\n');
}
