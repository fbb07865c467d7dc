/**
 * A real Kubernetes API server of a test's own: etcd and kube-apiserver (built once per machine by
 * test/kube/tools/build.sh, `make operator-tools`) on free 127.0.0.1 ports, data in a temporary folder.
 * By default no controller-manager runs beside it: owner references are recorded but nothing
 * garbage-collects, and a deleted namespace stays Terminating. Finalizers, status subresources, Leases,
 * RBAC, CEL validation and server-side dry-run all behave as in a cluster, which is what most tests need.
 * `startKube({ controllers: true })` also starts kube-controller-manager (the chart install suite):
 * Deployments make ReplicaSets and Pods, Jobs make Pods and complete, namespaces get their `default`
 * ServiceAccount, deleted owners' objects are garbage-collected, deleted namespaces go. No scheduler
 * and no kubelet run: pods stay Pending unless a test writes their status.
 *
 * Credentials are static tokens (--token-auth-file): `admin` is in system:masters; `userToken(name,
 * groups)` adds others before start, so a test can act as a ServiceAccount the chart's RBAC binds.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports';
import { stopProcess } from './processes';

/** Where build.sh puts the tools (outside the checkout, so a clean clone reuses them). */
export const KUBE_TOOLS_BIN = path.join(process.env.HEARTH_TOOLS_DIR ?? path.join(os.homedir(), '.cache', 'hearth', 'tools'), 'bin');

export interface KubeUser {
  name: string;
  token: string;
  groups: string[];
}

export interface Kube {
  /** https://127.0.0.1:<port> */
  server: string;
  /** http://127.0.0.1:<port>: etcd's client URL, for a test that reads what the API server stored (its v3 JSON gateway). */
  etcd: string;
  /** The server's self-signed certificate (PEM), to trust. */
  caPem: string;
  admin: KubeUser;
  users: KubeUser[];
  /** A kubeconfig file for `user` (admin by default): for @kubernetes/client-node, helm, or a child process's KUBECONFIG. */
  kubeconfigFor(user?: KubeUser): string;
  /** The admin kubeconfig file. */
  kubeconfig: string;
  /** Stops both processes and deletes their files. */
  stop(): Promise<void>;
}

export function kubeToolPath(name: 'kube-apiserver' | 'kube-controller-manager' | 'etcd' | 'kubectl' | 'helm' | 'versitygw'): string {
  const file = path.join(KUBE_TOOLS_BIN, name);
  if (!fs.existsSync(file))
    throw new Error(`${file} is missing: run \`bash test/kube/tools/build.sh ${name}\` first (each make target builds the tools it needs)`);
  return file;
}

function startProcess(binary: string, args: string[], logFile: string): ChildProcess {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(binary, args, { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  return child;
}

/** Polls `probe` every 200 ms until it answers true, for at most `timeoutMs`; the log tail explains a failure. */
async function waitFor(what: string, probe: () => Promise<boolean>, child: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n') : '';
  throw new Error(`${what} did not become ready within ${timeoutMs} ms (exit code ${child.exitCode}):\n${tail}`);
}

function httpsGet(url: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false, timeout: 2_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

function kubeconfigYaml(server: string, caPem: string, user: KubeUser): string {
  const ca = Buffer.from(caPem).toString('base64');
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server, 'certificate-authority-data': ca } }],
    users: [{ name: user.name, user: { token: user.token } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: user.name } }],
    'current-context': 'test',
  });
}

/**
 * The controllers a cluster runs that the chart's objects rely on (kube-controller-manager's names):
 * Deployments -> ReplicaSets -> Pods, Jobs -> Pods (the migrations hook), the `default` ServiceAccount
 * of each namespace and its token Secrets, the kube-root-ca.crt ConfigMap the projected token volumes
 * name, the garbage collector (owner references) and namespace deletion.
 */
const CONTROLLERS = [
  'deployment-controller',
  'replicaset-controller',
  'job-controller',
  'garbage-collector-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller',
  'namespace-controller',
];

/**
 * Starts etcd and kube-apiserver and waits until /readyz answers ok (about 5-15 s). `extraUsers` get
 * static tokens of their own (no RBAC bindings: the test creates those). `controllers` also starts
 * kube-controller-manager and waits until it acts (the `default` namespace has its ServiceAccount).
 */
