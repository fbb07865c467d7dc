/**
 * The Dockerfile built into an image and run, with no Docker engine (`make image-test`): buildah
 * builds it (test/image/build.sh, which says how the base is made on a machine that cannot reach
 * Docker Hub), podman + runc run it as the chart runs it: the image's own user, a read-only root
 * filesystem with a tmpfs on /tmp. It prints its version, migrates a fresh database on the test
 * PostgreSQL, serves the API's probes, and stops on SIGTERM (tini forwards it) with exit code 0.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import knexFactory from 'knex';
import { MIGRATIONS_DIR } from '@hearth/core';
import { TEST_DATABASE_URL, TEST_REDIS_URL, databaseUrl } from '../support/env';
import { KUBE_TOOLS_BIN } from '../support/kube';
import { freePort } from '../support/ports';

jest.setTimeout(60_000);

const ROOT = path.resolve(__dirname, '..', '..');
const IMAGE = `localhost/hearth:test-${randomBytes(4).toString('hex')}`;
/** The store and settings build.sh uses (it writes containers.conf there). */
const CACHE = path.join(path.dirname(KUBE_TOOLS_BIN), 'image');
const STORAGE = ['--root', path.join(CACHE, 'storage'), '--runroot', path.join(CACHE, 'run'), '--storage-driver', 'overlay'];
/** As the chart's pods run: the image's user, nothing writable but /tmp. */
const AS_IN_THE_CHART = ['--read-only', '--tmpfs', '/tmp', '--network', 'host'];

interface Result { code: number | null; stdout: string; stderr: string }

function run(command: string, args: string[], timeoutMs: number): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, CONTAINERS_CONF: path.join(CACHE, 'containers.conf') }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const podman = (args: string[], timeoutMs = 60_000) => run('podman', [...STORAGE, ...args], timeoutMs);
const podmanOk = async (args: string[], timeoutMs?: number) => {
  const res = await podman(args, timeoutMs);
  if (res.code !== 0) throw new Error(`podman ${args.join(' ')} exited ${res.code}:\n${res.stderr}${res.stdout}`);
  return res.stdout;
};
const envArgs = (vars: Record<string, string>) => Object.entries(vars).flatMap(([k, v]) => ['--env', `${k}=${v}`]);

beforeAll(async () => {
  const built = await run('bash', [path.join(ROOT, 'test', 'image', 'build.sh'), IMAGE], 20 * 60_000);
  if (built.code !== 0) throw new Error(`test/image/build.sh exited ${built.code}:\n${built.stderr.split('\n').slice(-60).join('\n')}`);
  expect(built.stdout.trim()).toBe(IMAGE);
}, 20 * 60_000);

afterAll(async () => {
  await podman(['rmi', '--force', IMAGE]);
});

test('the image is configured as the Dockerfile says: tini runs `node dist/hearth.js`, as uid 10001, in /app', async () => {
  const [config] = JSON.parse(await podmanOk(['image', 'inspect', IMAGE])) as { Config: { User: string; Entrypoint: string[]; Cmd: string[]; WorkingDir: string; Env: string[]; ExposedPorts: Record<string, unknown> } }[];
  expect(config.Config).toMatchObject({ User: '10001:10001', Entrypoint: ['/usr/bin/tini', '--', 'node', 'dist/hearth.js'], Cmd: ['--help'], WorkingDir: '/app' });
  expect(config.Config.Env).toEqual(expect.arrayContaining(['NODE_ENV=production', 'HOME=/tmp']));
  expect(Object.keys(config.Config.ExposedPorts).sort()).toEqual(['8080/tcp', '8081/tcp', '9090/tcp']);
});

test('`hearth --version` runs in it, as a non-root user that cannot write /app', async () => {
  const version = await podman(['run', '--rm', ...AS_IN_THE_CHART, IMAGE, '--version']);
  expect(version).toMatchObject({ code: 0, stdout: `${JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version}\n` });
  const who = await podman(['run', '--rm', ...AS_IN_THE_CHART, '--entrypoint', 'sh', IMAGE, '-c', 'id -u; touch /app/x 2>/dev/null && echo writable || echo read-only']);
  expect(who).toMatchObject({ code: 0, stdout: '10001\nread-only\n' });
});

describe('on the test PostgreSQL and Redis', () => {
  const name = `hearth_i_${randomBytes(6).toString('hex')}`;
  const vars = {
    DATABASE_URL: databaseUrl(name),
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: `hearth-test:${randomBytes(6).toString('hex')}:`,
    HEARTH_MASTER_KEY: randomBytes(32).toString('hex'),
  };
  const admin = knexFactory({ client: 'pg', connection: TEST_DATABASE_URL, pool: { min: 0, max: 1 } });

  beforeAll(async () => {
    await admin.raw(`CREATE DATABASE ${name}`);
  });
  afterAll(async () => {
    await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.destroy();
  });

  test('`migrate` applies every migration to a fresh database, then finds it up to date', async () => {
    const migrations = fs.readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.ts')).sort();
    const first = await podman(['run', '--rm', ...AS_IN_THE_CHART, ...envArgs({ DATABASE_URL: vars.DATABASE_URL }), IMAGE, 'migrate', '--json']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ applied: migrations });
    const again = await podman(['run', '--rm', ...AS_IN_THE_CHART, ...envArgs({ DATABASE_URL: vars.DATABASE_URL }), IMAGE, 'migrate', '--json']);
    expect(JSON.parse(again.stdout)).toEqual({ applied: [] });
  });

  test('`api` serves /healthz and /readyz (PostgreSQL and Redis reached), and a stop (SIGTERM through tini) exits 0', async () => {
    const [port, metrics] = [await freePort(), await freePort()];
    const container = `hearth-api-${randomBytes(4).toString('hex')}`;
    await podmanOk(['run', '--detach', '--name', container, ...AS_IN_THE_CHART, ...envArgs({ ...vars, PORT: String(port), METRICS_PORT: String(metrics) }), IMAGE, 'api']);
    try {
      const deadline = Date.now() + 30_000;
      let healthz: Response | undefined;
      while (Date.now() < deadline) {
        healthz = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        if (healthz?.ok) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      if (!healthz?.ok) throw new Error(`the api container did not answer /healthz in 30 s:\n${(await podman(['logs', container])).stderr}`);
      expect(await healthz.json()).toEqual({ status: 'ok' });
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect({ status: ready.status, body: await ready.json() }).toEqual({ status: 200, body: { status: 'ready', postgres: true, redis: true } });
      expect((await fetch(`http://127.0.0.1:${metrics}/metrics`)).status).toBe(200);
      await podmanOk(['stop', '--time', '20', container]);
      const [state] = JSON.parse(await podmanOk(['inspect', container])) as { State: { ExitCode: number } }[];
      expect(state.State.ExitCode).toBe(0);
    } finally {
      await podman(['rm', '--force', container]);
    }
  });
});
