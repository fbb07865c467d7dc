/**
 * The generated CRDs (hearth crds) given to a real kube-apiserver: it accepts them as structural, every
 * example document and a document of every kind is accepted, bad ones are refused by the API server
 * itself (schema bounds, enums, unknown fields), and `kubectl get` shows the columns and the category.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { crdsYaml, MANIFEST_KINDS } from '@hearth/core/manifests';
import { type Kube, kubeToolPath, startKube } from '../support/kube';
import * as m from '../support/manifests';
import { dashboardMember } from '../support/dashboards';
import { product } from '../commerce/helpers';

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
  const text = fs
    .readdirSync(dir)
    .sort()
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
    .join('\n---\n');
  const namespaces = [...new Set([...text.matchAll(/namespace: ([a-z0-9-]+)/g)].map((x) => x[1]))];
  for (const ns of namespaces) await kubectl(['create', 'namespace', ns]);
  const out = await kubectl(['apply', '-f', '-'], text);
  expect(
    out
      .split('\n')
      .filter(Boolean)
      .every((line) => line.endsWith(' created')),
  ).toBe(true);
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
      content: {
        blocks: [
          { type: 'heading', level: 2, text: 'Hi' },
          { type: 'list', ordered: false, items: ['a'] },
        ],
      },
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
    m.cardType('crd-archer', {
      environment: 'crd-live',
      slug: 'archer',
      name: 'Archer',
      perDeckLimit: 3,
      purchasable: true,
      prices: [{ currencyKey: 'gold', amount: 50 }],
    }),
    m.cardTemplate('crd-foil', { environment: 'crd-live', name: 'Foil', data: { finish: 'foil' } }),
    m.skillTree('crd-tree', {
      environment: 'crd-live',
      name: 'Combat',
      nodes: [
        { key: 'slash', name: 'Slash', prices: [{ currencyKey: 'gold', amount: 10 }] },
        {
          key: 'cleave',
          name: 'Cleave',
          parents: ['slash'],
          priceRule: 'any',
          prices: [
            { currencyKey: 'gold', amount: 5 },
            { currencyKey: 'gems', amount: 1 },
          ],
        },
      ],
    }),
    dashboardMember('crd-member', { project: 'crd-project', subject: 'someone', environments: [{ environment: 'crd-live', permissions: ['open_dashboard'] }] }),
    product('crd-product', {
      environment: 'crd-live',
      sku: 'crd-product',
      name: 'Gold pack',
      storeItemId: 1,
      entitlement: 'gold-pack',
      prices: [
        { currency: 'USD', amount: 199 },
        { currency: 'EUR', amount: 179 },
      ],
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
    [
      'an unknown field',
      { ...m.tour('bad-tour', { environment: 'e', name: 'n' }), spec: { environment: 'e', name: 'n', colour: 'red' } },
      /unknown field "spec.colour"/,
    ],
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
      m.itemType('bad-prices', {
        environment: 'e',
        name: 'Thing',
        category: 'weapon',
        ownership: 'counted',
        prices: [
          { currencyKey: 'g', amount: 1 },
          { currencyKey: 'g', amount: 2 },
        ],
      }),
      /spec.prices: Invalid value: "array": must name each currency once/,
    ],
    [
      'a purchasable card type without a price',
      m.cardType('bad-card', { environment: 'e', name: 'Card', purchasable: true }),
      /spec.prices: Invalid value: "object": needs at least one price for a purchasable card type/,
    ],
    [
      'a skill node whose parent is not a node of its tree',
      m.skillTree('bad-tree', { environment: 'e', name: 'Tree', nodes: [{ key: 'a', name: 'A', parents: ['elsewhere'] }] }),
      /spec.nodes: Invalid value: "object": may name as parents only nodes of the same tree/,
    ],
    [
      'a skill tree with two nodes of one key',
      m.skillTree('bad-tree-keys', {
        environment: 'e',
        name: 'Tree',
        nodes: [
          { key: 'a', name: 'A' },
          { key: 'a', name: 'B' },
        ],
      }),
      /spec.nodes: Invalid value: "object": must give each node a key of its own/,
    ],
    [
      'a skill node that is its own parent',
      m.skillTree('bad-tree-self', { environment: 'e', name: 'Tree', nodes: [{ key: 'a', name: 'A', parents: ['a'] }] }),
      /spec.nodes\[0\].parents: Invalid value: "object": cannot name the node itself/,
    ],
  ])('%s', async (_what, doc, message) => {
    await expect(apply([doc])).rejects.toThrow(message);
    const name = (doc as { metadata: { name: string } }).metadata.name;
    await expect(kubectl(['get', 'hearth', '-A', '-o', 'name'])).resolves.not.toContain(`/${name}`);
  });
});

describe('identity fields are immutable on the API server (CEL transition rules)', () => {
  const live = (appKey: string) => m.environment('crd-ident', 'crd-project', appKey);
  const gold = (spec: Record<string, unknown> = {}) =>
    m.currency('crd-ident-gold', { environment: 'crd-live', name: 'Gold', scope: 'account', kind: 'balance', ...spec });
  beforeAll(() => apply([live('crd-ident-app'), gold()]));

  it("refuses a patch of a GameEnvironment's appKey or project, and keeps what it had", async () => {
    await expect(kubectl(['patch', 'genv', 'crd-ident', '-n', m.NAMESPACE, '--type=merge', '-p', '{"spec":{"appKey":"stolen"}}'])).rejects.toThrow(
      /spec.appKey: Invalid value: "object": is immutable: it names an identity; delete the resource and create it again/,
    );
    await expect(apply([{ ...live('crd-ident-app'), spec: { project: 'other', appKey: 'crd-ident-app' } }])).rejects.toThrow(
      /spec.project: Invalid value: "object": is immutable/,
    );
    const obj = JSON.parse(await kubectl(['get', 'genv', 'crd-ident', '-n', m.NAMESPACE, '-o', 'json']));
    expect(obj.spec).toEqual({ project: 'crd-project', appKey: 'crd-ident-app' });
    expect(obj.metadata.generation).toBe(1);
  });

  it("refuses a currency's key added, changed or moved to another environment, and takes any other edit", async () => {
    await expect(apply([gold({ key: 'coins' })])).rejects.toThrow(/spec.key: Invalid value: "object": is immutable/);
    await expect(apply([gold({ environment: 'elsewhere' })])).rejects.toThrow(/spec.environment: Invalid value: "object": is immutable/);
    await expect(apply([gold({ name: 'Golden coins' })])).resolves.toContain('configured');
  });

  it('takes another app key for a GameEnvironment deleted and created again (the deliberate move)', async () => {
    await kubectl(['delete', 'genv', 'crd-ident', '-n', m.NAMESPACE]);
    await expect(apply([live('crd-ident-moved')])).resolves.toContain('created');
  });
});

it('explains every field (kubectl explain reads the descriptions the schemas give)', async () => {
  const explained = await kubectl(['explain', 'gameenvironments.spec']);
  expect(explained).toContain('appKey');
  expect(explained).toMatch(/the public key game clients sign in with/);
  expect(explained).toMatch(/project\s+<string> -required-\n\s+the Project of this namespace it belongs to; immutable/);
});

it('prints a realm opening in the future as its time, not <invalid>', async () => {
  await apply([m.realm('crd-future', { environment: 'crd-live', number: 7, name: 'Season 7', startAt: '2099-01-01T00:00:00Z' })]);
  const table = await kubectl(['get', 'hrealm', 'crd-future', '-n', m.NAMESPACE]);
  expect(table).toContain('2099-01-01T00:00:00Z');
  expect(table).not.toContain('<invalid>');
});
