import path from 'node:path';
import knexFactory, { Knex } from 'knex';

export type Db = Knex;
export type Tx = Knex.Transaction;
/** Either the pool or a transaction: services take this so a caller can run them inside its own transaction. */
export type Queryable = Knex | Knex.Transaction;

export const MIGRATIONS_DIR = path.resolve(__dirname, '../../../../migrations');

export function createDb(databaseUrl: string, poolMax = 10): Db {
  return knexFactory({
    client: 'pg',
    connection: databaseUrl,
    pool: { min: 0, max: poolMax },
    migrations: { directory: MIGRATIONS_DIR, loadExtensions: ['.ts'], tableName: 'knex_migrations' },
  });
}

export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = await db.migrate.latest();
  return applied as string[];
}

/** PostgreSQL's unique-violation code, for the few places that turn a race into a clean refusal or a retry. */
export const UNIQUE_VIOLATION = '23505';
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === UNIQUE_VIOLATION;
}
