/**
 * The money engine's migration (migrations/20261126170000_money_engine.ts) replaced the credit's
 * one statement, whose idempotency records kept the move's outcome row, with the engine's, whose
 * records keep the Movement answered. Held here on a database of its own, migrated step by step: a
 * credit made by the replaced function before the upgrade, retried under its key after it, is
 * replayed (the same Movement, `replayed: true`) and not made again: the balance holds it once.
 */
import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { CursorCodec } from '@hearth/core';
import { EconomyService } from '@hearth/core/economy';
import { createDb, type Db } from '@hearth/core/db';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import { TEST_DATABASE_URL, databaseUrl } from '../support/env';

const REPLACED = '20261123194000_idempotent_currency_move.ts';
const name = `hearth_upgrade_${randomBytes(6).toString('hex')}`;
const admin = knexFactory({ client: 'pg', connection: TEST_DATABASE_URL, pool: { min: 0, max: 1 } });
let db: Db;

beforeAll(async () => {
  await admin.raw(`CREATE DATABASE ${name}`);
  db = createDb(databaseUrl(name), 2);
});
afterAll(async () => {
  await db?.destroy();
  await admin.raw(`DROP DATABASE IF EXISTS ${name}`);
  await admin.destroy();
});

test('a credit kept by the replaced statement is replayed after the upgrade, never credited again', async () => {
  // Up to and with the replaced function, one migration at a time.
  for (;;) {
    const [, applied] = (await db.migrate.up()) as [number, string[]];
    if (applied.length === 0) throw new Error(`${REPLACED} was never applied`);
    if (applied.includes(REPLACED)) break;
  }
  await db('plans').insert({ name: 'free', spec: {} });
  const [{ id: projectId }] = await db('projects').insert({ namespace: 'upgrade', name: 'upgrade', plan_name: 'free', spec: {} }).returning('id');
  const [{ id: environmentId }] = await db('environments')
    .insert({ project_id: projectId, namespace: 'upgrade', name: 'upgrade-live', app_key: 'upgrade-app' })
    .returning('id');
  await db('players').insert({ id: 'upgrade-player', environment_id: environmentId });
  await db('currencies').insert({
    environment_id: environmentId,
    key: 'gold',
    owner: 'upgrade/gold',
    name: 'Gold',
    scope: 'account',
    kind: 'balance',
    enabled: true,
  });
  const record = { environmentId, scope: 'server', key: 'credit-before-upgrade', fingerprint: 'the-same-request' };
  const { rows } = await db.raw('SELECT replayed, answer FROM hearth_idempotent_currency_move(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
    record.scope,
    record.key,
    record.fingerprint,
    environmentId,
    'upgrade-player',
    'gold',
    'credit',
    5,
    null,
    'setup',
    null,
    null,
    false,
    null,
    'upgrade-inventory',
    '9007199254740991',
  ]);
  expect(rows[0]).toMatchObject({ replayed: false, answer: { outcome: 'moved', inventory_id: 'upgrade-inventory' } });
  const entryId = String(rows[0].answer.ledger_id);

  await db.migrate.latest();

  const economy = new EconomyService(new CursorCodec(randomBytes(32)));
  const env = { id: environmentId } as EnvironmentContext;
  const retried = await economy.moveOnce(db, env, 'upgrade-player', 'gold', 'credit', { amount: 5, reason: 'setup' }, record);
  expect(retried).toEqual({ transactionId: entryId, inventoryId: 'upgrade-inventory', currencyKey: 'gold', amount: 5, balanceAfter: 5, replayed: true });
  expect(await db('balances').where({ inventory_id: 'upgrade-inventory', currency_key: 'gold' }).first('amount')).toEqual({ amount: '5' });
  expect(await db('ledger_entries').count({ n: '*' }).first()).toEqual({ n: '1' });
  // A new key after the upgrade acts, through the engine.
  const next = await economy.moveOnce(db, env, 'upgrade-player', 'gold', 'credit', { amount: 2, reason: 'after' }, { ...record, key: 'credit-after-upgrade' });
  expect(next).toMatchObject({ inventoryId: 'upgrade-inventory', amount: 2, balanceAfter: 7, replayed: false });
});
