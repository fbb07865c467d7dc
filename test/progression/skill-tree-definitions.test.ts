/**
 * The SkillTree kind and GET /definitions/skill-trees (spec §2 SkillTree, §4 Definitions;
 * docs/progression.md "Skill trees"): applied with every default, applied again (unchanged), updated,
 * removed. The definitions page with every field, hidden trees listed, paging and the conditional
 * read. What the kind refuses (its CEL rules, a cycle, a key another tree or document holds) is held
 * on core in test/progression/rules.test.ts.
 */
import { type AnyManifest, removeManifest } from '@hearth/core/manifests';
import { SKILL_TREES_CONTENT } from '@hearth/core/progression';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { projectWithout, skillTree, standardManifests } from '../support/manifests';
import { contentVersion, reconcileDocument } from '../support/reconcile';

let h: Harness;
let key: string;

const combat = (spec: Record<string, unknown> = {}) =>
  skillTree('combat', {
    environment: 'alpha-live',
    name: 'Combat',
    description: 'Hit harder',
    nodes: [
      { key: 'slash', name: 'Slash', prices: [{ currencyKey: 'gold', amount: 10 }] },
      {
        key: 'cleave',
        name: 'Cleave',
        description: 'Two at once',
        icon: 'cleave.png',
        parents: ['slash'],
        priceRule: 'any',
        prices: [
          { currencyKey: 'gold', amount: 50 },
          { currencyKey: 'gems', amount: 2 },
        ],
      },
      { key: 'whirl', name: 'Whirlwind', parents: ['slash', 'cleave'], requires: ['chapter.2'] },
    ],
    ...spec,
  });
const secrets = skillTree('secrets', {
  environment: 'alpha-live',
  key: 'secret.arts',
  name: 'Secret arts',
  hidden: true,
  nodes: [{ key: 'vanish', name: 'Vanish' }],
});

const reconcile = (doc: AnyManifest) => reconcileDocument(h.db, h.core.bus, doc);
const version = () => contentVersion(h.db, SKILL_TREES_CONTENT);
async function definitions(query = '', token = key) {
  const reply = await call(h.base, 'GET', `/definitions/skill-trees${query}`, { token });
  expect(reply.status).toBe(200);
  return reply.body as { items: Record<string, any>[]; next: string | null };
}
const nodeRows = async () => (await h.db('skill_nodes').orderBy('key').select('key', 'tree_key')).map((r) => `${r.tree_key}/${r.key}`);

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), ...projectWithout('noprog', 'progression'), combat(), secrets] });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

describe('GET /definitions/skill-trees', () => {
  test('every tree by key, hidden ones listed, each node in the tree’s order with its parents and prices and every default', async () => {
    expect(await definitions()).toEqual({
      items: [
        {
          key: 'combat',
          name: 'Combat',
          description: 'Hit harder',
          hidden: false,
          enabled: true,
          nodes: [
            {
              key: 'slash',
              treeKey: 'combat',
              name: 'Slash',
              description: '',
              icon: null,
              priceRule: 'all',
              parents: [],
              prices: [{ currencyKey: 'gold', amount: 10 }],
            },
            {
              key: 'cleave',
              treeKey: 'combat',
              name: 'Cleave',
              description: 'Two at once',
              icon: 'cleave.png',
              priceRule: 'any',
              parents: ['slash'],
              prices: [
                { currencyKey: 'gold', amount: 50 },
                { currencyKey: 'gems', amount: 2 },
              ],
            },
            { key: 'whirl', treeKey: 'combat', name: 'Whirlwind', description: '', icon: null, priceRule: 'all', parents: ['slash', 'cleave'], prices: [] },
          ],
        },
        {
          key: 'secret.arts',
          name: 'Secret arts',
          description: '',
          hidden: true,
          enabled: true,
          nodes: [{ key: 'vanish', treeKey: 'secret.arts', name: 'Vanish', description: '', icon: null, priceRule: 'all', parents: [], prices: [] }],
        },
      ],
      next: null,
    });
  });

  test('pages by key; the conditional read answers 304 for a current ETag and a new ETag after a change', async () => {
    const first = await definitions('?limit=1');
    expect(first.items.map((t) => t.key)).toEqual(['combat']);
    const rest = await definitions(`?limit=1&cursor=${encodeURIComponent(first.next!)}`);
    expect(rest.items.map((t) => t.key)).toEqual(['secret.arts']);
    expect(rest.next).toBeNull();
    expectError(
      await call(h.base, 'GET', `/definitions/skill-trees?cursor=${encodeURIComponent(first.next!)}`, { token: h.serverKeys['alpha-test-key'] }),
      400,
      'invalid-request',
      'query.cursor',
    );

    const read = await call(h.base, 'GET', '/definitions/skill-trees', { token: key });
    const etag = read.headers.get('etag')!;
    expect(etag).toMatch(/^"t\d+-.+"$/);
    expect((await call(h.base, 'GET', '/definitions/skill-trees', { token: key, headers: { 'If-None-Match': etag } })).status).toBe(304);
    await reconcile(combat({ name: 'Combat!' }));
    const after = await call(h.base, 'GET', '/definitions/skill-trees', { token: key, headers: { 'If-None-Match': etag } });
    expect(after.status).toBe(200);
    expect(after.body.items[0].name).toBe('Combat!');
    expect(after.headers.get('etag')).not.toBe(etag);
    await reconcile(combat());
  });

  test('refusals: a player token, unknown query, the service off', async () => {
    const player = await call(h.base, 'POST', '/auth/server', { token: key, body: { subject: 'def-reader' } });
    expectError(await call(h.base, 'GET', '/definitions/skill-trees', { token: player.body.accessToken }), 403, 'forbidden');
    expectError(await call(h.base, 'GET', '/definitions/skill-trees?hidden=true', { token: key }), 400, 'invalid-request', 'query.hidden');
    expectError(await call(h.base, 'GET', '/definitions/skill-trees', { token: h.serverKeys['noprog-live-key'] }), 403, 'service-disabled');
  });
});

describe('the SkillTree kind', () => {
  test('applied again unchanged (no version move); updated in place; removed with its nodes', async () => {
    const before = await version();
    expect((await reconcile(combat())).action).toBe('unchanged');
    expect(await version()).toBe(before);
    const renamed = combat({
      nodes: [
        { key: 'slash', name: 'Slash' },
        { key: 'stab', name: 'Stab', parents: ['slash'] },
      ],
    });
    expect((await reconcile(renamed)).action).toBe('updated');
    expect(await version()).toBe(before + 1);
    expect(await nodeRows()).toEqual(['combat/slash', 'combat/stab', 'secret.arts/vanish']);
    expect((await removeManifest(h.db, { kind: 'SkillTree', namespace: 'tests', name: 'combat' }, h.core.bus)).action).toBe('removed');
    expect((await removeManifest(h.db, { kind: 'SkillTree', namespace: 'tests', name: 'combat' }, h.core.bus)).action).toBe('absent');
    expect(await nodeRows()).toEqual(['secret.arts/vanish']);
    expect((await definitions()).items.map((t) => t.key)).toEqual(['secret.arts']);
    expect((await reconcile(combat())).action).toBe('created');
  });
});
