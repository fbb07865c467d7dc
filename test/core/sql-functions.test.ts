/**
 * The database functions are source files (apps/core/src/<area>/sql/<name>.sql) applied after the
 * migrations by the repeatable step (sql-functions.ts): every function the database has is one file's,
 * a changed file is run again and only it, and no migration after the move defines a function.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { MIGRATIONS_DIR, applySqlFunctions, sqlFunctionFiles } from '@hearth/core/db';
import { type TestDatabase, createTestDatabase } from '../support/harness';

/** The migration that moved the functions into files; none after it may define one. */
const MOVED_AT = '20261202140000';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

/** The function a file defines: `CREATE OR REPLACE FUNCTION public.<name>(`, after comment lines if any. */
function definedIn(sql: string): string {
  const match = /^(?:--[^\n]*\n)*\s*CREATE OR REPLACE FUNCTION public\.(hearth_[a-z0-9_]+)\(/i.exec(sql);
  if (!match) throw new Error(`not one CREATE OR REPLACE FUNCTION public.hearth_…: ${sql.slice(0, 80)}`);
  return match[1];
}

test('each file defines one function, named as the file, in the sql/ folder of an area', () => {
  const files = sqlFunctionFiles();
  expect(files.length).toBeGreaterThan(40);
  for (const { file, sql } of files) {
    expect({ file, defines: definedIn(sql) }).toEqual({ file, defines: path.basename(file, '.sql') });
    expect({ file, functions: sql.match(/CREATE (OR REPLACE )?FUNCTION/gi)?.length }).toEqual({ file, functions: 1 });
    expect(file).toMatch(/^[a-z-]+\/sql\/hearth_[a-z0-9_]+\.sql$/);
  }
});

test('a migrated database has exactly the functions of the files, each as its file last applied', async () => {
  const live = await database.db.raw(`
    SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = 'public' AND p.proname LIKE 'hearth%' ORDER BY 1`);
  const files = sqlFunctionFiles();
  expect(live.rows.map((r: { proname: string }) => r.proname)).toEqual(files.map(({ sql }) => definedIn(sql)).sort());
  const recorded = await database.db('hearth_sql_functions').select('file');
  expect(recorded.map((r: { file: string }) => r.file).sort()).toEqual(files.map((f) => f.file).sort());
  // Nothing to do on a database that is up to date.
  expect(await applySqlFunctions(database.db)).toEqual([]);
});

test('a changed file is applied again, and only it; the function then answers as the file now says', async () => {
  const files = sqlFunctionFiles();
  const target = files.find((f) => f.file === 'db/sql/hearth_random_below.sql')!;
  const before = await database.db.raw('SELECT hearth_random_below(1) AS n');
  expect(before.rows[0].n).toBe('0');
  // The same function, its body changed: always the largest value below the bound (by way of a jsonb
  // `?`, which knex would take for a binding were it not escaped).
  const changed = target.sql.replace(
    /\$function\$[\s\S]*\$function\$/,
    `$function$ BEGIN RETURN CASE WHEN '{"a": 1}'::jsonb ? 'a' THEN p_below - 1 END; END $function$`,
  );
  expect(changed).not.toBe(target.sql);
  const edited = files.map((f) => (f === target ? { ...f, sql: changed } : f));
  expect(await applySqlFunctions(database.db, edited)).toEqual(['db/sql/hearth_random_below.sql']);
  expect((await database.db.raw('SELECT hearth_random_below(10) AS n')).rows[0].n).toBe('9');
  // Back as the sources have it.
  expect(await applySqlFunctions(database.db, files)).toEqual(['db/sql/hearth_random_below.sql']);
});

test('a file that fails stops the step with its name, and nothing of the step is kept', async () => {
  const files = sqlFunctionFiles();
  const broken = files.map((f) => (f.file === 'db/sql/hearth_random_id.sql' ? { ...f, sql: `${f.sql}\nSELECT no_such_column FROM players;` } : f));
  await expect(applySqlFunctions(database.db, broken)).rejects.toThrow(/^db\/sql\/hearth_random_id\.sql: /);
  const recorded = await database.db('hearth_sql_functions').where({ file: 'db/sql/hearth_random_id.sql' }).first();
  const sources = files.find((f) => f.file === 'db/sql/hearth_random_id.sql')!;
  expect(recorded.sha256).toBe(createHash('sha256').update(sources.sql).digest('hex'));
});

test('no migration after the functions moved into files defines a function: a function is changed by its file', () => {
  const later = readdirSync(MIGRATIONS_DIR).filter((name) => name.slice(0, 14) > MOVED_AT);
  for (const name of later) {
    const text = readFileSync(path.join(MIGRATIONS_DIR, name), 'utf8');
    expect({ name, definesFunction: /CREATE\s+(OR\s+REPLACE\s+)?FUNCTION/i.test(text) }).toEqual({ name, definesFunction: false });
  }
});
