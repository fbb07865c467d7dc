/**
 * docs/kubernetes.md as an SRE follows it: the guide's own YAML and its own shell commands (kubectl
 * apply, wait, read the key out of the Secret) run against a real kube-apiserver with `hearth
 * operator` and the API beside it; the key printed by the guide's command must work on the API. Then
 * what the guide says about deleting an environment (retired, data kept, back on re-create) and about
 * the periodic relist (the state, not single events, drives reconciles: drift made behind the
 * operator's back is repaired).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { crdsYaml } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { KUBE_TOOLS_BIN, type Kube, startKube } from '../support/kube';
import { type OperatorProcess, getOrNull, kubectl, readyOf, startOperatorProcess, waitReady, waitUntil } from './operator-process';

jest.setTimeout(90_000);

const GUIDE = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'kubernetes.md'), 'utf8');
const SECTION = GUIDE.slice(GUIDE.indexOf('## Create a plan, a project, an environment and a key with kubectl'));
/** The section's first YAML block (the file it names) and its first shell block. */
const STARFALL_YAML = /```yaml\n# starfall\.yaml\n([\s\S]*?)```/.exec(SECTION)![1];
const COMMANDS = /```sh\n([\s\S]*?)```/
  .exec(SECTION)![1]
  .split('\n')
  .map((l) => l.replace(/\s+#.*$/, '').trim())
  .filter(Boolean);
const RELIST_SECONDS = 5; // the shortest the operator accepts

let kube: Kube;
let h: Harness;
let operator: OperatorProcess;
let dir: string;

/** One of the guide's command lines, as an SRE's shell runs it (KUBECONFIG set, the tools on PATH). */
function shell(line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      ['-o', 'pipefail', '-c', line],
      {
        cwd: dir,
        timeout: 70_000,
        env: { ...process.env, KUBECONFIG: kube.kubeconfig, PATH: `${KUBE_TOOLS_BIN}:${process.env.PATH}` },
      },
      (err, stdout, stderr) => (err ? reject(new Error(`${line}: ${stderr || err.message}`)) : resolve(stdout)),
    );
  });
}

