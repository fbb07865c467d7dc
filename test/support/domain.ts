/**
 * The domain suites' harness: core's services (one `HearthCore`) over a database of the test file's
 * own, with no API process and no HTTP. The manifests are applied and committed once, before the
 * file's tests; each test then runs inside a transaction that is rolled back after it, so every test
 * starts from the same data and none can see what another wrote.
 *
 * For the rules of an area (who may send what, what a move refuses, what a purchase grants): what the
 * HTTP suites check (status codes, headers, validation, authentication) stays with startHarness.
 * A service that opens a transaction of its own gets a savepoint inside the test's.
 */
import { randomBytes } from 'node:crypto';
import { type ErrorDetails, type Logger, Refusal, createLogger } from '@hearth/core';
import { HearthCore } from '@hearth/core/hearth';
import { type AnyManifest, applyManifests, validateManifest } from '@hearth/core/manifests';
import { type EnvironmentContext, loadEnvironmentByAppKey } from '@hearth/core/tenancy';
import { MemoryCoordination } from '@hearth/core/coord';
import type { Tx } from '@hearth/core/db';
import { type TestDatabase, createTestDatabase } from './harness';
import { standardManifests } from './manifests';

export interface DomainSuite {
  /** The services, over the file's database (the caches read what beforeAll committed). */
  readonly core: HearthCore;
  /** The current test's transaction: pass it wherever a service takes its database. */
  readonly db: Tx;
  /** The environment of an app key, as core sees it. */
  environment(appKey: string): Promise<EnvironmentContext>;
  /** A new player of the environment (a server key's sign-in), made inside the test's transaction. */
  player(appKey: string): Promise<{ id: string; env: EnvironmentContext }>;
  /**
   * Applies manifests inside the test's transaction (rolled back with it, announced to no one): for
   * what core reads from the caller's database. A definition read through a process cache of
   * committed rows (item types, skill trees) does not see them.
   */
  apply(docs: AnyManifest[]): Promise<void>;
  /**
   * What `work` was refused with (it must throw a Refusal): code, message and, when it has them,
   * details, as the API's error body carries them but with the field named relative to core's input
   * (`reason`, where the API answers `body.reason`). `work` runs in a savepoint rolled back when it
   * throws: a move the money engine refuses raises an error in PostgreSQL, which would otherwise end
   * the test's transaction (as it ends any caller's).
   */
  refusal(work: () => Promise<unknown>): Promise<{ code: string; message: string; details?: ErrorDetails }>;
  /** Expects `work` refused with `code` (and, given, the field it names); answers the refusal. */
  expectRefusal(work: () => Promise<unknown>, code: string, field?: string): Promise<{ code: string; message: string; details?: ErrorDetails }>;
}

const loadedOf = (docs: AnyManifest[]) =>
  docs.map((doc, i) => ({ doc: validateManifest(JSON.parse(JSON.stringify(doc)), `test#${i + 1}`), origin: `test#${i + 1}` }));

/**
 * Declares the file's beforeAll/afterAll and beforeEach/afterEach; answers the suite, whose `db` is
 * the running test's transaction.
 */
export function domainSuite(options: { manifests?: AnyManifest[] } = {}): DomainSuite {
  let database: TestDatabase;
  let core: HearthCore;
  let coordination: MemoryCoordination;
  let trx: Tx | undefined;
  let players = 0;
  const environments = new Map<string, EnvironmentContext>();

  beforeAll(async () => {
    database = await createTestDatabase();
    coordination = new MemoryCoordination();
    const logger: Logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
    core = new HearthCore({ db: database.db, coordination, masterKey: randomBytes(32), logger });
    await core.start();
    await applyManifests(database.db, loadedOf(options.manifests ?? standardManifests()), core.bus);
  });
  afterAll(async () => {
    await core?.stop();
    await coordination?.close();
    await database?.drop();
  });
  beforeEach(async () => {
    trx = await database.db.transaction();
  });
  afterEach(async () => {
    await trx?.rollback();
    trx = undefined;
  });

  const suite: DomainSuite = {
    get core() {
      return core;
    },
    get db() {
      if (!trx) throw new Error('the domain suite’s transaction exists only while a test runs');
      return trx;
    },
    async environment(appKey) {
      const known = environments.get(appKey);
      if (known) return known;
      const env = await loadEnvironmentByAppKey(database.db, appKey);
      if (!env) throw new Error(`no environment ${appKey} among the suite's manifests`);
      environments.set(appKey, env);
      return env;
    },
    async player(appKey) {
      const env = await suite.environment(appKey);
      const { player } = await core.players.signIn(suite.db, env, 'server', `domain-player-${++players}`);
      return { id: player.id, env };
    },
    async apply(docs) {
      await applyManifests(suite.db, loadedOf(docs));
    },
    async refusal(work) {
      const db = suite.db;
      await db.raw('SAVEPOINT refusal');
      let error: unknown;
      try {
        await work();
      } catch (err) {
        error = err;
      }
      await db.raw(error === undefined ? 'RELEASE SAVEPOINT refusal' : 'ROLLBACK TO SAVEPOINT refusal');
      expect(error).toBeInstanceOf(Refusal);
      const { code, message, details } = error as Refusal;
      return details === undefined ? { code, message } : { code, message, details };
    },
    async expectRefusal(work, code, field) {
      const refusal = await suite.refusal(work);
      expect(refusal.code).toBe(code);
      if (field !== undefined) expect(refusal.details?.field).toBe(field);
      return refusal;
    },
  };
  return suite;
}
