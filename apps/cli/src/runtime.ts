/**
 * What a command opens from its configuration (the database, the coordination, the logger) and
 * closes on the way out. What only the long-running commands need (HearthCore, the object store,
 * ports, shutdown) is serving.ts, so a command such as `hearth get` does not load it.
 */
import { type ConfigNeeds, InvalidationBus, type LoadedConfig, type Logger, createLogger, loadConfig } from '@hearth/core';
import { type Coordination, MemoryCoordination, RedisCoordination } from '@hearth/core/coord';
import { createDb, type Db } from '@hearth/core/db';
import { withDevDefaults } from './dev-connection';

/** What every command opening a runtime needs: the database. */
export type RuntimeNeeds = ConfigNeeds & { database: true };

export interface Runtime<N extends RuntimeNeeds = RuntimeNeeds> {
  config: LoadedConfig<N>;
  logger: Logger;
  db: Db;
  coordination: Coordination;
  close(): Promise<void>;
}

/** The database pool and the coordination (Redis when REDIS_URL is set, else in-process) of a config. */
export function connect(config: LoadedConfig<{ database: true }>, logger: Logger): Pick<Runtime, 'db' | 'coordination' | 'close'> {
  const db = createDb(config.databaseUrl, undefined, logger);
  const coordination: Coordination = config.redisUrl
    ? new RedisCoordination(config.redisUrl, { prefix: config.redisPrefix, onError: (err) => logger.warn({ err: err.message }, 'redis error') })
    : new MemoryCoordination();
  logConnections(coordination, logger);
  return {
    db,
    coordination,
    close: async () => {
      await coordination.close();
      await db.destroy();
    },
  };
}

/**
 * One line when a Redis connection is lost and one when the process has it back (with how long it was
 * gone): the pair an operator looks for after an outage (the counts are hearth_redis_*_total).
 */
function logConnections(coordination: Coordination, logger: Logger): void {
  const lostAt = new Map<string, number>();
  coordination.observeConnections?.((connection, event) => {
    if (event === 'lost') {
      lostAt.set(connection, Date.now());
      logger.warn({ connection }, 'redis connection lost; reconnecting');
    } else {
      const since = lostAt.get(connection);
      lostAt.delete(connection);
      logger.info({ connection, downSeconds: since === undefined ? undefined : (Date.now() - since) / 1000 }, 'redis connection recovered');
    }
  });
}

/**
 * The logger of a command. JSON lines, one per event, are what a cluster's log pipeline reads, so
 * every command writes them, even on a terminal; `hearth dev` on a terminal has a person reading it
 * and writes readable lines instead (pino-pretty). Piped or redirected, `hearth dev` writes JSON too.
 */
export function commandLogger(command: string, level: string, stdout: { isTTY?: boolean } = process.stdout): Logger {
  return createLogger(level, 'hearth', { readable: command === 'dev' && stdout.isTTY === true });
}

export function openRuntime<N extends RuntimeNeeds>(needs: N, env: NodeJS.ProcessEnv = process.env): Runtime<N> {
  const config = loadConfig(env, needs);
  const logger = commandLogger('service', config.logLevel);
  // N has database: true, which TypeScript does not resolve inside the generic LoadedConfig<N>.
  return { config, logger, ...connect(config as LoadedConfig<RuntimeNeeds>, logger) };
}

/**
 * Opens the database (and Redis when REDIS_URL is set, so running processes hear of changes). Without
 * DATABASE_URL (or HEARTH_MASTER_KEY) a command uses those of the `hearth dev` in ./.hearth and says
 * so on stderr (stdout stays the command's answer).
 */
export async function withRuntime<T, N extends { masterKey?: boolean }>(
  needs: N,
  fn: (rt: Runtime<N & { database: true }>, bus: InvalidationBus) => Promise<T>,
): Promise<T> {
  const env = withDevDefaults(process.env, (line) => process.stderr.write(`hearth: ${line}\n`));
  const rt = openRuntime({ ...needs, database: true as const }, env);
  const bus = new InvalidationBus(rt.coordination, (err) =>
    process.stderr.write(`hearth: warning: running processes were not told (${err.message}); they catch up within seconds\n`),
  );
  try {
    return await fn(rt, bus);
  } finally {
    await rt.close();
  }
}
