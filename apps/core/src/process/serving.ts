/**
 * What every listening process (API, realtime) does the same way: listen, expose Prometheus metrics
 * on a port of their own, answer readiness from PostgreSQL and Redis, and stop listening gracefully.
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

/** Serves `/metrics` on its own port; answers the listener and its URL. */
export async function startMetricsServer(registry: MetricsRegistry, port: number, host: string): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(async (req, res) => {
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': registry.contentType });
    res.end(await registry.metrics());
  });
  const bound = await listen(server, port, host);
  return { server, url: `http://${shownHost(host)}:${bound}/metrics` };
}

/** Readiness: PostgreSQL answers a query and the coordination (Redis) answers a ping. */
export async function readiness(deps: { db: Db; coordination: Coordination }): Promise<{ ready: boolean; postgres: boolean; redis: boolean }> {
  const [postgres, redis] = await Promise.all([deps.db.raw('SELECT 1').then(() => true, () => false), deps.coordination.ping()]);
  return { ready: postgres && redis, postgres, redis };
}
