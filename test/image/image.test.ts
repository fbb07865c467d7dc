/**
 * The Dockerfile built into an image and run, with no Docker engine (`make image-test`): buildah
 * builds it (test/image/build.sh, which says how the base is made on a machine that cannot reach
 * Docker Hub), podman + runc run it. The image prints its version as a non-root user on a read-only
 * root; then the chart's own containers, rendered by `helm template` with this image, run as a
 * kubelet would run them (args after the entry point, Secrets resolved into the environment, the
 * pod's user and security context, emptyDir as tmpfs, the memory limit): the migrations Job's
 * migrates a fresh database on the test PostgreSQL, the API Deployment's passes the chart's probes
 * and stops on SIGTERM (tini forwards it) with exit code 0.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import knexFactory from 'knex';
import { MIGRATIONS_DIR } from '@hearth/core/db';
import { TEST_DATABASE_URL, TEST_REDIS_URL, databaseUrl } from '../support/env';
import { KUBE_TOOLS_BIN } from '../support/kube';
import { freePort } from '../support/ports';
import { runCollected } from '../support/processes';
import { type KubeObject, MINIMAL_VALUES, render } from '../chart/chart';

jest.setTimeout(60_000);

const ROOT = path.resolve(__dirname, '..', '..');
const IMAGE = `localhost/hearth:test-${randomBytes(4).toString('hex')}`;
/** The store and settings build.sh uses (it writes containers.conf there). */
const CACHE = path.join(path.dirname(KUBE_TOOLS_BIN), 'image');
const STORAGE = ['--root', path.join(CACHE, 'storage'), '--runroot', path.join(CACHE, 'run'), '--storage-driver', 'overlay'];
/** As the chart's pods run: the image's user, nothing writable but /tmp. */
const AS_IN_THE_CHART = ['--read-only', '--tmpfs', '/tmp', '--network', 'host'];

/** A command run to its end with the containers configuration of this machine (see CACHE). */
const run = (command: string, args: string[], timeoutMs: number) =>
  runCollected(command, args, { timeoutMs, env: { ...process.env, CONTAINERS_CONF: path.join(CACHE, 'containers.conf') } });

const podman = (args: string[], timeoutMs = 60_000) => run('podman', [...STORAGE, ...args], timeoutMs);
const podmanOk = async (args: string[], timeoutMs?: number) => {
  const res = await podman(args, timeoutMs);
  if (res.status !== 0) throw new Error(`podman ${args.join(' ')} exited ${res.status}:\n${res.stderr}${res.stdout}`);
  return res.stdout;
};
const envArgs = (vars: Record<string, string>) => Object.entries(vars).flatMap(([k, v]) => ['--env', `${k}=${v}`]);

beforeAll(async () => {
  const built = await run('bash', [path.join(ROOT, 'test', 'image', 'build.sh'), IMAGE], 20 * 60_000);
  if (built.status !== 0) throw new Error(`test/image/build.sh exited ${built.status}:\n${built.stderr.split('\n').slice(-60).join('\n')}`);
  expect(built.stdout.trim()).toBe(IMAGE);
}, 20 * 60_000);

afterAll(async () => {
  await podman(['rmi', '--force', IMAGE]);
});

test('the image is configured as the Dockerfile says: tini runs `node dist/hearth.js`, as uid 10001, in /app', async () => {
  const [config] = JSON.parse(await podmanOk(['image', 'inspect', IMAGE])) as {
    Config: { User: string; Entrypoint: string[]; Cmd: string[]; WorkingDir: string; Env: string[]; ExposedPorts: Record<string, unknown> };
  }[];
  expect(config.Config).toMatchObject({
    User: '10001:10001',
    Entrypoint: ['/usr/bin/tini', '--', 'node', 'dist/hearth.js'],
    Cmd: ['--help'],
    WorkingDir: '/app',
  });
  expect(config.Config.Env).toEqual(expect.arrayContaining(['NODE_ENV=production', 'HOME=/tmp']));
  expect(Object.keys(config.Config.ExposedPorts).sort()).toEqual(['8080/tcp', '8081/tcp', '9090/tcp']);
});

