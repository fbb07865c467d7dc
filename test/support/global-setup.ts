import knexFactory from 'knex';
import { createDb, migrateLatest } from '@hearth/core/db';
import { TEST_DATABASE_URL, databaseUrl, templateName } from './env';
import { buildTestBundle } from './test-bundle';

/**
 * Makes (once per migration set) the migrated template database that every test file copies, and
 * builds the `hearth` bundle the tests start as a process (test-bundle.ts): set in HEARTH_TEST_BIN,
 * which the test workers inherit.
 */
export default async function globalSetup(): Promise<void> {
  process.env.HEARTH_TEST_BIN ??= await buildTestBundle();
  // One connection, so the session-level advisory lock and CREATE DATABASE share it.
  const admin = knexFactory({ client: 'pg', connection: TEST_DATABASE_URL, pool: { min: 1, max: 1 } });
  const template = templateName();
  try {
    await admin.raw('SELECT pg_advisory_lock(4242)');
    const exists = await admin('pg_database').where({ datname: template }).first();
    if (!exists) {
      await admin.raw(`CREATE DATABASE ${template}`);
      const db = createDb(databaseUrl(template), 1);
      try {
        await migrateLatest(db);
      } catch (err) {
        await db.destroy();
        await admin.raw(`DROP DATABASE IF EXISTS ${template}`);
        throw err;
      }
      await db.destroy();
    }
    await admin.raw('SELECT pg_advisory_unlock(4242)');
  } catch (err) {
    throw new Error(`tests need PostgreSQL at ${TEST_DATABASE_URL} (run \`make services\`): ${(err as Error).message}`);
  } finally {
    await admin.destroy();
  }
}
