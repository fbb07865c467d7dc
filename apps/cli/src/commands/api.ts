import { HearthCore } from '@hearth/core';
import { startApiServer } from '@hearth/api';
import { onShutdown, openRuntime } from '../runtime';

export async function runApi(): Promise<void> {
  const rt = openRuntime({ database: true, redis: true, masterKey: true });
  const core = new HearthCore({ db: rt.db, coordination: rt.coordination, masterKey: rt.config.masterKey!, logger: rt.logger });
  await core.start();
  const api = await startApiServer({
    core,
    port: rt.config.port,
    metricsPort: rt.config.metricsPort,
    trustProxy: process.env.HEARTH_TRUST_PROXY === '1',
  });
  rt.logger.info({ url: api.url, metrics: api.metricsUrl }, 'api listening');
  onShutdown(rt.logger, async () => {
    await api.close();
    await core.stop();
    await rt.close();
  });
}
