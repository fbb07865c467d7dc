/**
 * What the operator tests share: kubectl against the test's kube-apiserver, the real `hearth
 * operator` as child processes (this suite never loads @kubernetes/client-node: it is an ES module
 * jest cannot load), and bounded waits on what the API server shows.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { testTempDir } from '../support/temp-dir';
import type { Kube } from '../support/kube';
import { kubeToolPath } from '../support/kube';
import { TEST_REDIS_URL } from '../support/env';
import { NAMESPACE } from '../support/manifests';
import { REPO_ROOT, baseEnv, freePort } from '../cli/run-hearth';

/** Runs kubectl with the admin kubeconfig; rejects with its stderr on a non-zero exit. */
export function kubectl(kube: Kube, args: string[], stdin?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(kubeToolPath('kubectl'), ['--kubeconfig', kube.kubeconfig, ...args], { timeout: 20_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`));
      else resolve(stdout);
    });
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

/** kubectl apply of documents (the test's manifests, as an SRE would write them). */
export function kubectlApply(kube: Kube, docs: unknown[]): Promise<string> {
  return kubectl(kube, ['apply', '-f', '-'], docs.map((d) => stringify(d)).join('---\n'));
}

/**
 * A Secret opted in to be read for one Project (the label `hearth.gg/secret-for: <project>`), as an
 * SRE writes it for a Project's dashboard client secret or store publisher key.
 */
export function projectSecret(name: string, project: string | null, data: Record<string, string>, namespace = NAMESPACE): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, ...(project === null ? {} : { labels: { 'hearth.gg/secret-for': project } }) },
    type: 'Opaque',
    stringData: data,
  };
}

export async function getJson<T = any>(kube: Kube, args: string[]): Promise<T> {
  return JSON.parse(await kubectl(kube, ['get', ...args, '-o', 'json'])) as T;
}

/** The object, or null when kubectl says NotFound. */
export async function getOrNull<T = any>(kube: Kube, args: string[]): Promise<T | null> {
  try {
    return await getJson<T>(kube, args);
  } catch (err) {
    if (/NotFound|not found/.test((err as Error).message)) return null;
    throw err;
  }
}

/** Polls `probe` until it answers a value (not undefined), for at most `withinMs`; the last error or value explains a timeout. */
export async function waitUntil<T>(what: string, probe: () => Promise<T | undefined>, withinMs = 20_000, stepMs = 200): Promise<T> {
  const deadline = Date.now() + withinMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export interface ReadyCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration: number;
}

export function readyOf(obj: any): ReadyCondition | undefined {
  return obj?.status?.conditions?.find((c: ReadyCondition) => c.type === 'Ready');
}

/** Waits until the resource's Ready condition has `status` for its current generation; answers the object. */
export function waitReady(kube: Kube, resource: string[], status: 'True' | 'False' = 'True', withinMs = 20_000): Promise<any> {
  return waitUntil(
    `${resource.join(' ')} Ready=${status}`,
    async () => {
      const obj = await getOrNull(kube, resource);
      const ready = readyOf(obj);
      return ready?.status === status && obj.status.observedGeneration === obj.metadata.generation ? obj : undefined;
    },
    withinMs,
  );
}

export interface OperatorProcess {
  child: ChildProcess;
  metricsPort: number;
  logFile: string;
  log(): string;
  /** Resolves with the exit code (or signal) once it ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `hearth operator` against the test's API server, database and Redis prefix. */
export async function startOperatorProcess(opts: {
  kube: Kube;
  databaseUrl: string;
  redisPrefix: string;
  env?: Record<string, string>;
}): Promise<OperatorProcess> {
  const metricsPort = await freePort();
  const logFile = path.join(testTempDir('hearth-operator-'), 'operator.log');
  const out = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'apps/cli/bin/hearth'), 'operator'], {
    cwd: REPO_ROOT,
    env: baseEnv({
      KUBECONFIG: opts.kube.kubeconfig,
      DATABASE_URL: opts.databaseUrl,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: opts.redisPrefix,
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'info',
      // Short lease times keep the take-over test quick; the defaults are 15 s and 2 s.
      HEARTH_OPERATOR_LEASE_DURATION_SECONDS: '4',
      HEARTH_OPERATOR_LEASE_RETRY_MS: '500',
      ...opts.env,
    }),
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const log = () => fs.readFileSync(logFile, 'utf8');
  return {
    child,
    metricsPort,
    logFile,
    log,
    exited,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The operator's /metrics text. */
export async function metricsOf(op: OperatorProcess): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${op.metricsPort}/metrics`);
  return res.text();
}

/** Whether this replica reports itself the leader (hearth_operator_leader 1). */
export async function isLeader(op: OperatorProcess): Promise<boolean> {
  try {
    return /^hearth_operator_leader 1$/m.test(await metricsOf(op));
  } catch {
    return false;
  }
}