test('`hearth --version` runs in it, as a non-root user that cannot write /app', async () => {
  const version = await podman(['run', '--rm', ...AS_IN_THE_CHART, IMAGE, '--version']);
  expect(version).toMatchObject({ status: 0, stdout: `${JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version}\n` });
  const who = await podman([
    'run',
    '--rm',
    ...AS_IN_THE_CHART,
    '--entrypoint',
    'sh',
    IMAGE,
    '-c',
    'id -u; touch /app/x 2>/dev/null && echo writable || echo read-only',
  ]);
  expect(who).toMatchObject({ status: 0, stdout: '10001\nread-only\n' });
});

/** A container of a rendered pod, the fields this test turns into `podman run` options. */
interface ChartContainer {
  name: string;
  image: string;
  args: string[];
  env: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  ports?: { name: string; containerPort: number }[];
  securityContext: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; capabilities?: { drop?: string[] } };
  resources: { limits?: { memory?: string } };
  volumeMounts: { name: string; mountPath: string }[];
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
}
interface Probe {
  httpGet: { path: string; port: string | number };
}
interface PodSpec {
  securityContext: { runAsUser: number; runAsGroup: number };
  containers: ChartContainer[];
  volumes: { name: string; emptyDir?: object }[];
  terminationGracePeriodSeconds?: number;
}

