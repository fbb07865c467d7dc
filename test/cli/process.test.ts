/**
 * `hearth api` as a real process: bad configuration stops it with a line naming the variable; a good
 * one serves probes, the API, metrics on METRICS_PORT, and stops cleanly on SIGTERM.
 */
import { type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { applyManifests, validateManifest } from '@hearth/core/manifests';
import { type TestDatabase, createTestDatabase } from '../support/harness';
import { TEST_REDIS_URL } from '../support/env';
import { standardManifests } from '../support/manifests';
import { call } from '../support/http';
import { freePort, oneLine, runHearth, spawnHearth } from './run-hearth';
import { startS3Gateway } from '../support/s3-gateway';

jest.setTimeout(120_000);

let database: TestDatabase;
let serverKeys: Record<string, string>;
let validEnv: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  const docs = standardManifests();
  const results = await applyManifests(
    database.db,
    docs.map((doc, i) => ({ doc: validateManifest(JSON.parse(JSON.stringify(doc)), `test#${i + 1}`), origin: `test#${i + 1}` })),
  );
  serverKeys = Object.fromEntries(results.filter((r) => r.serverKey).map((r) => [r.name, r.serverKey!.key]));
  validEnv = {
    DATABASE_URL: database.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: `hearth-test:${randomBytes(6).toString('hex')}:`,
    HEARTH_MASTER_KEY: randomBytes(32).toString('hex'),
  };
});
afterAll(async () => {
  await database.drop();
});

describe('bad configuration stops `hearth api` with one line naming the variable', () => {
  const cases: { name: string; vars: () => Record<string, string | undefined>; line: RegExp }[] = [
    { name: 'DATABASE_URL missing', vars: () => ({ ...validEnv, DATABASE_URL: undefined }), line: /^hearth: DATABASE_URL: is required$/ },
    {
      name: 'DATABASE_URL not a postgres URL',
      vars: () => ({ ...validEnv, DATABASE_URL: 'mysql://localhost/x' }),
      line: /^hearth: DATABASE_URL: must start with postgres: or postgresql:$/,
    },
    { name: 'REDIS_URL missing', vars: () => ({ ...validEnv, REDIS_URL: undefined }), line: /^hearth: REDIS_URL: is required$/ },
    {
      name: 'REDIS_URL not a redis URL',
      vars: () => ({ ...validEnv, REDIS_URL: 'http://127.0.0.1:6379' }),
      line: /^hearth: REDIS_URL: must start with redis: or rediss:$/,
    },
    { name: 'REDIS_URL not a URL at all', vars: () => ({ ...validEnv, REDIS_URL: 'localhost' }), line: /^hearth: REDIS_URL: is not a URL$/ },
    { name: 'REDIS_PREFIX with a space', vars: () => ({ ...validEnv, REDIS_PREFIX: 'a b' }), line: /^hearth: REDIS_PREFIX: / },
    { name: 'HEARTH_MASTER_KEY missing', vars: () => ({ ...validEnv, HEARTH_MASTER_KEY: undefined }), line: /^hearth: HEARTH_MASTER_KEY: is required/ },
    {
      name: 'HEARTH_MASTER_KEY of 16 bytes',
      vars: () => ({ ...validEnv, HEARTH_MASTER_KEY: randomBytes(16).toString('base64') }),
      line: /^hearth: HEARTH_MASTER_KEY: must decode to exactly 32 bytes/,
    },
    {
      name: 'HEARTH_MASTER_KEY of 33 bytes in hex',
      vars: () => ({ ...validEnv, HEARTH_MASTER_KEY: randomBytes(33).toString('hex') }),
      line: /^hearth: HEARTH_MASTER_KEY: must decode to exactly 32 bytes/,
    },
    { name: 'PORT=abc', vars: () => ({ ...validEnv, PORT: 'abc' }), line: /^hearth: PORT: must be a port number 0-65535, got "abc"$/ },
    { name: 'PORT=70000', vars: () => ({ ...validEnv, PORT: '70000' }), line: /^hearth: PORT: must be a port number/ },
    { name: 'METRICS_PORT=1.5', vars: () => ({ ...validEnv, METRICS_PORT: '1.5' }), line: /^hearth: METRICS_PORT: must be a port number/ },
    { name: 'LOG_LEVEL=loud', vars: () => ({ ...validEnv, LOG_LEVEL: 'loud' }), line: /^hearth: LOG_LEVEL: must be one of/ },
    {
      name: 'HEARTH_TRUST_PROXY (replaced)',
      vars: () => ({ ...validEnv, HEARTH_TRUST_PROXY: '1' }),
      line: /^hearth: HEARTH_TRUST_PROXY: is replaced by HEARTH_TRUSTED_PROXIES/,
    },
    {
      name: 'HEARTH_TRUSTED_PROXIES=nonsense',
      vars: () => ({ ...validEnv, HEARTH_TRUSTED_PROXIES: '10.0.0.0/99' }),
      line: /^hearth: HEARTH_TRUSTED_PROXIES: must be a hop count or a list of addresses and CIDR ranges/,
    },
    {
      name: 'OBJECT_STORAGE_URL of another scheme',
      vars: () => ({ ...validEnv, OBJECT_STORAGE_URL: 'gs://bucket' }),
      line: /^hearth: OBJECT_STORAGE_URL: must start with s3:\/\/ or file:\/\/$/,
    },
    {
      name: 'S3_FORCE_PATH_STYLE=yes',
      vars: () => ({ ...validEnv, OBJECT_STORAGE_URL: 's3://bucket', S3_FORCE_PATH_STYLE: 'yes' }),
      line: /^hearth: S3_FORCE_PATH_STYLE: must be true or false$/,
    },
  ];

  test.each(cases)('$name', async (c) => {
    const run = await runHearth(['api'], c.vars(), 30_000);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(oneLine(run.stderr)).toMatch(c.line);
  });
});

