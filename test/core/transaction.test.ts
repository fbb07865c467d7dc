/**
 * inTransaction and afterCommit against a real database: a core function joins its caller's
 * transaction (one commit, one rollback), and after-commit actions run only once the outermost
 * transaction has committed.
 */
import { afterCommit, inTransaction, isTransaction } from '@hearth/core/db';
import { type TestDatabase, createTestDatabase } from '../support/harness';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.raw('CREATE TABLE tx_probe (n integer PRIMARY KEY)');
});

afterAll(async () => {
  await database?.drop();
});

beforeEach(async () => {
  await database.db('tx_probe').delete();
});

const count = async () => Number((await database.db('tx_probe').count<{ count: string }[]>('* as count'))[0].count);

test('on the pool it opens a transaction; inside one it joins it without a savepoint', async () => {
  await inTransaction(database.db, async (outer) => {
    expect(isTransaction(outer)).toBe(true);
    await inTransaction(outer, async (inner) => {
      expect(inner).toBe(outer);
      await inner('tx_probe').insert({ n: 1 });
    });
  });
  expect(await count()).toBe(1);
});

test("a fault after a joined function's write rolls that write back with the caller's", async () => {
  await expect(
    inTransaction(database.db, async (outer) => {
      await inTransaction(outer, (inner) => inner('tx_probe').insert({ n: 2 }));
      throw new Error('fault after the write');
    }),
  ).rejects.toThrow('fault after the write');
  expect(await count()).toBe(0);
});

test('after-commit actions run once the outermost transaction commits, in order, before it answers', async () => {
  const seen: string[] = [];
  await inTransaction(database.db, async (outer) => {
    await inTransaction(outer, async (inner) => {
      await inner('tx_probe').insert({ n: 3 });
      await afterCommit(inner, async () => {
        // The write is visible outside the transaction: it has committed.
        seen.push(`first sees ${await count()}`);
      });
    });
    await afterCommit(outer, () => void seen.push('second'));
    seen.push('body done');
  });
  seen.push('answered');
  expect(seen).toEqual(['body done', 'first sees 1', 'second', 'answered']);
});

test('after-commit actions never run when the transaction rolls back', async () => {
  let ran = false;
  await expect(
    inTransaction(database.db, async (trx) => {
      await trx('tx_probe').insert({ n: 4 });
      await afterCommit(trx, () => void (ran = true));
      throw new Error('refused');
    }),
  ).rejects.toThrow('refused');
  expect(ran).toBe(false);
  expect(await count()).toBe(0);
});

test('on the pool an after-commit action runs at once; in a transaction knex opened, after its commit', async () => {
  let ran = 0;
  await afterCommit(database.db, () => void ran++);
  expect(ran).toBe(1);
  let inside = -1;
  await database.db.transaction(async (trx) => {
    await afterCommit(trx, () => void ran++);
    inside = ran;
  });
  await new Promise((resolve) => setImmediate(resolve));
  expect(inside).toBe(1);
  expect(ran).toBe(2);
});
