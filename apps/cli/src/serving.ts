/**
 * What the long-running commands share (api, realtime, dev, operator, crash-worker): the domain core
 * over a runtime, the object store, their ports, and stopping on SIGTERM. Apart from runtime.ts so
 * that the short commands load none of it.
 */
import net from 'node:net';
import type { HearthConfig, Logger } from '@hearth/core';
import { HearthCore } from '@hearth/core/hearth';
import { dashboardSecretsFrom } from '@hearth/core/dashboards';
import { type ObjectStore, openObjectStore } from '@hearth/core/storage';
import { processStopping } from '@hearth/core/process';
import { CliError } from './output';
import type { Runtime, RuntimeNeeds } from './runtime';

/**
 * The object store OBJECT_STORAGE_URL names, for the processes that keep crash uploads and symbol
 * files (API, crash workers); undefined when it names none (their crash routes answer 503).
 */
export function openStore(config: HearthConfig): ObjectStore | undefined {
  return openObjectStore(config.objectStorage, config.masterKey);
}

/** The domain core over a runtime, started (API and realtime processes; the API passes its object store). */
export async function startCore(rt: Runtime<RuntimeNeeds & { masterKey: true }>, options: { objectStore?: ObjectStore } = {}): Promise<HearthCore> {
  const dashboards = { hosted: rt.config.dashboards.hosted, secrets: dashboardSecretsFrom(process.env, rt.config.dashboards.secretsDir) };
  const core = new HearthCore({
    db: rt.db,
    coordination: rt.coordination,
    masterKey: rt.config.masterKey,
    logger: rt.logger,
    objectStore: options.objectStore,
    dashboards,
  });
  await core.start();
  return core;
}

/** A port this process is about to listen on, and the variable that moves it. */
export interface PortUse {
  port: number;
  variable: string;
  what: string;
}

/**
 * Refuses, in one line that names the variables to set, when a port is taken (another `hearth dev`,
 * another service): checked before anything starts, so nothing is half up. Port 0 (any) is skipped.
 */
export async function ensurePortsFree(uses: PortUse[]): Promise<void> {
  const taken: PortUse[] = [];
  for (const use of uses) if (use.port !== 0 && !(await portIsFree(use.port))) taken.push(use);
  if (taken.length) throw portsInUse(taken);
}

export function portsInUse(taken: PortUse[]): CliError {
  const list = taken.map((u) => `${u.port} (${u.what}; set ${u.variable} to move it)`).join(', ');
  return new CliError(`port${taken.length > 1 ? 's' : ''} in use: ${list}`);
}

/** A server of a process over the core (the API, the sessions socket): where it listens, and how it closes. */
export interface CoreServer {
  url: string;
  metricsUrl: string | null;
  close(): Promise<void>;
}

/**
 * Serves over the core until SIGTERM: `start` listens on `port` and on METRICS_PORT (a port taken is
 * the line naming its variable); on shutdown the server closes, then the core, then the runtime.
 */
export async function serveOverCore(rt: Runtime, core: HearthCore, name: string, port: PortUse, start: () => Promise<CoreServer>): Promise<void> {
  const server = await start().catch((err) => {
    throw explainListenError(err, [port, { port: rt.config.metricsPort, variable: 'METRICS_PORT', what: 'metrics' }]);
  });
  rt.logger.info({ url: server.url, metrics: server.metricsUrl }, `${name} listening`);
  onShutdown(rt.logger, async () => {
    await server.close();
    await core.stop();
    await rt.close();
  });
}

/** A listen error as the line naming its port's variable, when it is one of `uses`. */
export function explainListenError(err: unknown, uses: PortUse[]): unknown {
  const { code, port } = err as { code?: string; port?: number };
  const use = uses.find((u) => u.port === port);
  return code === 'EADDRINUSE' && use ? portsInUse([use]) : err;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    // Unspecified host: the dual-stack wildcard collides with a listener on any address of the port.
    probe.listen({ port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/** Runs `stop` once on SIGTERM or SIGINT, then exits. */
export function onShutdown(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    processStopping.begun = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 25_000);
    force.unref();
    stop()
      .then(() => process.exit(0))
      .catch((err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}
