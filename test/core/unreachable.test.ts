/**
 * isDatabaseUnreachable: the one rule that tells a database out of reach (503 unavailable) from a
 * fault (500). Real errors where they can be had here: a refused connection, a pool that timed out,
 * a connection cut by pg_terminate_backend, and query errors that must stay faults.
 */
import knexFactory from 'knex';
import { isDatabaseUnreachable } from '@hearth/core/db';
import { TEST_DATABASE_URL } from '../support/env';
import { createTestDatabase, type TestDatabase } from '../support/harness';
import { eventually } from '../support/wait';

async function errorOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

test('a refused connection', async () => {
  // A port nothing listens on: 1 is reserved and closed.
  const db = knexFactory({ client: 'pg', connection: 'postgres://x@127.0.0.1:1/x', pool: { min: 0, max: 1 }, log: { warn: () => undefined } });
  const err = await errorOf(() => db.raw('SELECT 1'));
  await db.destroy();
  expect((err as { code?: string }).code).toBe('ECONNREFUSED');
  expect(isDatabaseUnreachable(err)).toBe(true);
});

test('a pool that waited its acquire timeout (KnexTimeoutError)', async () => {
  // Its own log: knex would print the timeout it reports with a stack trace on the console.
  // The pool's one connection is held until the second query has timed out: the hold starts only
  // once it has its connection (on a busy machine that first connect may itself take a while).
  const db = knexFactory({
    client: 'pg',
    connection: database.url,
    pool: { min: 0, max: 1 },
    acquireConnectionTimeout: 2_000,
    log: { warn: () => undefined, error: () => undefined },
  });
  let release = (): void => undefined;
  try {
    let holding!: () => void;
    const connected = new Promise<void>((r) => (holding = r));
    const released = new Promise<void>((r) => (release = r));
    const held = db.transaction(async (trx) => {
      await trx.raw('SELECT 1');
      holding();
      await released;
    });
    await connected;
    const err = await errorOf(() => db.raw('SELECT 1'));
    release();
    expect((err as Error).name).toBe('KnexTimeoutError');
    expect(isDatabaseUnreachable(err)).toBe(true);
    await held;
  } finally {
    release();
    await db.destroy();
  }
});

test('a query whose connection is cut (57P01 admin_shutdown)', async () => {
  const db = knexFactory({ client: 'pg', connection: database.url, pool: { min: 0, max: 1 }, log: { warn: () => undefined } });
  const admin = knexFactory({ client: 'pg', connection: TEST_DATABASE_URL, pool: { min: 0, max: 1 } });
  try {
    const pid = (await db.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const sleeping = errorOf(() => db.raw('SELECT pg_sleep(5)'));
    // The statement is running when its connection is cut.
    await eventually(
      async () =>
        (await admin.raw("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ? AND state = 'active' AND query LIKE 'SELECT pg_sleep%'", [pid])).rows[0]
          .n === 1,
      5000,
      10,
    );
    await admin.raw('SELECT pg_terminate_backend(?)', [pid]);
    const err = await sleeping;
    expect((err as { code?: string }).code).toBe('57P01');
    expect(isDatabaseUnreachable(err)).toBe(true);
  } finally {
    await admin.destroy();
    await db.destroy();
  }
});

test('query errors are faults, not outages', async () => {
  const { db } = database;
  const errors = [
    await errorOf(() => db.raw('SELEC 1')), // 42601 syntax_error
    await errorOf(() => db.raw('SELECT * FROM no_such_table')), // 42P01
    await errorOf(() => db.raw('SELECT 1/0')), // 22012
    await errorOf(() => db.raw('INSERT INTO plans (name) VALUES (NULL)')), // 23502 or 42703
  ];
  for (const err of errors) {
    expect(typeof (err as { code?: string }).code).toBe('string');
    expect(isDatabaseUnreachable(err)).toBe(false);
  }
  for (const err of [new TypeError('x is undefined'), new Error('boom'), null, undefined, 'ECONNREFUSED', { code: 23505 }]) {
    expect(isDatabaseUnreachable(err)).toBe(false);
  }
});

test('the other shapes of an unreachable server', () => {
  const coded = (code: string) => Object.assign(new Error(code), { code });
  for (const code of ['08006', '08001', '08P01', '57P02', '57P03', '53300', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENOTFOUND']) {
    expect(isDatabaseUnreachable(coded(code))).toBe(true);
  }
  expect(isDatabaseUnreachable(new Error('Connection terminated unexpectedly'))).toBe(true);
  expect(isDatabaseUnreachable(new Error('Connection terminated due to connection timeout'))).toBe(true);
  // Connecting to a name with two addresses: an AggregateError of both refusals.
  expect(isDatabaseUnreachable(new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], 'connect failed'))).toBe(true);
  expect(isDatabaseUnreachable(new Error('wrapped', { cause: coded('57P01') }))).toBe(true);
});
