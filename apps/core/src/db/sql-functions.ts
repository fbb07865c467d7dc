/**
 * The database functions (the money engine's moves, the stacks, the saves...) are source: one file
 * per function, `apps/core/src/<area>/sql/<name>.sql`, a `CREATE OR REPLACE FUNCTION` that is the
 * live definition. A function is changed by editing its file. After the schema migrations, the
 * repeatable step runs every file whose content differs from what was last applied (their SHA-256 in
 * hearth_sql_functions), in one transaction, one process at a time. The schema itself stays in the
 * ordered migrations; a function no longer wanted is dropped by a migration (after the release that
 * stopped calling it) and its file removed. docs/architecture.md "Database functions".
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { bundledSqlFunctions } from './bundled-sql-functions';

/** apps/core/src: where the areas' `sql/` folders are. */
export const CORE_SOURCE_DIR = path.resolve(__dirname, '..');

export interface SqlFunctionFile {
  /** The path under apps/core/src, with `/` (`economy/sql/hearth_move.sql`). */
  file: string;
  sql: string;
}

/** Every function file, by path: compiled into the bundle, or read from the sources. */
export function sqlFunctionFiles(): SqlFunctionFile[] {
  if (bundledSqlFunctions) return [...bundledSqlFunctions];
  const files: SqlFunctionFile[] = [];
  for (const area of readdirSync(CORE_SOURCE_DIR, { withFileTypes: true })) {
    if (!area.isDirectory()) continue;
    const folder = path.join(CORE_SOURCE_DIR, area.name, 'sql');
    let names: string[];
    try {
      names = readdirSync(folder).filter((name) => name.endsWith('.sql'));
    } catch {
      continue;
    }
    for (const name of names) files.push({ file: `${area.name}/sql/${name}`, sql: readFileSync(path.join(folder, name), 'utf8') });
  }
  return files.sort((a, b) => a.file.localeCompare(b.file));
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** One key for the advisory lock of the step: two processes migrating at once apply each file once. */
const LOCK_KEY = 4_711_004;

/**
 * Runs every file whose text changed since it was last applied (all of them on a new database), and
 * answers their paths. Function bodies are not checked at creation (`check_function_bodies` off, as
 * pg_dump does), so the files need no order among themselves; a mistake in a body shows when it runs.
 */
export async function applySqlFunctions(db: Knex, files: SqlFunctionFile[] = sqlFunctionFiles()): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.raw('SELECT pg_advisory_xact_lock(?)', [LOCK_KEY]);
    const applied = new Map<string, string>(
      (await tx('hearth_sql_functions').select('file', 'sha256')).map((r: { file: string; sha256: string }) => [r.file, r.sha256]),
    );
    await tx.raw('SET LOCAL check_function_bodies = off');
    const ran: string[] = [];
    for (const { file, sql } of files) {
      const hash = sha256(sql);
      if (applied.get(file) === hash) continue;
      try {
        // knex reads every `?` as a binding, even with none given: escaped, a jsonb `?` operator stays one.
        await tx.raw(sql.replace(/\?/g, '\\?'));
      } catch (err) {
        throw new Error(`${file}: ${(err as Error).message}`);
      }
      await tx('hearth_sql_functions').insert({ file, sha256: hash, applied_at: tx.fn.now() }).onConflict('file').merge();
      ran.push(file);
    }
    return ran;
  });
}
