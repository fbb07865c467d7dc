import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HearthCore } from '@hearth/core';
import { createApiApp } from './http/app';
import type { AnyRoute } from './http/route';
import { routeTable } from './routes';

export interface ApiServerOptions {
  core: HearthCore;
  port: number;
  host?: string;
  /** 0 picks a free port; null serves no metrics listener (tests). */
  metricsPort?: number | null;
  trustProxy?: boolean;
  extraRoutes?: AnyRoute[];
}

export interface ApiServer {
  server: http.Server;
  url: string;
  metricsUrl: string | null;
  close(): Promise<void>;
}

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/** Starts the API (and its metrics listener); `close` stops accepting, lets requests finish, then returns. */
export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const host = options.host ?? '0.0.0.0';
  const { app, metrics } = createApiApp({ core: options.core, routes: routeTable(options.extraRoutes), trustProxy: options.trustProxy });
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000; // longer than common load balancers' idle timeout
  const port = await listen(server, options.port, host);
  const shownHost = host === '0.0.0.0' ? '127.0.0.1' : host;

  let metricsServer: http.Server | null = null;
  let metricsUrl: string | null = null;
  if (options.metricsPort !== null && options.metricsPort !== undefined) {
    metricsServer = http.createServer(async (req, res) => {
      if (req.url !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': metrics.registry.contentType });
      res.end(await metrics.registry.metrics());
    });
    const mport = await listen(metricsServer, options.metricsPort, host);
    metricsUrl = `http://${shownHost}:${mport}/metrics`;
  }

  return {
    server,
    url: `http://${shownHost}:${port}`,
    metricsUrl,
    close: async () => {
      await Promise.all([
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        }),
        metricsServer ? new Promise<void>((resolve) => metricsServer!.close(() => resolve())) : Promise.resolve(),
      ]);
    },
  };
}
