import http from 'node:http';
import type { HearthCore } from '@hearth/core/hearth';
import { closeServer, listen, readiness, shownHost, startMetricsServer } from '@hearth/core/process';
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
  /** Drains: closes every socket with 1012 (service restart: reconnect elsewhere), then stops listening. */
  close(): Promise<void>;
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
      void readiness(core).then(({ ready: backends, checks }) => {
        const ready = backends && realtime.ready;
        json(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not-ready', ...checks, sockets: realtime.stats().connections });
      });
      return;
    }
    json(res, 404, { error: 'not-found', message: `No route ${req.method} ${path}; the socket is at ${realtime.path}.` });
  });
  realtime.attach(server);
  const port = await listen(server, options.port, host);
  const metricsServer =
    options.metricsPort !== null && options.metricsPort !== undefined ? await startMetricsServer(realtime.metrics.registry, options.metricsPort, host) : null;

  return {
    realtime,
    server,
    url: `ws://${shownHost(host)}:${port}${realtime.path}`,
    metricsUrl: metricsServer?.url ?? null,
    close: async () => {
      await realtime.close(CLOSE.serviceRestart);
      await Promise.all([closeServer(server, { dropAll: true }), metricsServer ? closeServer(metricsServer.server) : undefined]);
    },
  };
}
