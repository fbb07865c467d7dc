import http from 'node:http';
import type { ApiDocumentAbout } from '@hearth/core';
import type { HearthCore } from '@hearth/core/hearth';
import { closeServer, listen, shownHost, startMetricsServer } from '@hearth/core/process';
import type { ProxyTrust } from '@hearth/core/net';
import { createApiApp } from './http/app';
import type { AnyRoute } from './http/route';
import { routeTable } from './routes';

export interface ApiServerOptions {
  core: HearthCore;
  port: number;
  host?: string;
  /** 0 picks a free port; null serves no metrics listener (tests). */
  metricsPort?: number | null;
  trustedProxies?: ProxyTrust;
  extraRoutes?: AnyRoute[];
  /** The OpenAPI document's contact and licence (config's apiDocument); absent: DEFAULT_API_ABOUT. */
  about?: ApiDocumentAbout;
  /** How long slow clients may take (defaults: SLOW_CLIENT_TIMEOUTS); tests shorten them. */
  timeouts?: Partial<SlowClientTimeouts>;
}

/**
 * What a slow client may take before the API answers 408 and closes the connection (slowloris: a
 * client that sends its headers or its body a byte at a time holds a socket and its memory). The
 * request's whole time is bounded for the largest body the API takes, a 20 MB crash upload on a
 * ~2 Mbit/s uplink; node checks the deadlines every `checkEveryMs`.
 */
export interface SlowClientTimeouts {
  headersMs: number;
  requestMs: number;
  checkEveryMs: number;
}

export const SLOW_CLIENT_TIMEOUTS: SlowClientTimeouts = { headersMs: 20_000, requestMs: 120_000, checkEveryMs: 5_000 };

export interface ApiServer {
  server: http.Server;
  url: string;
  metricsUrl: string | null;
  close(): Promise<void>;
}

/** Starts the API (and its metrics listener); `close` stops accepting, lets requests finish, then returns. */
export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const host = options.host ?? '0.0.0.0';
  const { handle, clientError, metrics, stopMetrics } = createApiApp({
    core: options.core,
    routes: routeTable(options.extraRoutes, options.about),
    trustedProxies: options.trustedProxies,
  });
  const timeouts = { ...SLOW_CLIENT_TIMEOUTS, ...options.timeouts };
  const server = http.createServer(
    { headersTimeout: timeouts.headersMs, requestTimeout: timeouts.requestMs, connectionsCheckingInterval: timeouts.checkEveryMs },
    handle,
  );
  server.on('clientError', clientError);
  server.keepAliveTimeout = 65_000; // longer than common load balancers' idle timeout
  const port = await listen(server, options.port, host);
  const metricsServer =
    options.metricsPort !== null && options.metricsPort !== undefined ? await startMetricsServer(metrics.registry, options.metricsPort, host) : null;

  return {
    server,
    url: `http://${shownHost(host)}:${port}`,
    metricsUrl: metricsServer?.url ?? null,
    close: async () => {
      await Promise.all([closeServer(server), metricsServer ? closeServer(metricsServer.server) : undefined]);
      stopMetrics();
    },
  };
}
