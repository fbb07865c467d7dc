/**
 * test/support/domain.ts, the domain suites' harness: each test's writes are rolled back after it,
 * the manifests applied before the file's tests stay, and a service's own transaction nests inside
 * the test's (a savepoint) rather than committing past it. A refusal the database raises is rolled
 * back to the savepoint `suite.refusal` takes, so the test's transaction goes on after it.
 */
import { domainSuite } from '../support/domain';
import { currency } from '../support/manifests';

const suite = domainSuite();
let madeInFirst = '';

test('a test writes through the services inside its transaction', async () => {
  const { id, env } = await suite.player('alpha-live');
  madeInFirst = id;
  await suite.core.players.rename(suite.db, env, id, { displayName: 'Kept only here' });
  expect((await suite.core.players.get(suite.db, env, id)).displayName).toBe('Kept only here');
  // Outside the transaction nothing of it is visible yet.
  expect(await suite.core.db('players').where({ id }).first()).toBeUndefined();
});

test('the next test sees none of it, and the applied manifests are still there', async () => {
  expect(madeInFirst).not.toBe('');
  expect(await suite.db('players').where({ id: madeInFirst }).first()).toBeUndefined();
  expect(await suite.db('players').count({ n: '*' })).toEqual([{ n: '0' }]);
  expect((await suite.environment('alpha-live')).name).toBe('alpha-live');
});

test('a manifest applied in a test is read by it; a move the engine refuses leaves the test’s transaction usable', async () => {
  await suite.apply([currency('scratch', { environment: 'alpha-live', name: 'Scratch', scope: 'account', kind: 'balance', max: 5 })]);
  const { id, env } = await suite.player('alpha-live');
  await suite.core.economy.move(suite.db, env, id, 'scratch', 'credit', { amount: 5, reason: 'setup' });
  const refused = await suite.expectRefusal(
    () => suite.core.economy.move(suite.db, env, id, 'scratch', 'credit', { amount: 1, reason: 'over' }),
    'balance-cap',
  );
  expect(refused.details).toMatchObject({ held: 5, requested: 1 });
  // Without the savepoint PostgreSQL would refuse every statement after the error until the rollback.
  expect((await suite.core.economy.ledger(suite.db, env, id, {})).items.map((e) => e.amount)).toEqual([5]);
});

test('the manifest applied in the last test is gone', async () => {
  expect(await suite.db('currencies').where({ key: 'scratch' }).first()).toBeUndefined();
});