beforeAll(async () => {
  [kube, h] = await Promise.all([startKube(), startHarness({ manifests: [] })]);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-sre-'));
  fs.writeFileSync(path.join(dir, 'starfall.yaml'), STARFALL_YAML);
  await kubectl(kube, ['apply', '-f', '-'], crdsYaml());
  await kubectl(kube, ['wait', '--for=condition=Established', 'crd', '-l', 'app.kubernetes.io/part-of=hearth', '--timeout=30s']);
  operator = await startOperatorProcess({
    kube,
    databaseUrl: h.database.url,
    redisPrefix: h.redisPrefix,
    env: { HEARTH_OPERATOR_RELIST_SECONDS: String(RELIST_SECONDS) },
  });
}, 120_000);
afterAll(async () => {
  await operator?.stop();
  await h?.close();
  await kube?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('the guide declares a plan, a project, an environment and a key', () => {
  const kinds = parseAllDocuments(STARFALL_YAML).map((d) => d.toJSON().kind);
  expect(kinds).toEqual(['Plan', 'Project', 'GameEnvironment', 'ServerKey']);
  expect(COMMANDS[COMMANDS.length - 1]).toMatch(/^kubectl get secret .* base64 -d$/);
});

test("the guide's commands, run as written, give a Ready key whose Secret holds a key the API accepts", async () => {
  let printed = '';
  for (const line of COMMANDS) printed = await shell(line);
  const key = printed.trim();
  expect(key).toMatch(/^hsk_/);
  for (const [kind, name] of [
    ['project', 'starfall'],
    ['gameenvironment', 'starfall-live'],
    ['serverkey', 'game-servers'],
  ]) {
    const obj = await waitReady(kube, [kind, name, '-n', 'starfall']);
    expect(readyOf(obj)).toMatchObject({ status: 'True', reason: 'Reconciled' });
    expect(obj.status.observedGeneration).toBe(obj.metadata.generation);
  }
  expect(readyOf(await waitReady(kube, ['plan', 'free']))!.status).toBe('True');
  const flags = await call(h.base, 'GET', '/flags', { token: key });
  expect(flags.status).toBe(200);
});

test('a deleted GameEnvironment is retired (its key refused, its data kept) and a re-created one is back', async () => {
  const key = (await shell(COMMANDS[COMMANDS.length - 1])).trim();
  const env = await h.db('environments').where({ namespace: 'starfall', name: 'starfall-live' }).first();
  await kubectl(kube, ['delete', 'gameenvironment', 'starfall-live', '-n', 'starfall', '--timeout=20s']);
  expect(await getOrNull(kube, ['gameenvironment', 'starfall-live', '-n', 'starfall'])).toBeNull();
  expect((await h.db('environments').where({ id: env.id }).first()).retired_at).not.toBeNull();
  expectError(await call(h.base, 'GET', '/flags', { token: key }), 401, 'unauthorized');

  await shell('kubectl apply -f starfall.yaml');
  await waitReady(kube, ['gameenvironment', 'starfall-live', '-n', 'starfall']);
  const back = await h.db('environments').where({ namespace: 'starfall', name: 'starfall-live' }).first();
  expect({ id: back.id, retired: back.retired_at }).toEqual({ id: env.id, retired: null });
  await waitUntil('the key works again', async () => ((await call(h.base, 'GET', '/flags', { token: key })).status === 200 ? true : undefined), 10_000);
});

test("the periodic relist repairs what was changed behind the operator's back", async () => {
  const env = await h.db('environments').where({ namespace: 'starfall', name: 'starfall-live' }).first();
  await kubectl(
    kube,
    ['apply', '-f', '-'],
    [
      'apiVersion: hearth.gg/v1alpha1',
      'kind: GameConfig',
      'metadata: { name: starfall-live, namespace: starfall }',
      'spec: { environment: starfall-live, flags: [ { name: new_shop, enabled: true } ] }',
    ].join('\n'),
  );
  await waitReady(kube, ['gameconfig', 'starfall-live', '-n', 'starfall']);
  expect(await h.db('flags').where({ environment_id: env.id }).pluck('name')).toEqual(['new_shop']);
  // No event reaches the operator for this: only a relist (every RELIST_SECONDS) finds the drift.
  await h.db('flags').where({ environment_id: env.id }).delete();
  const repaired = await waitUntil(
    'the flag is back',
    async () => {
      const names = await h.db('flags').where({ environment_id: env.id }).pluck('name');
      return names.length > 0 ? names : undefined;
    },
    (RELIST_SECONDS * 3 + 5) * 1000,
    250,
  );
  expect(repaired).toEqual(['new_shop']);
});

test('a Project with a live environment is not deleted yet: DeletionBlocked with a Warning Event, then gone once its environment is', async () => {
  await kubectl(kube, ['delete', 'project', 'starfall', '-n', 'starfall', '--wait=false']);
  const blocked = await waitReady(kube, ['project', 'starfall', '-n', 'starfall'], 'False');
  expect(blocked.metadata.deletionTimestamp).toBeTruthy();
  expect(readyOf(blocked)).toMatchObject({ reason: 'DeletionBlocked', message: expect.stringContaining('starfall-live') });
  const events = JSON.parse(await kubectl(kube, ['get', 'events', '-n', 'starfall', '--field-selector', 'involvedObject.name=starfall', '-o', 'json'])).items;
  expect(events).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Warning', reason: 'DeletionBlocked' })]));
  expect((await h.db('projects').where({ namespace: 'starfall', name: 'starfall' }).first()).retired_at).toBeNull();

  await kubectl(kube, ['delete', 'gameenvironment', 'starfall-live', '-n', 'starfall', '--timeout=20s']);
  await waitUntil('the Project is gone', async () => ((await getOrNull(kube, ['project', 'starfall', '-n', 'starfall'])) === null ? true : undefined), 20_000);
  expect((await h.db('projects').where({ namespace: 'starfall', name: 'starfall' }).first()).retired_at).not.toBeNull();
});
