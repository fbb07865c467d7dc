/**
 * `make sql`: writes the database functions that are written from a list rather than by hand (today
 * the money engine's dispatcher, economy/sql/hearth_move.sql, from MOVE_KINDS). With `--check`, exits
 * 1 while a file differs (test/core/move-kinds.test.ts does the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { dispatcherSql } from './src/economy/move-kinds';

const FILES: Record<string, () => string> = { 'src/economy/sql/hearth_move.sql': dispatcherSql };

let stale = 0;
for (const [file, write] of Object.entries(FILES)) {
  const target = path.join(__dirname, file);
  const text = write();
  if (readFileSync(target, 'utf8') === text) continue;
  stale++;
  if (process.argv.includes('--check')) console.error(`apps/core/${file} is out of date: run make sql`);
  else writeFileSync(target, text);
}
if (process.argv.includes('--check') && stale > 0) process.exit(1);