interface Running {
  child: ChildProcess;
  port: number;
  metricsPort: number;
  output: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `hearth api` on ports picked here and waits (bounded) until it logs that it listens and
 * /healthz answers. A port taken by somebody else between picking and binding: try new ones.
 */
async function startApi(vars: Record<string, string>, attempts = 3): Promise<Running> {
  const port = await freePort();
  const metricsPort = await freePort();
  const child = spawnHearth(['api'], { ...vars, PORT: String(port), METRICS_PORT: String(metricsPort), LOG_LEVEL: 'info' });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let exited = false;
  void exit.then(() => (exited = true));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited) {
      if (attempts > 1 && output.includes('EADDRINUSE')) return startApi(vars, attempts - 1);
      throw new Error(`hearth api exited at start:\n${output}`);
    }
    // Only our process's own word says the port is ours; /healthz could be anybody's.
    if (output.includes('"msg":"api listening"')) {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(res.status).toBe(200);
      break;
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`hearth api did not start within 30 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, port, metricsPort, output: () => output, exit };
}

/** SIGTERM, then the exit within `withinMs` (killed and failed otherwise). */
async function stopApi(running: Running, withinMs = 5000): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  const started = Date.now();
  running.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), withinMs)));
  const outcome = await Promise.race([running.exit, timeout]);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    running.child.kill('SIGKILL');
    throw new Error(`hearth api did not exit within ${withinMs} ms of SIGTERM:\n${running.output()}`);
  }
  return { ...outcome, ms: Date.now() - started };
}

describe('`hearth api` with a good configuration', () => {
  let api: Running;
  let base: string;

  beforeAll(async () => {
    api = await startApi(validEnv);
    base = `http://127.0.0.1:${api.port}`;
  });
  afterAll(async () => {
    if (api.child.exitCode === null && api.child.signalCode === null) {
      api.child.kill('SIGKILL');
      await api.exit;
    }
  });

  test('a second one on the same PORT stops with one line naming PORT', async () => {
    const run = await runHearth(['api'], { ...validEnv, PORT: String(api.port), METRICS_PORT: String(await freePort()) }, 30_000);
    expect(run.code).toBe(1);
    expect(oneLine(run.stderr)).toBe(`hearth: port in use: ${api.port} (the API; set PORT to move it)`);
  });

  test('logs where it listens', () => {
    expect(api.output()).toContain(`"url":"http://127.0.0.1:${api.port}"`);
    expect(api.output()).toContain(`"metrics":"http://127.0.0.1:${api.metricsPort}/metrics"`);
  });

  test('/healthz and /readyz answer 200', async () => {
    const health = await call(base, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    const ready = await call(base, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', postgres: true, redis: true });
  });

  test('serves the API under /v1: the OpenAPI document and a route with a server key', async () => {
    const doc = await call(`${base}/v1`, 'GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\.1\./);
    expect(doc.body.info.version).toBe('1.0.0');
    expect(Object.keys(doc.body.paths)).toContain('/config/tables/{key}');

    const table = await call(`${base}/v1`, 'GET', '/config/tables/weapons', { token: serverKeys['alpha-live-key'] });
    expect(table.status).toBe(404);
    expect(table.body.error).toBe('not-found');
    const values = await call(`${base}/v1`, 'GET', '/config/values', { token: serverKeys['alpha-live-key'] });
    expect(values.status).toBe(200);
    expect(values.body).toEqual({ items: [], next: null });
  });

  test('METRICS_PORT serves hearth_http_requests_total labelled by route template', async () => {
    const res = await fetch(`http://127.0.0.1:${api.metricsPort}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('# TYPE hearth_http_requests_total counter');
    expect(text).toMatch(/^hearth_http_requests_total\{route="\/openapi\.json",method="GET",status="200"\} 1$/m);
    // The template, not the path asked: one series however many tables are asked for.
    expect(text).toMatch(/^hearth_http_requests_total\{route="\/config\/tables\/:key",method="GET",status="404"\} 1$/m);
    expect(text).not.toContain('route="/config/tables/weapons"');
    expect(text).toMatch(/^hearth_http_request_duration_seconds_count\{route="\/config\/values",method="GET",status="200"\} 1$/m);
    // Metrics are not on the API port.
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
  });

  test('SIGTERM stops it promptly with exit code 0, and the ports close', async () => {
    // An idle keep-alive connection (fetch keeps one) must not hold the shutdown up.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const stopped = await stopApi(api);
    expect({ code: stopped.code, signal: stopped.signal }).toEqual({ code: 0, signal: null });
    expect(stopped.ms).toBeLessThan(5000);
    expect(api.output()).toContain('"msg":"shutting down"');
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    await expect(fetch(`http://127.0.0.1:${api.metricsPort}/metrics`)).rejects.toThrow();
  });
});

describe('`hearth api` with Redis unreachable', () => {
  test('still starts and serves; /readyz stays 200 (the pod can serve) and names Redis; SIGTERM still exits 0', async () => {
    const closedPort = await freePort();
    const api = await startApi({ ...validEnv, REDIS_URL: `redis://127.0.0.1:${closedPort}` });
    try {
      const base = `http://127.0.0.1:${api.port}`;
      const ready = await call(base, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready', postgres: true, redis: false });
      const scraped = await (await fetch(`http://127.0.0.1:${api.metricsPort}/metrics`)).text();
      expect(scraped).toContain('hearth_dependency_up{dependency="redis"} 0');
      expect((await call(base, 'GET', '/healthz')).status).toBe(200);
      // Durable data lives in PostgreSQL: reads keep working, rate limits fail open.
      const values = await call(`${base}/v1`, 'GET', '/config/values', { token: serverKeys['alpha-live-key'] });
      expect(values.status).toBe(200);
    } finally {
      const stopped = await stopApi(api);
      expect({ code: stopped.code, signal: stopped.signal }).toEqual({ code: 0, signal: null });
    }
  });
});

describe('`hearth api` and OBJECT_STORAGE_URL', () => {
  test('unset: the symbol routes answer 503 unavailable', async () => {
    const api = await startApi(validEnv);
    try {
      const base = `http://127.0.0.1:${api.port}/v1`;
      const listed = await call(base, 'GET', '/crash-symbols/files', { token: serverKeys['alpha-live-key'] });
      expect({ status: listed.status, error: listed.body.error }).toEqual({ status: 503, error: 'unavailable' });
      expect(api.output()).toContain('OBJECT_STORAGE_URL is not set');
    } finally {
      api.child.kill('SIGTERM');
      await api.exit;
    }
  });

  test('s3://BUCKET/PREFIX on a real S3 server, credentials from the SDK chain: a symbol file lands there and is listed', async () => {
    const s3 = await startS3Gateway();
    try {
      const bucketStore = await s3.newStore({ prefix: 'deploy/' });
      const api = await startApi({
        ...validEnv,
        OBJECT_STORAGE_URL: `s3://${bucketStore.bucket}/deploy`,
        S3_ENDPOINT: s3.endpoint,
        S3_FORCE_PATH_STYLE: 'true',
        AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
      });
      try {
        const base = `http://127.0.0.1:${api.port}/v1`;
        const bytes = randomBytes(3000);
        const asked = await call(base, 'POST', '/crash-symbols/uploads', {
          token: serverKeys['alpha-live-key'],
          body: { label: 'Game', version: '2.0', fileName: 'Game.pdb', sizeBytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') },
        });
        expect(asked.status).toBe(200);
        expect(asked.body.url.startsWith(`${s3.endpoint}/${bucketStore.bucket}/deploy/symbols/`)).toBe(true);
        const put = await fetch(asked.body.url, { method: 'PUT', headers: asked.body.headers, body: bytes });
        expect(put.status).toBe(200);
        expect(await bucketStore.head(asked.body.key)).toEqual({ sizeBytes: 3000, sha256: createHash('sha256').update(bytes).digest('hex') });
        const listed = await call(base, 'GET', '/crash-symbols/files', { token: serverKeys['alpha-live-key'] });
        expect(listed.body.items).toEqual([{ label: 'Game', version: '2.0', name: 'Game.pdb', sizeBytes: 3000, updatedAt: expect.any(String) }]);
      } finally {
        api.child.kill('SIGTERM');
        await api.exit;
      }
    } finally {
      await s3.stop();
    }
  });
});
