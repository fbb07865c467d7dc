import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type { Logger } from '../logger';
import { bundledMigrations } from './bundled-migrations';
import { applySqlFunctions } from './sql-functions';

export type Db = Knex;
export type Tx = Knex.Transaction;
/** Either the pool or a transaction: services take this so a caller can run them inside its own transaction. */
export type Queryable = Knex | Knex.Transaction;

export const MIGRATIONS_DIR = path.resolve(__dirname, '../../../../migrations');

/**
 * How long a query waits for a pooled connection before failing (knex's default is a minute). A
 * database that is down refuses at once; this bounds the other cases (a hung server, a pool held by
 * slow work), so a request hears 503 `unavailable` well before a client's own timeout.
 */
export const ACQUIRE_TIMEOUT_MS = 5_000;

/** `logger`, when given, takes knex's own warnings (a connection that ended, one that could not be made) as log lines. */
export function createDb(databaseUrl: string, poolMax = 10, logger?: Logger): Db {
  return knexFactory({
    client: 'pg',
    connection: databaseUrl,
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
    ...(logger && {
      log: {
        warn: (message: string) => logger.warn({ knex: message }, 'database'),
        error: (message: string) => logger.error({ knex: message }, 'database'),
        deprecate: (method: string, alternative: string) => logger.warn({ knex: `${method} is deprecated; use ${alternative}` }, 'database'),
        debug: (message: string) => logger.debug({ knex: message }, 'database'),
      },
    }),
    migrations: bundledMigrations
      ? { migrationSource: bundledMigrationSource(bundledMigrations), tableName: 'knex_migrations' }
      : { directory: MIGRATIONS_DIR, loadExtensions: ['.ts'], tableName: 'knex_migrations' },
  });
}

/** knex's source of the bundle's migrations, in name order (the time each name starts with), loaded when knex first asks. */
function bundledMigrationSource(load: () => ReadonlyMap<string, Knex.Migration>): Knex.MigrationSource<string> {
  let loaded: ReadonlyMap<string, Knex.Migration> | undefined;
  const migrations = () => (loaded ??= load());
  return {
    getMigrations: async () => [...migrations().keys()].sort(),
    getMigrationName: (name) => name,
    getMigration: async (name) => {
      const migration = migrations().get(name);
      if (!migration) throw new Error(`no bundled migration ${name}`); // knex asks only for names getMigrations gave
      return migration;
    },
  };
}

/** The schema migrations not yet applied, then the function files whose text changed (sql-functions.ts). */
export async function migrate(db: Db): Promise<{ migrations: string[]; functions: string[] }> {
  const [, applied] = await db.migrate.latest();
  const functions = await applySqlFunctions(db);
  return { migrations: applied as string[], functions };
}

/** As `migrate`, answering the migrations it applied. */
export async function migrateLatest(db: Db): Promise<string[]> {
  return (await migrate(db)).migrations;
}

/** PostgreSQL's unique-violation code, for the few places that turn a race into a clean refusal or a retry. */
export const UNIQUE_VIOLATION = '23505';
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === UNIQUE_VIOLATION;
}
