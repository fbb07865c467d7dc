/**
 * The money engine decides in SQL and words in TypeScript (docs/architecture.md "Money engine"): every
 * outcome a function file can raise is worded by the refusal table, as a refusal with a code of the
 * spec, and the table words nothing the SQL cannot raise. Read from the function files themselves
 * (apps/core/src/<area>/sql/), so a new outcome written in SQL without its words fails here, not as a
 * 500 in production. (What a move answers on success is held to its TypeBox shape by every API test:
 * the test client checks each answer against the OpenAPI document those shapes make.)
 */
import { ERROR_CODES, Refusal } from '@hearth/core';
import { ENGINE_OUTCOMES, refusalOf } from '@hearth/core/economy';
import { sqlFunctionFiles } from '@hearth/core/db';

/** Outcomes that are not refusals: a move made, an inventory chosen. */
const SUCCESSES = new Set(['moved', 'chosen']);
/** Raised by the TypeScript side (the idempotency record's conflict), not by a function file. */
const RAISED_IN_TYPESCRIPT = new Set(['idempotency-conflict']);
/** The saves' functions answer outcomes of their own, worded by the saves service. */
const NOT_THE_ENGINE = new Set(['saves/sql/hearth_save_write.sql', 'saves/sql/hearth_save_delete.sql']);

/**
 * The outcomes a function file names: `'outcome', '<name>'` in a raised object, `outcome := …'<name>'`,
 * or the first column of a row a move answers (`RETURN QUERY SELECT '<name>', …`).
 */
function outcomesIn(sql: string): Set<string> {
  const found = new Set<string>();
  for (const match of sql.matchAll(/'outcome',\s*'([a-z-]+)'/g)) found.add(match[1]);
  for (const match of sql.matchAll(/RETURN QUERY SELECT '([a-z-]+)'/g)) found.add(match[1]);
  for (const line of sql.split('\n')) {
    if (!/\boutcome\s*:=/.test(line)) continue;
    for (const match of line.matchAll(/(?:outcome\s*:=\s*|THEN\s+|ELSE\s+)'([a-z-]+)'/g)) found.add(match[1]);
  }
  return found;
}

const raised = new Map<string, string[]>();
for (const { file, sql } of sqlFunctionFiles()) {
  if (NOT_THE_ENGINE.has(file)) continue;
  for (const outcome of outcomesIn(sql)) raised.set(outcome, [...(raised.get(outcome) ?? []), file]);
}

test('every outcome the SQL raises is worded by the refusal table', () => {
  const refusals = [...raised.keys()].filter((outcome) => !SUCCESSES.has(outcome));
  expect(refusals.length).toBeGreaterThan(35);
  const unworded = refusals.filter((outcome) => !ENGINE_OUTCOMES.includes(outcome)).map((outcome) => `${outcome} (${raised.get(outcome)!.join(', ')})`);
  expect(unworded).toEqual([]);
});

test('the table words nothing the SQL cannot raise', () => {
  expect(ENGINE_OUTCOMES.filter((outcome) => !raised.has(outcome) && !RAISED_IN_TYPESCRIPT.has(outcome))).toEqual([]);
});

test('each outcome is worded as a refusal with a code of the spec and a message', () => {
  for (const outcome of ENGINE_OUTCOMES) {
    const refusal = refusalOf({
      outcome,
      currencyKey: 'gold',
      kind: 'debit',
      itemTypeKey: 'potion',
      cardTypeKey: 'ace',
      nodeKey: 'n',
      treeKey: 't',
      missing: ['x'],
    });
    expect(refusal).toBeInstanceOf(Refusal);
    expect({ outcome, code: ERROR_CODES.includes(refusal.code) }).toEqual({ outcome, code: true });
    expect(refusal.message.length).toBeGreaterThan(10);
  }
  expect(() => refusalOf({ outcome: 'no-such-outcome' })).toThrow(/unknown outcome/);
});
