/**
 * The crash-upload queue joins its caller's transaction: a job queued in a transaction that rolls
 * back does not exist, one queued in a committed transaction does (the API's "recorded and queued,
 * or neither"). The migration installed pg-boss's schema and the queue with its retry policy.
 */
import PgBoss from 'pg-boss';
import { CRASH_QUEUE_SCHEMA, CRASH_UPLOAD_QUEUE, CRASH_UPLOAD_QUEUE_OPTIONS, crashQueueSender, enqueueCrashUpload, knexBindings } from '@hearth/core/crashes';
import { createTestDatabase, type TestDatabase } from '../support/harness';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

const jobs = async () =>
  (await database.db.raw(`SELECT data FROM ${CRASH_QUEUE_SCHEMA}.job WHERE name = ? ORDER BY created_on`, [CRASH_UPLOAD_QUEUE])).rows.map(
    (r: { data: unknown }) => r.data,
  );

test('the migration made the queue with its retry policy', async () => {
  const row = (await database.db.raw(`SELECT retry_limit, retry_backoff, expire_seconds FROM ${CRASH_QUEUE_SCHEMA}.queue WHERE name = ?`, [CRASH_UPLOAD_QUEUE]))
    .rows[0];
  expect(row).toEqual({ retry_limit: CRASH_UPLOAD_QUEUE_OPTIONS.retryLimit, retry_backoff: true, expire_seconds: CRASH_UPLOAD_QUEUE_OPTIONS.expireInSeconds });
});

test('a job queued in a rolled-back transaction does not exist; in a committed one it does', async () => {
  const sender = crashQueueSender(database.db);
  await expect(
    database.db.transaction(async (trx) => {
      await enqueueCrashUpload(sender, trx, { uploadId: 'rolled-back' });
      expect((await trx.raw(`SELECT count(*)::int AS n FROM ${CRASH_QUEUE_SCHEMA}.job WHERE data->>'uploadId' = 'rolled-back'`)).rows[0].n).toBe(1);
      throw new Error('roll back');
    }),
  ).rejects.toThrow('roll back');
  await database.db.transaction((trx) => enqueueCrashUpload(sender, trx, { uploadId: 'kept' }));
  expect(await jobs()).toEqual([{ uploadId: 'kept' }]);
});

test('a started boss receives the queued job', async () => {
  const boss = new PgBoss({ connectionString: database.url, schema: CRASH_QUEUE_SCHEMA, migrate: false, schedule: false, supervise: false });
  await boss.start();
  try {
    const [job] = await boss.fetch<{ uploadId: string }>(CRASH_UPLOAD_QUEUE);
    expect(job.data).toEqual({ uploadId: 'kept' });
    await boss.complete(CRASH_UPLOAD_QUEUE, job.id);
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
});

test('pg-boss placeholders become knex bindings, a value used twice bound twice, a literal ? escaped', () => {
  expect(knexBindings('SELECT $2, $1, $2 WHERE j ? $1', ['a', 'b'])).toEqual(['SELECT ?, ?, ? WHERE j \\? ?', ['b', 'a', 'b', 'a']]);
});