export async function startKube(options: { extraUsers?: { name: string; groups?: string[] }[]; controllers?: boolean } = {}): Promise<Kube> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-kube-'));
  const [etcdClient, etcdPeer, apiPort] = [await freePort(), await freePort(), await freePort()];
  const newToken = () => crypto.randomBytes(24).toString('hex');
  const admin: KubeUser = { name: 'admin', token: newToken(), groups: ['system:masters'] };
  const users = (options.extraUsers ?? []).map((u) => ({ name: u.name, token: newToken(), groups: u.groups ?? [] }));
  // token,user,uid,"group1,group2"
  fs.writeFileSync(path.join(dir, 'tokens.csv'), [admin, ...users].map((u) => `${u.token},${u.name},${u.name},"${u.groups.join(',')}"`).join('\n') + '\n');
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  fs.writeFileSync(path.join(dir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  fs.writeFileSync(path.join(dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));

  const etcdLog = path.join(dir, 'etcd.log');
  const etcd = startProcess(
    kubeToolPath('etcd'),
    [
      '--data-dir',
      path.join(dir, 'etcd'),
      '--listen-client-urls',
      `http://127.0.0.1:${etcdClient}`,
      '--advertise-client-urls',
      `http://127.0.0.1:${etcdClient}`,
      '--listen-peer-urls',
      `http://127.0.0.1:${etcdPeer}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${etcdPeer}`,
      '--initial-cluster',
      `default=http://127.0.0.1:${etcdPeer}`,
      '--unsafe-no-fsync', // a test's throwaway data: no need to wait for the disk
      '--log-level',
      'warn',
    ],
    etcdLog,
  );
  const apiLog = path.join(dir, 'kube-apiserver.log');
  let apiserver: ChildProcess | undefined;
  let controllerManager: ChildProcess | undefined;
  const stop = async () => {
    if (controllerManager) await stopProcess(controllerManager);
    if (apiserver) await stopProcess(apiserver);
    await stopProcess(etcd);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      'etcd',
      async () => {
        const res = await fetch(`http://127.0.0.1:${etcdClient}/health`);
        return res.ok;
      },
      etcd,
      etcdLog,
      30_000,
    );

    const certDir = path.join(dir, 'certs');
    apiserver = startProcess(
      kubeToolPath('kube-apiserver'),
      [
        '--etcd-servers',
        `http://127.0.0.1:${etcdClient}`,
        '--bind-address',
        '127.0.0.1',
        '--advertise-address',
        '127.0.0.1',
        '--secure-port',
        String(apiPort),
        '--cert-dir',
        certDir,
        '--token-auth-file',
        path.join(dir, 'tokens.csv'),
        '--authorization-mode',
        'RBAC',
        '--service-account-key-file',
        path.join(dir, 'sa.pub'),
        '--service-account-signing-key-file',
        path.join(dir, 'sa.key'),
        '--service-account-issuer',
        'https://kubernetes.default.svc.cluster.local',
        '--service-cluster-ip-range',
        '10.96.0.0/16',
        // Without a controller-manager no namespace gets its `default` ServiceAccount, which this
        // admission plugin requires of every pod; with one, pods are admitted as in a cluster.
        ...(options.controllers ? [] : ['--disable-admission-plugins', 'ServiceAccount']),
        '--v',
        '1',
      ],
      apiLog,
    );
    const server = `https://127.0.0.1:${apiPort}`;
    await waitFor(
      'kube-apiserver',
      async () => {
        const res = await httpsGet(`${server}/readyz`, admin.token);
        return res.status === 200;
      },
      apiserver,
      apiLog,
      90_000,
    );
    // The serving certificate it made for itself, for clients that verify it.
    const caPem = fs.readFileSync(path.join(certDir, 'apiserver.crt'), 'utf8');

    const kubeconfigFor = (user: KubeUser = admin) => {
      const file = path.join(dir, `kubeconfig-${user.name.replace(/[^a-z0-9-]/gi, '_')}.json`);
      if (!fs.existsSync(file)) fs.writeFileSync(file, kubeconfigYaml(server, caPem, user), { mode: 0o600 });
      return file;
    };
    const kubeconfig = kubeconfigFor(admin);
    if (options.controllers) {
      const controllersLog = path.join(dir, 'kube-controller-manager.log');
      controllerManager = startProcess(
        kubeToolPath('kube-controller-manager'),
        [
          '--kubeconfig',
          kubeconfig,
          // Every controller acts as the admin: the suites test the chart's RBAC, not the controllers'.
          '--use-service-account-credentials=false',
          '--controllers',
          CONTROLLERS.join(','),
          // The key pair the API server verifies ServiceAccount tokens with, and the CA pods are told to trust.
          '--service-account-private-key-file',
          path.join(dir, 'sa.key'),
          '--root-ca-file',
          path.join(certDir, 'apiserver.crt'),
          '--leader-elect=false',
          '--secure-port',
          '0', // no metrics or health endpoint of its own: readiness is seen in what it does
          '--v',
          '1',
        ],
        controllersLog,
      );
      const controllers = controllerManager;
      await waitFor(
        'kube-controller-manager',
        async () => {
          const res = await httpsGet(`${server}/api/v1/namespaces/default/serviceaccounts/default`, admin.token);
          return res.status === 200;
        },
        controllers,
        controllersLog,
        90_000,
      );
    }
    return { server, etcd: `http://127.0.0.1:${etcdClient}`, caPem, admin, users, kubeconfigFor, kubeconfig, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
