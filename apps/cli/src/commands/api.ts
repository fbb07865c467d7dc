import { startApiServer } from '@hearth/api';
import { explainListenError, onShutdown, openRuntime, openStore, startCore } from '../runtime';

export async function runApi(): Promise<void> {
  const rt = openRuntime({ database: true, redis: true, masterKey: true });
  const objectStore = openStore(rt.config);
  if (!objectStore) rt.logger.warn('OBJECT_STORAGE_URL is not set: crash uploads and symbol files answer 503 unavailable');
  const core = await startCore(rt, { objectStore });
  const api = await startApiServer({
    core,
    port: rt.config.port,
    metricsPort: rt.config.metricsPort,
    trustedProxies: rt.config.trustedProxies,
    about: rt.config.apiDocument,
  }).catch((err) => {
    throw explainListenError(err, [
      { port: rt.config.port, variable: 'PORT', what: 'the API' },
      { port: rt.config.metricsPort, variable: 'METRICS_PORT', what: 'metrics' },
    ]);
  });
  rt.logger.info({ url: api.url, metrics: api.metricsUrl }, 'api listening');
  onShutdown(rt.logger, async () => {
    await api.close();
    await core.stop();
    await rt.close();
  });
}
