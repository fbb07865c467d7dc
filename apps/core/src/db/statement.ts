/**
 * The hot path's single statements (a save write, a currency move) run on the pg driver itself as
 * named prepared statements, not through knex's query runner: knex's raw query costs about 65 µs of
 * CPU where the driver's own costs about 35 (measured with 10 connections, docs/performance.md), and a
 * prepared statement is parsed and planned once per connection instead of at every call. The pool is
 * still knex's (its acquire, release, timeouts and the connections' validation), and each run is
 * announced as knex announces its queries ('query', 'query-response', 'query-error' on the knex
 * instance), so the query metrics, the bench's query count and its statement capture see it the same.
 * Inside a transaction the statement runs through the transaction, as every other statement there.
 */
import type { Knex } from 'knex';
import type { Queryable } from './knex';
import { isTransaction } from './transaction';

export interface Statement {
  /** The prepared statement's name on every connection: one per text. */
  readonly name: string;
  /** The text with knex's `?` placeholders (for transactions and for anyone reading it). */
  readonly sql: string;
  /** The same text with the driver's `$1`, `$2`, ... placeholders. */
  readonly text: string;
}

const names = new Map<string, string>();

/** A statement from its `?` text; one name per statement, refused if another text took it. */
export function preparedStatement(name: string, sql: string): Statement {
  const taken = names.get(name);
  if (taken !== undefined && taken !== sql) throw new Error(`the prepared statement ${name} is another text already`);
  names.set(name, sql);
  let n = 0;
  // None of these statements has a `?` inside a string literal or an operator (jsonb's ? is not used).
  return { name, sql, text: sql.replace(/\?/g, () => `$${++n}`) };
}

interface DriverConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

let uid = 0;

/** Runs the statement on `db` (the pool, or a transaction) and answers its rows. */
export async function runStatement<Row>(db: Queryable, statement: Statement, values: unknown[]): Promise<Row[]> {
  if (isTransaction(db)) return (await db.raw(statement.sql, values as Knex.RawBinding[])).rows as Row[];
  const knex = db as Knex;
  const client = knex.client as { acquireConnection(): Promise<DriverConnection>; releaseConnection(c: DriverConnection): Promise<unknown> };
  const connection = await client.acquireConnection();
  // The driver's text (`$n`), as knex announces its own queries on PostgreSQL.
  const query = { sql: statement.text, bindings: values, __knexQueryUid: `statement-${++uid}`, method: 'raw' };
  knex.emit('query', query);
  try {
    const result = await connection.query({ name: statement.name, text: statement.text, values });
    knex.emit('query-response', result, query);
    return result.rows as Row[];
  } catch (err) {
    knex.emit('query-error', err, query);
    throw err;
  } finally {
    await client.releaseConnection(connection);
  }
}
