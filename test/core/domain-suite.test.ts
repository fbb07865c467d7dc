/**
 * test/support/domain.ts, the domain suites' harness: each test's writes are rolled back after it,
 * the manifests applied before the file's tests stay, and a service's own transaction nests inside
 * the test's (a savepoint) rather than committing past it.
 */
import { domainSuite } from '../support/domain';

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
