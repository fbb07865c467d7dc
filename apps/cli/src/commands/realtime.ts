import { startRealtimeServer } from '@hearth/realtime';
import { explainListenError, onShutdown, openRuntime, startCore } from '../runtime';

/**
 * `hearth realtime`: the sessions socket on REALTIME_PORT (default 8081) at /v1/realtime/socket, with
 * /healthz and /readyz beside it and Prometheus metrics on METRICS_PORT (default 9090). On SIGTERM every
 * socket is closed with 1012 (service restart) and clients reconnect to another pod.
 */
export async function runRealtime(): Promise<void> {
  const rt = openRuntime({ database: true, redis: true, masterKey: true });
  const core = await startCore(rt);
  const realtime = await startRealtimeServer({
    core,
    port: rt.config.realtimePort,
    metricsPort: rt.config.metricsPort,
    trustedProxies: rt.config.trustedProxies,
  }).catch((err) => {
    throw explainListenError(err, [
      { port: rt.config.realtimePort, variable: 'REALTIME_PORT', what: 'the sessions socket' },
      { port: rt.config.metricsPort, variable: 'METRICS_PORT', what: 'metrics' },
    ]);
  });
  rt.logger.info({ url: realtime.url, metrics: realtime.metricsUrl }, 'realtime listening');
  onShutdown(rt.logger, async () => {
    await realtime.close();
    await core.stop();
    await rt.close();
  });
}
