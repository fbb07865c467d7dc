/**
 * `hearth api` processes over a harness's database and Redis prefix, for the kill -9 suites: started
 * on free ports and answered once /readyz is 200, killed with SIGKILL, and stopped at the end.
 */
import path from 'node:path';
import type { Harness } from '../support/harness';
import { TEST_REDIS_URL } from '../support/env';
import { type HearthService, hearthEnv, startHearthService, waitReady } from '../support/hearth-process';
import { freePort } from '../support/ports';
import { stopProcess } from '../support/processes';

export interface ApiProcess {
  service: HearthService;
  port: number;
  /** The API's base URL (…/v1). */
  base: string;
  /** From start to /readyz answering 200. */
  readyMs: number;
}

export class ApiProcesses {
  /** Every process started, killed ones included. */
  readonly services: HearthService[] = [];

  /** `logDir` keeps each process's output as `<name>.log`; `env` adds to the harness's settings. */
  constructor(
    private readonly h: () => Harness,
    private readonly logDir: string,
    private readonly env: Record<string, string> = {},
  ) {}

  async start(name: string): Promise<ApiProcess> {
    const h = this.h();
    const port = await freePort();
    const started = Date.now();
    const service = startHearthService(
      name,
      ['api'],
      hearthEnv({
        DATABASE_URL: h.database.url,
        REDIS_URL: TEST_REDIS_URL,
        REDIS_PREFIX: h.redisPrefix,
        HEARTH_MASTER_KEY: h.masterKey.toString('hex'),
        PORT: String(port),
        METRICS_PORT: String(await freePort()),
        LOG_LEVEL: 'warn',
        ...this.env,
      }),
      path.join(this.logDir, `${name}.log`),
    );
    this.services.push(service);
    await waitReady(service, `http://127.0.0.1:${port}/readyz`, (message) => new Error(message));
    return { service, port, base: `http://127.0.0.1:${port}/v1`, readyMs: Date.now() - started };
  }

  async stopAll(): Promise<void> {
    for (const service of this.services) await stopProcess(service.child);
  }
}

/** SIGKILL, resolved once the process has exited. */
export function kill9(service: HearthService): Promise<void> {
  const gone = new Promise<void>((resolve) => service.child.once('exit', () => resolve()));
  service.child.kill('SIGKILL');
  return gone;
}
