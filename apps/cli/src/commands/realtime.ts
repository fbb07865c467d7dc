import { startRealtimeServer } from '@hearth/realtime';
import { openRuntime } from '../runtime';
import { serveOverCore, startCore } from '../serving';

/**
 * `hearth realtime`: the sessions socket on REALTIME_PORT (default 8081) at /v1/realtime/socket, with
 * /healthz and /readyz beside it and Prometheus metrics on METRICS_PORT (default 9090). On SIGTERM every
 * socket is closed with 1012 (service restart) and clients reconnect to another pod.
 */
export async function runRealtime(): Promise<void> {
  const rt = openRuntime({ database: true, redis: true, masterKey: true });
  const core = await startCore(rt);
  const { realtimePort, metricsPort, trustedProxies } = rt.config;
  await serveOverCore(rt, core, 'realtime', { port: realtimePort, variable: 'REALTIME_PORT', what: 'the sessions socket' }, () =>
    startRealtimeServer({ core, port: realtimePort, metricsPort, trustedProxies }),
  );
}
