import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HearthCore } from '@hearth/core';
import { RealtimeServer, type RealtimeServerOptions } from './server';
import { CLOSE } from './protocol';

export interface RealtimeProcessOptions extends Omit<RealtimeServerOptions, 'core'> {
  core: HearthCore;
  port: number;
  host?: string;
  /** 0 picks a free port; null (or absent) serves no metrics listener. */
  metricsPort?: number | null;
}

export interface RealtimeProcess {
  realtime: RealtimeServer;
  server: http.Server;
  /** ws://host:port/v1/realtime/socket */
  url: string;
  metricsUrl: string | null;
  /** Closes every socket with 1001 (going away), then stops listening. */
  close(): Promise<void>;
}

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

/**
 * `hearth realtime`: the socket on its own port, with the cluster's probes beside it (/healthz,
 * /readyz) and Prometheus metrics on a port of their own.
 */
export async function startRealtimeServer(options: RealtimeProcessOptions): Promise<RealtimeProcess> {
  const { core } = options;
  const host = options.host ?? '0.0.0.0';
  const realtime = new RealtimeServer(options);
  await realtime.start();

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      void Promise.all([core.db.raw('SELECT 1').then(() => true, () => false), core.coordination.ping()]).then(([db, redis]) => {
        const ready = db && redis && realtime.ready;
        json(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not-ready', postgres: db, redis, sockets: realtime.stats().connections });
      });
      return;
    }
    json(res, 404, { error: 'not-found', message: `No route ${req.method} ${path}; the socket is at ${realtime.path}.` });
  });
  realtime.attach(server);
  const port = await listen(server, options.port, host);
  const shownHost = host === '0.0.0.0' ? '127.0.0.1' : host;

  let metricsServer: http.Server | null = null;
  let metricsUrl: string | null = null;
  if (options.metricsPort !== null && options.metricsPort !== undefined) {
    metricsServer = http.createServer(async (req, res) => {
      if (req.url !== '/metrics') return void res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': realtime.metrics.registry.contentType });
      res.end(await realtime.metrics.registry.metrics());
    });
    const mport = await listen(metricsServer, options.metricsPort, host);
    metricsUrl = `http://${shownHost}:${mport}/metrics`;
  }

  return {
    realtime,
    server,
    url: `ws://${shownHost}:${port}${realtime.path}`,
    metricsUrl,
    close: async () => {
      await realtime.close(CLOSE.goingAway);
      await Promise.all([
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
        metricsServer ? new Promise<void>((resolve) => metricsServer!.close(() => resolve())) : Promise.resolve(),
      ]);
    },
  };
}