describe("the chart's containers, as it renders them, run on the image", () => {
  const name = `hearth_i_${randomBytes(6).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: TEST_DATABASE_URL, pool: { min: 0, max: 1 } });
  let objects: KubeObject[];

  beforeAll(async () => {
    await admin.raw(`CREATE DATABASE ${name}`);
    const [repository, tag] = IMAGE.split(/:(?=[^:]+$)/);
    objects = render(
      [MINIMAL_VALUES],
      [
        `image.repository=${repository}`,
        `image.tag=${tag}`,
        `database.url=${databaseUrl(name)}`,
        `redis.url=${TEST_REDIS_URL}`,
        `masterKey.value=${randomBytes(32).toString('hex')}`,
        `config.redisPrefix=hearth-test:${randomBytes(6).toString('hex')}:`,
      ],
    );
  });
  afterAll(async () => {
    await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.destroy();
  });

  /** What the kubelet would resolve: a Secret's value by name and key, from the rendered Secrets. */
  const secretValue = (ref: { name: string; key: string }): string => {
    const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === ref.name);
    const value = secret?.stringData?.[ref.key] ?? (secret?.data?.[ref.key] !== undefined ? Buffer.from(secret.data[ref.key], 'base64').toString() : undefined);
    if (value === undefined) throw new Error(`the chart renders no Secret ${ref.name} with ${ref.key}`);
    return value;
  };

  /**
   * `podman run` options for a rendered container, as a kubelet would run it: its args after the
   * image's entry point, its environment (Secrets resolved), the pod's user, a read-only root with the
   * emptyDir volumes as tmpfs, every capability dropped, no privilege escalation, its memory limit.
   * The one change: the host network of a shared machine, so `ports` (the env var each names) move to free ones.
   */
  function podmanRun(pod: PodSpec, container: ChartContainer, ports: Record<string, number>): string[] {
    const env: Record<string, string> = {};
    for (const variable of container.env) {
      if (variable.value !== undefined) env[variable.name] = variable.value;
      else if (variable.valueFrom?.secretKeyRef) env[variable.name] = secretValue(variable.valueFrom.secretKeyRef);
    }
    for (const port of container.ports ?? []) {
      const variable = Object.keys(env).find((k) => env[k] === String(port.containerPort) && /PORT$/.test(k));
      if (!variable) throw new Error(`no env var sets ${container.name}'s port ${port.name}`);
      env[variable] = String(ports[port.name]);
    }
    const emptyDirs = new Set(pod.volumes.filter((v) => v.emptyDir).map((v) => v.name));
    const memory = container.resources.limits?.memory;
    return [
      '--network',
      'host',
      '--user',
      `${pod.securityContext.runAsUser}:${pod.securityContext.runAsGroup}`,
      ...(container.securityContext.readOnlyRootFilesystem ? ['--read-only'] : []),
      ...container.volumeMounts.filter((m) => emptyDirs.has(m.name)).flatMap((m) => ['--tmpfs', m.mountPath]),
      ...(container.securityContext.capabilities?.drop ?? []).flatMap((c) => ['--cap-drop', c]),
      ...(container.securityContext.allowPrivilegeEscalation === false ? ['--security-opt', 'no-new-privileges'] : []),
      ...(memory ? ['--memory', memory.replace(/i$/, '').toLowerCase()] : []),
      ...envArgs(env),
      container.image,
      ...container.args,
    ];
  }

  const podOf = (kind: string, component: string) => {
    const o = objects.find((x) => x.kind === kind && x.metadata.name === `hearth-${component}`);
    if (!o) throw new Error(`no ${kind} hearth-${component}`);
    return o.spec.template.spec as PodSpec;
  };

  test("the migrations Job's container migrates a fresh database, every migration under its name; run again, it changes nothing", async () => {
    const pod = podOf('Job', 'migrations');
    const [container] = pod.containers;
    expect(container.image).toBe(IMAGE);
    const migrations = fs
      .readdirSync(MIGRATIONS_DIR)
      .filter((f) => f.endsWith('.ts'))
      .sort();
    const db = knexFactory({ client: 'pg', connection: databaseUrl(name), pool: { min: 0, max: 1 } });
    try {
      const first = await podman(['run', '--rm', ...podmanRun(pod, container, {})]);
      expect({ status: first.status, stderr: first.stderr }).toEqual({ status: 0, stderr: '' });
      const applied = async () => (await db('knex_migrations').orderBy('id').pluck('name')) as string[];
      expect(await applied()).toEqual(migrations);
      const again = await podman(['run', '--rm', ...podmanRun(pod, container, {})]);
      expect(again.status).toBe(0);
      expect(await applied()).toEqual(migrations);
    } finally {
      await db.destroy();
    }
  });

  test("the API Deployment's container passes the chart's startup, liveness and readiness probes, and stops on SIGTERM (through tini) with 0", async () => {
    const pod = podOf('Deployment', 'api');
    const [container] = pod.containers;
    const ports = { http: await freePort(), metrics: await freePort() };
    const probes = [container.startupProbe, container.livenessProbe, container.readinessProbe].filter((p): p is Probe => p !== undefined);
    expect(probes).toHaveLength(3);
    const probeUrl = (probe: Probe) =>
      `http://127.0.0.1:${typeof probe.httpGet.port === 'number' ? probe.httpGet.port : ports[probe.httpGet.port as keyof typeof ports]}${probe.httpGet.path}`;
    const containerName = `hearth-api-${randomBytes(4).toString('hex')}`;
    await podmanOk(['run', '--detach', '--name', containerName, ...podmanRun(pod, container, ports)]);
    try {
      // The startup probe first, as the kubelet runs it: until it passes (bounded), then the others must pass.
      const deadline = Date.now() + 30_000;
      let started = false;
      while (!started && Date.now() < deadline) {
        started = (await fetch(probeUrl(probes[0])).catch(() => undefined))?.status === 200;
        if (!started) await new Promise((r) => setTimeout(r, 250));
      }
      if (!started) throw new Error(`the api container did not pass its startup probe in 30 s:\n${(await podman(['logs', containerName])).stderr}`);
      for (const probe of probes) expect(`${probe.httpGet.path} ${(await fetch(probeUrl(probe))).status}`).toBe(`${probe.httpGet.path} 200`);
      const ready = await fetch(`http://127.0.0.1:${ports.http}/readyz`);
      expect(await ready.json()).toEqual({ status: 'ready', postgres: true, redis: true });
      expect((await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).status).toBe(200);
      await podmanOk(['stop', '--time', String(pod.terminationGracePeriodSeconds ?? 30), containerName]);
      const [state] = JSON.parse(await podmanOk(['inspect', containerName])) as { State: { ExitCode: number } }[];
      expect(state.State.ExitCode).toBe(0);
    } finally {
      await podman(['rm', '--force', containerName]);
    }
  });
});
