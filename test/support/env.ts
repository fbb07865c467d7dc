import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MIGRATIONS_DIR, sqlFunctionFiles } from '@hearth/core/db';

/**
 * The real services of `make services` (the suites' own PostgreSQL cluster on 55433, without fsync;
 * .ci/services.sh); override with TEST_DATABASE_URL / TEST_REDIS_URL.
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://hearth:hearth@127.0.0.1:55433/hearth';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function databaseUrl(name: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A migrated template database named by the migrations' content: each test file copies it. */
export function templateName(): string {
  const hash = createHash('sha256');
  for (const file of fs.readdirSync(MIGRATIONS_DIR).sort()) hash.update(file).update(fs.readFileSync(path.join(MIGRATIONS_DIR, file)));
  // The function files too: a template is the schema and the functions as the sources have them.
  for (const { file, sql } of sqlFunctionFiles()) hash.update(file).update(sql);
  return `hearth_tpl_${hash.digest('hex').slice(0, 12)}`;
}
