/**
 * What every listening process (API, realtime, operator) does the same way: listen, expose Prometheus
 * metrics on a port of their own (with the probes of a process that has no other port), answer readiness from PostgreSQL and Redis, and stop listening gracefully.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Db } from '../db/knex';
import type { Coordination } from '../coord/coordination';

export function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/** The address to show for a listener: 0.0.0.0 is reachable as 127.0.0.1 from this machine. */
export function shownHost(host: string): string {
  return host === '0.0.0.0' ? '127.0.0.1' : host;
}

/** Stops accepting, lets requests in flight finish, and closes idle keep-alive connections. */
export function closeServer(server: http.Server, { dropAll = false } = {}): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    if (dropAll) server.closeAllConnections();
    else server.closeIdleConnections();
  });
}

/** A prom-client registry, structurally (the core does not depend on prom-client). */
export interface MetricsRegistry {
  contentType: string;
  metrics(): Promise<string>;
}

/** What a process without a port of its own (the operator) answers its probes with. */
export interface Probes {
  /** `ready` decides /readyz's status (200 or 503); the rest is shown in its body. */
  readiness(): { ready: boolean; [detail: string]: unknown };
}

/**
 * Serves `/metrics` on its own port, and with `probes` also `/healthz` (the process answers) and
 * `/readyz` there; answers the listener and its URL.
 */
export async function startMetricsServer(
  registry: MetricsRegistry,
  port: number,
  host: string,
  probes?: Probes,
): Promise<{ server: http.Server; url: string }> {
  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  const answer = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (probes && path === '/healthz') return json(res, 200, { status: 'ok' });
    if (probes && path === '/readyz') {
      const { ready, ...details } = probes.readiness();
      return json(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not-ready', ...details });
    }
    if (path !== '/metrics') return void res.writeHead(404).end();
    try {
      const text = await registry.metrics();
      res.writeHead(200, { 'Content-Type': registry.contentType }).end(text);
    } catch {
      res.writeHead(500).end();
    }
  };
  // answer never rejects: its one await is caught.
  const server = http.createServer((req, res) => void answer(req, res));
  const bound = await listen(server, port, host);
  return { server, url: `http://${shownHost(host)}:${bound}/metrics` };
}

/** What /readyz shows besides its verdict: PostgreSQL, and Redis where there is one (the embedded default coordinates in-process). */
export type ReadinessChecks = { postgres: boolean; redis: boolean } | { postgres: boolean; coordination: 'in-process' };

/**
 * Whether PostgreSQL answers a query and the coordination (Redis) a ping. Without Redis there is
 * nothing to ping: saying `redis: true` would claim a Redis that is not there.
 */
export async function dependencies(deps: { db: Db; coordination: Coordination }): Promise<ReadinessChecks> {
  const [postgres, redis] = await Promise.all([
    deps.db.raw('SELECT 1').then(
      () => true,
      () => false,
    ),
    deps.coordination.inProcess ? null : deps.coordination.ping(),
  ]);
  return redis === null ? { postgres, coordination: 'in-process' } : { postgres, redis };
}

/**
 * Readiness says whether this process can serve, not whether the dependencies every pod shares
 * answer: were it to follow them, one Redis blip would take every pod out of its Service at once,
 * although the API answers without Redis (rate limits fail open) and answers 503 for what needs
 * PostgreSQL either way. Their state is shown in the body, and in hearth_dependency_up, where the
 * alerts read it.
 */
export async function readiness(deps: { db: Db; coordination: Coordination }): Promise<{ ready: boolean; checks: ReadinessChecks }> {
  return { ready: true, checks: await dependencies(deps) };
}

/**
 * Whether this process has begun to stop (SIGTERM, or Ctrl-C, which the terminal also sends to
 * `hearth dev`'s embedded PostgreSQL): a database connection lost after that is expected, so what
 * watches connections says so at debug level instead of warning.
 */
export const processStopping = { begun: false };
