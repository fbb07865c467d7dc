import { startApiServer } from '@hearth/api';
import { openRuntime } from '../runtime';
import { openStore, serveOverCore, startCore } from '../serving';

export async function runApi(): Promise<void> {
  const rt = openRuntime({ database: true, redis: true, masterKey: true });
  const objectStore = openStore(rt.config);
  if (!objectStore) rt.logger.warn('OBJECT_STORAGE_URL is not set: crash uploads and symbol files answer 503 unavailable');
  const core = await startCore(rt, { objectStore });
  const { port, metricsPort, trustedProxies, apiDocument } = rt.config;
  await serveOverCore(rt, core, 'api', { port, variable: 'PORT', what: 'the API' }, () =>
    startApiServer({ core, port, metricsPort, trustedProxies, about: apiDocument }),
  );
}
