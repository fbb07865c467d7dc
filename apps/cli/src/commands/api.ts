import { startApiServer } from '@hearth/api';
import { onShutdown, openRuntime, startCore } from '../runtime';

export async function runApi(): Promise<void> {
  const rt = openRuntime({ database: true, redis: true, masterKey: true });
  const core = await startCore(rt);
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
