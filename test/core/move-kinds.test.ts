/**
 * The money engine's kinds are one list (MOVE_KINDS): the dispatcher hearth_move.sql is written from
 * it, and each kind's function is a function file.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MOVE_KINDS, dispatcherSql } from '@hearth/core/economy';
import { sqlFunctionFiles } from '@hearth/core/db';

test('economy/sql/hearth_move.sql is what MOVE_KINDS writes (make sql)', () => {
  const file = readFileSync(path.join(__dirname, '..', '..', 'apps', 'core', 'src', 'economy', 'sql', 'hearth_move.sql'), 'utf8');
  expect(file).toBe(dispatcherSql());
});

test("each kind's function is a function file, and the dispatcher has a branch for each kind", () => {
  const files = new Set(sqlFunctionFiles().map((f) => path.basename(f.file, '.sql')));
  const dispatcher = dispatcherSql();
  for (const [kind, { fn }] of Object.entries(MOVE_KINDS)) {
    expect({ kind, fn, file: files.has(fn) }).toEqual({ kind, fn, file: true });
    expect(dispatcher).toMatch(new RegExp(`WHEN [^\\n]*'${kind}'[^\\n]* THEN\\n\\s+RETURN ${fn}\\(`));
  }
  expect(Object.keys(MOVE_KINDS)).toHaveLength(18);
});
