/**
 * The generated CRDs (hearth crds) given to a real kube-apiserver: it accepts them as structural, every
 * example document and a document of every kind is accepted, bad ones are refused by the API server
 * itself (schema bounds, enums, unknown fields), and `kubectl get` shows the columns and the category.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { crdsYaml, MANIFEST_KINDS } from '@hearth/core';
import { type Kube, kubeToolPath, startKube } from '../support/kube';
import * as m from '../support/manifests';

let kube: Kube;

/** kubectl with the admin's kubeconfig; resolves with stdout, or rejects with stderr. */
function kubectl(args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(kubeToolPath('kubectl'), ['--kubeconfig', kube.kubeconfig, ...args], { timeout: 30_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(stderr || err.message)) : resolve(stdout),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}
const apply = (docs: unknown[]) => kubectl(['apply', '-f', '-'], docs.map((d) => stringify(d)).join('---\n'));

beforeAll(async () => {
  kube = await startKube();
  await kubectl(['apply', '-f', '-'], crdsYaml());
  await kubectl(['wait', '--for=condition=Established', 'crd', '-l', 'app.kubernetes.io/part-of=hearth', '--timeout=30s']);
  await kubectl(['create', 'namespace', m.NAMESPACE]);
}, 120_000);
afterAll(() => kube?.stop());

it('defines every kind, each Established', async () => {
  const crds = JSON.parse(await kubectl(['get', 'crd', '-l', 'app.kubernetes.io/part-of=hearth', '-o', 'json'])).items;
  expect(crds.map((c: { spec: { names: { kind: string } } }) => c.spec.names.kind).sort()).toEqual(Object.keys(MANIFEST_KINDS).sort());
});

it('accepts the example documents hearth dev applies', async () => {
  const dir = path.join(__dirname, '..', '..', 'examples', 'dev');
  const text = fs.readdirSync(dir).sort().map((f) => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n---\n');
  const namespaces = [...new Set([...text.matchAll(/namespace: ([a-z0-9-]+)/g)].map((x) => x[1]))];
  for (const ns of namespaces) await kubectl(['create', 'namespace', ns]);
  const out = await kubectl(['apply', '-f', '-'], text);
  expect(out.split('\n').filter(Boolean).every((line) => line.endsWith(' created'))).toBe(true);
});

it('accepts a document of every kind, and lists them all under `kubectl get hearth`', async () => {
  const docs = [
    m.plan('crd-plan'),
    m.project('crd-project', { plan: 'crd-plan' }),
    m.environment('crd-live', 'crd-project'),
    m.serverKey('crd-key', 'crd-live'),
    m.licenceKey('crd-licence', 'crd-project'),
    m.gameConfig('crd-config', { environment: 'crd-live', values: [{ key: 'motd', type: 'string', value: 'hi' }], flags: [{ name: 'f', enabled: true }] }),
    m.legalDocument('crd-terms', { environment: 'crd-live', title: 'Terms', url: 'https://example.com/terms', version: '1', required: true }),
    m.tour('crd-tour', { environment: 'crd-live', name: 'Basics' }),
    m.blogCategory('crd-news', { environment: 'crd-live', name: 'News' }),
    m.blogPost('crd-post', {
      environment: 'crd-live',
      title: 'Hello',
      category: 'crd-news',
      status: 'published',
      cover: null,
      content: { blocks: [{ type: 'heading', level: 2, text: 'Hi' }, { type: 'list', ordered: false, items: ['a'] }] },
    }),
    m.realm('crd-season', { environment: 'crd-live', number: 1, name: 'Season 1', startAt: '2026-01-01T00:00:00Z', endAt: '2026-04-01T00:00:00Z' }),
    m.currency('crd-gold', { environment: 'crd-live', name: 'Gold', scope: 'account', kind: 'balance', max: 1000000 }),
    m.itemType('crd-chest', {
      environment: 'crd-live',
      name: 'Chest',
      category: 'container',
      ownership: 'one-by-one',
      purchasable: true,
      prices: [{ currencyKey: 'gold', amount: 10 }],
      contents: { grants: [{ itemTypeKey: 'potion', quantity: 2 }], picks: [{ count: 1, from: [{ itemTypeKey: 'sword', weight: 3 }] }] },
      requires: ['chapter.1'],
    }),
  ];
  await apply(docs);
  const listed = await kubectl(['get', 'hearth', '-A', '-o', 'name']);
  for (const kind of Object.keys(MANIFEST_KINDS)) expect(listed.toLowerCase()).toContain(`${kind.toLowerCase()}.hearth.gg/crd-`);
  // Printer columns: the app key of an environment, by its short name.
  const table = await kubectl(['get', 'genv', 'crd-live', '-n', m.NAMESPACE]);
  expect(table.split('\n')[0]).toMatch(/NAME\s+PROJECT\s+APP KEY\s+READY\s+AGE/);
  expect(table).toMatch(/crd-live\s+crd-project\s+crd-live/);
});

describe('the API server refuses what the schemas refuse', () => {
  it.each([
    ['a number under its minimum', m.plan('bad-plan', { playersPerEnvironment: -1 }), /spec.playersPerEnvironment/],
    ['a value outside an enum', m.project('bad-review', { review: 'maybe' as never }), /spec.review.*Unsupported value: "maybe"/],
    ['a name against its pattern', m.environment('bad-env', 'Not_A_Name'), /spec.project/],
    ['a missing required field', { ...m.serverKey('bad-key', 'x'), spec: {} }, /spec.environment: Required value/],
    ['an unknown field', { ...m.tour('bad-tour', { environment: 'e', name: 'n' }), spec: { environment: 'e', name: 'n', colour: 'red' } }, /unknown field "spec.colour"/],
    [
      'a blog block of an unknown type',
      m.blogPost('bad-post', { environment: 'e', title: 't', category: 'c', status: 'draft', content: { blocks: [{ type: 'video', text: 'x' }] } }),
      /spec.content.blocks\[0\].type/,
    ],
    // A rule across fields (CEL, x-kubernetes-validations): the same rule and message hearth apply gives.
    [
      'the permanent realm with an end',
      m.realm('bad-realm', { environment: 'e', number: 0, name: 'Forever', startAt: '2026-01-01T00:00:00Z', endAt: '2027-01-01T00:00:00Z' }),
      /spec.endAt: Invalid value: "object": the permanent realm \(number 0\) never ends/,
    ],
    [
      'a scheduled post with no publishAt',
      m.blogPost('bad-schedule', { environment: 'e', title: 't', category: 'c', status: 'scheduled', content: { blocks: [] } }),
      /spec.publishAt: Invalid value: "object": is required for a scheduled post/,
    ],
    [
      'a draft with a publishedAt',
      m.blogPost('bad-draft', { environment: 'e', title: 't', category: 'c', status: 'draft', publishedAt: '2026-01-01T00:00:00Z', content: { blocks: [] } }),
      /spec.publishedAt: Invalid value: "object": is only for a published post/,
    ],
    [
      'an item type with contents that is no container',
      m.itemType('bad-item', { environment: 'e', name: 'Thing', category: 'weapon', ownership: 'counted', contents: { grants: [{ itemTypeKey: 'x' }] } }),
      /spec.contents: Invalid value: "object": is only for an item type of category container/,
    ],
    [
      'an item type naming a currency twice',
      m.itemType('bad-prices', { environment: 'e', name: 'Thing', category: 'weapon', ownership: 'counted', prices: [{ currencyKey: 'g', amount: 1 }, { currencyKey: 'g', amount: 2 }] }),
      /spec.prices: Invalid value: "array": must name each currency once/,
    ],
  ])('%s', async (_what, doc, message) => {
    await expect(apply([doc])).rejects.toThrow(message);
    const name = (doc as { metadata: { name: string } }).metadata.name;
    await expect(kubectl(['get', 'hearth', '-A', '-o', 'name'])).resolves.not.toContain(`/${name}`);
  });
});
