/**
 * An API process of its own for test/crashes/upload-memory.test.ts, so that its RSS is its own:
 * the real API over the test's database, Redis and a storage folder, trusting X-Forwarded-For from
 * loopback. It samples its RSS every few milliseconds and answers `rss` with the current figure and
 * the peak since the last `rss-reset`; `stop` stops it.
 */
import { createLogger } from '@hearth/core';
import { HearthCore } from '@hearth/core/hearth';
import { DiskObjectStore } from '@hearth/core/storage';
import { RedisCoordination } from '@hearth/core/coord';
import { createDb } from '@hearth/core/db';
import { parseTrustedProxies } from '@hearth/core/net';
import { startApiServer } from '@hearth/api';

async function main(): Promise<void> {
  const env = (name: string) =>
    process.env[name] ??
    (() => {
      throw new Error(`${name} is not set`);
    })();
  const db = createDb(env('UPLOAD_TEST_DATABASE_URL'), 10);
  const coordination = new RedisCoordination(env('UPLOAD_TEST_REDIS_URL'), { prefix: env('UPLOAD_TEST_REDIS_PREFIX') });
  const core = new HearthCore({
    db,
    coordination,
    masterKey: Buffer.from(env('UPLOAD_TEST_MASTER_KEY'), 'hex'),
    logger: createLogger('warn'),
    objectStore: new DiskObjectStore(env('UPLOAD_TEST_STORAGE')),
  });
  await core.start();
  const api = await startApiServer({ core, port: 0, host: '127.0.0.1', metricsPort: null, trustedProxies: parseTrustedProxies('loopback') });

  let peak = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 2);
  process.on(
    'message',
    (message: { type?: string }) =>
      void (async () => {
        if (message?.type === 'rss-reset') {
          peak = process.memoryUsage.rss();
          process.send!({ type: 'rss-reset', rss: peak });
        } else if (message?.type === 'rss') {
          const rss = process.memoryUsage.rss();
          process.send!({ type: 'rss', rss, peak: Math.max(peak, rss) });
        } else if (message?.type === 'stop') {
          clearInterval(sampler);
          await api.close();
          await core.stop();
          await coordination.close();
          await db.destroy();
          process.exit(0);
        }
      })(),
  );
  process.send!({ type: 'ready', base: `${api.url}/v1` });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
