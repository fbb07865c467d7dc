/**
 * runStatement against a real database: on the pool a named prepared statement on the driver, prepared
 * once per connection and announced as knex announces its queries (the query metrics and the bench
 * count them); inside a transaction, a statement of that transaction.
 */
import { inTransaction, preparedStatement, runStatement } from '@hearth/core/db';
import { poolUsage } from '@hearth/core/process';
import { type TestDatabase, createTestDatabase } from '../support/harness';

let database: TestDatabase;
const INSERT = preparedStatement('statement_probe_insert', 'INSERT INTO statement_probe (n, label) VALUES (?, ?) RETURNING n, label');
const COUNT = preparedStatement('statement_probe_count', 'SELECT count(*)::int AS count FROM statement_probe');
const count = async () => (await runStatement<{ count: number }>(database.db, COUNT, []))[0].count;

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.raw('CREATE TABLE statement_probe (n integer PRIMARY KEY, label text NOT NULL)');
});
afterAll(async () => {
  await database?.drop();
});

test("the `?` text becomes the driver's numbered placeholders; a name keeps one text", () => {
  expect(INSERT.text).toBe('INSERT INTO statement_probe (n, label) VALUES ($1, $2) RETURNING n, label');
  expect(preparedStatement('statement_probe_insert', INSERT.sql)).toEqual(INSERT);
  expect(() => preparedStatement('statement_probe_insert', 'SELECT 1')).toThrow(/another text/);
});

test('on the pool: rows answered, prepared once per connection, announced like a knex query, connection given back', async () => {
  const events: string[] = [];
  const onQuery = (q: { sql: string }) => events.push(`query ${q.sql}`);
  const onResponse = () => events.push('response');
  database.db.on('query', onQuery).on('query-response', onResponse);
  try {
    expect(await runStatement(database.db, INSERT, [1, 'one'])).toEqual([{ n: 1, label: 'one' }]);
    expect(events).toEqual([`query ${INSERT.text}`, 'response']);
  } finally {
    database.db.removeListener('query', onQuery).removeListener('query-response', onResponse);
  }
  // Many runs at once over the pool's connections: each connection prepares the statement once.
  await Promise.all(Array.from({ length: 40 }, (_, i) => runStatement(database.db, INSERT, [100 + i, `n${i}`])));
  expect(await count()).toBe(41);
  // The 40 runs waited for and used every connection of the pool, so whichever one answers this has it.
  const prepared = await database.db.raw("SELECT statement FROM pg_prepared_statements WHERE name = 'statement_probe_insert'");
  expect(prepared.rows).toEqual([{ statement: INSERT.text }]);
  expect(poolUsage(database.db).used).toBe(0);
});

test("a refused statement throws the driver's error (its SQLSTATE), announces query-error and gives the connection back", async () => {
  const errors: unknown[] = [];
  const onError = (err: unknown) => errors.push(err);
  database.db.on('query-error', onError);
  try {
    await expect(runStatement(database.db, INSERT, [1, 'again'])).rejects.toMatchObject({ code: '23505' });
  } finally {
    database.db.removeListener('query-error', onError);
  }
  expect(errors).toHaveLength(1);
  expect(poolUsage(database.db).used).toBe(0);
  expect(await count()).toBe(41);
});

test('inside a transaction it is one of its statements: rolled back with it', async () => {
  await expect(
    inTransaction(database.db, async (trx) => {
      await runStatement(trx, INSERT, [7, 'seven']);
      expect((await runStatement<{ count: number }>(trx, COUNT, []))[0].count).toBe(42);
      throw new Error('roll back');
    }),
  ).rejects.toThrow('roll back');
  expect(await count()).toBe(41);
});
