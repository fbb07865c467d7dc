import { startApiServer } from '@hearth/api';
import { onShutdown, openRuntime, openStore, startCore } from '../runtime';

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
  });
  rt.logger.info({ url: api.url, metrics: api.metricsUrl }, 'api listening');
  onShutdown(rt.logger, async () => {
    await api.close();
    await core.stop();
    await rt.close();
  });
}
