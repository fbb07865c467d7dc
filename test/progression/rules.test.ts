/**
 * The progression's rules (spec §2 SkillTree, Unlock, XP entry; §3 Skill node; §4 Progression;
 * docs/progression.md), called straight on core's services with no route in between, each test in a
 * transaction rolled back after it (test/support/domain.ts):
 * - a player's skill trees: `unlocked` / `unlockable` as nodes are unlocked, hidden trees left out of a
 *   player's own view;
 * - unlocking a node: its charges through the money engine (balance and consumed currencies, account
 *   and realm ones, price rules), `alreadyUnlocked` with no charge, `locked` until the parents and the
 *   unlocks it requires are held, who may unlock, item use needing a node, each refusal changing
 *   nothing;
 * - unlocks recorded once (the first record kept), listed by key with a literal prefix, removed whether
 *   held or not; XP tracks and their totals up to 2^53-1; a player's deletion taking all of them;
 * - what the SkillTree kind refuses (its CEL rules, a cycle, a key another tree or document holds).
 *
 * The HTTP side (status codes and error bodies, the routes' schemas, credentials and `me`, pages and
 * cursors, Idempotency-Key replays, parallel unlocks and additions) and a tree switched off and on,
 * which each process reads from its cache of committed rows, are in test/progression/progression.test.ts;
 * the definitions' page and the kind applied, changed and removed in
 * test/progression/skill-tree-definitions.test.ts.
 */
import { type AnyManifest, ManifestError, validateManifest } from '@hearth/core/manifests';
import { SKILL_TREES_CONTENT } from '@hearth/core/progression';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import { domainSuite } from '../support/domain';
import { itemType, skillTree, standardManifests } from '../support/manifests';
import { GAME_ENV, permanentAndSeason1Realms, shopCurrencies } from '../support/fixtures/economy';
import { combatTree, gameUnlockingSkillNodes, secretTree } from '../support/fixtures/progression';
import { contentVersion, manifestRefusal, reconcileDocument } from '../support/reconcile';

const suite = domainSuite({
  manifests: [
    ...standardManifests(),
    ...permanentAndSeason1Realms(),
    ...shopCurrencies(),
    combatTree(),
    secretTree(),
    itemType('blade', { environment: GAME_ENV, name: 'Blade', category: 'weapon', ownership: 'counted', usable: true, requires: ['slash', 'chapter.1'] }),
    ...gameUnlockingSkillNodes(),
  ],
});
type Player = { id: string; env: EnvironmentContext };
type UnlockAsk = Parameters<typeof suite.core.skillTrees.unlock>[4];
const live = () => suite.player(GAME_ENV);

const unlock = async (p: Player, nodeKey: string, request: UnlockAsk = {}, by: 'server' | 'player' = 'server') =>
  (await suite.core.skillTrees.unlock(suite.db, p.env, p.id, nodeKey, request, by)).answer;
const tree = (p: Player, treeKey: string, withHidden = true) => suite.core.skillTrees.getForPlayer(suite.db, p.env, p.id, treeKey, withHidden);
const record = (p: Player, key: string, source?: string) => suite.core.unlocks.record(suite.db, p.env, p.id, key, source);
const unlocks = async (p: Player, q: { prefix?: string } = {}) => (await suite.core.unlocks.list(suite.db, p.env, p.id, q)).items;
const credit = (p: Player, currencyKey: string, amount: number, extra: { realmId?: string } = {}) =>
  suite.core.economy.move(suite.db, p.env, p.id, currencyKey, 'credit', { amount, reason: 'setup', ...extra });
const balances = async (p: Player) =>
  Object.fromEntries((await suite.core.economy.balances(suite.db, p.env, p.id, 'account', {})).items.map((b) => [b.currencyKey, b.amount]));
const unlockedNodes = async (p: Player) =>
  (await suite.db('player_skill_nodes').where({ player_id: p.id }).orderBy('node_key')).map((r) => r.node_key as string);
const ledger = (p: Player) => suite.db('ledger_entries').where({ player_id: p.id }).orderBy('id');
/** Everything a refused unlock must leave as it was: every balance, the nodes unlocked and the ledger. */
async function snapshot(p: Player) {
  const mine = suite.db('inventories').where({ player_id: p.id }).select('id');
  return {
    balances: await suite.db('balances').whereIn('inventory_id', mine).orderBy(['inventory_id', 'currency_key']).select('*'),
    nodes: await unlockedNodes(p),
    ledger: await ledger(p),
  };
}
const flags = (t: { nodes: { key: string; unlocked: boolean; unlockable: boolean }[] }) =>
  Object.fromEntries(t.nodes.map((n) => [n.key, `${n.unlocked ? 'unlocked' : '-'}/${n.unlockable ? 'unlockable' : '-'}`]));

describe("a player's skill trees", () => {
  test('each node with unlocked and unlockable (not unlocked and every parent is), as nodes are unlocked', async () => {
    const p = await live();
    await credit(p, 'gold', 1000);
    const combatTree = await tree(p, 'combat', false);
    expect(combatTree).toEqual({
      key: 'combat',
      name: 'Combat',
      description: '',
      hidden: false,
      nodes: expect.arrayContaining([
        {
          key: 'slash',
          treeKey: 'combat',
          name: 'Slash',
          description: '',
          icon: null,
          priceRule: 'all',
          parents: [],
          prices: [{ currencyKey: 'gold', amount: 10 }],
          unlocked: false,
          unlockable: true,
        },
      ]),
    });
    expect(flags(combatTree)).toEqual({
      slash: '-/unlockable',
      cleave: '-/-',
      whirl: '-/-',
      focus: '-/unlockable',
      free: '-/unlockable',
      ghostly: '-/unlockable',
      frosty: '-/unlockable',
    });
    await unlock(p, 'slash', {}, 'player');
    expect(flags(await tree(p, 'combat'))).toMatchObject({ slash: 'unlocked/-', cleave: '-/unlockable', whirl: '-/-' });
    await unlock(p, 'cleave', { payWith: 'gold' }, 'player');
    expect(flags(await tree(p, 'combat', false))).toMatchObject({ slash: 'unlocked/-', cleave: 'unlocked/-', whirl: '-/unlockable' });
  });

  test("hidden trees are left out of a player's own view (and not-found by key); a server's view holds them", async () => {
    const p = await live();
    expect((await suite.core.skillTrees.listForPlayer(suite.db, p.env, p.id, false, {})).items.map((t) => t.key)).toEqual(['combat']);
    expect((await suite.core.skillTrees.listForPlayer(suite.db, p.env, p.id, true, {})).items.map((t) => t.key)).toEqual(['combat', 'secret']);
    await suite.expectRefusal(() => tree(p, 'secret', false), 'not-found');
    expect((await tree(p, 'secret')).hidden).toBe(true);
    await suite.expectRefusal(() => tree(p, 'nope'), 'not-found');
    await suite.expectRefusal(() => suite.core.skillTrees.listForPlayer(suite.db, p.env, 'nobody', true, {}), 'not-found');
  });
});

describe('unlocking a skill node', () => {
  test('charges the price through the money engine and records the node; again: alreadyUnlocked, nothing charged', async () => {
    const p = await live();
    await credit(p, 'gold', 100);
    const account = await suite.core.economy.resolve(suite.db, p.env, p.id, 'account');
    const first = await unlock(p, 'slash', {}, 'player');
    expect(first).toEqual({
      nodeKey: 'slash',
      alreadyUnlocked: false,
      charges: [{ transactionId: expect.any(String), inventoryId: account.id, currencyKey: 'gold', amount: -10, balanceAfter: 90, replayed: false }],
    });
    const entry = (await ledger(p)).find((e) => String(e.id) === first.charges[0].transactionId);
    expect(entry).toMatchObject({ reason: 'skill-node', reference: 'skill-node:slash', amount: '-10' });
    expect(await unlock(p, 'slash')).toEqual({ nodeKey: 'slash', alreadyUnlocked: true, charges: [] });
    expect(await balances(p)).toEqual({ gold: 90 });
    // A node without prices charges nothing.
    expect(await unlock(p, 'free')).toEqual({ nodeKey: 'free', alreadyUnlocked: false, charges: [] });
    expect(await unlockedNodes(p)).toEqual(['free', 'slash']);
  });

  test('locked (details.missing) until every parent is unlocked, then until the unlocks the node requires are held; nothing charged', async () => {
    const p = await live();
    await credit(p, 'gold', 1000);
    const before = await snapshot(p);
    expect((await suite.expectRefusal(() => unlock(p, 'whirl', { allowances: { energy: 10 } }), 'locked')).details).toEqual({
      nodeKey: 'whirl',
      missing: ['slash', 'cleave', 'chapter.2'],
    });
    expect((await suite.expectRefusal(() => unlock(p, 'cleave', { payWith: 'gold' }), 'locked')).details).toEqual({ nodeKey: 'cleave', missing: ['slash'] });
    expect(await snapshot(p)).toEqual(before);
    await unlock(p, 'slash');
    await unlock(p, 'cleave', { payWith: 'gold' });
    expect((await suite.expectRefusal(() => unlock(p, 'whirl', { allowances: { energy: 10 } }), 'locked')).details).toEqual({
      nodeKey: 'whirl',
      missing: ['chapter.2'],
    });
    expect((await record(p, 'chapter.2')).created).toBe(true);
    const whirl = await unlock(p, 'whirl', { allowances: { energy: 10 } });
    expect(whirl.charges.map((c) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([
      ['energy', 3, 3],
      ['gold', -5, 935],
    ]);
  });

  test('price rules and currencies: payWith required for any and naming one of the prices; a consumed currency needs a server’s allowance; a realm currency is paid in the realm', async () => {
    const p = await live();
    await credit(p, 'gold', 100);
    await credit(p, 'gems', 1);
    await unlock(p, 'slash');
    const before = await snapshot(p);
    await suite.expectRefusal(() => unlock(p, 'cleave'), 'invalid-request', 'payWith');
    await suite.expectRefusal(() => unlock(p, 'cleave', { payWith: 'energy' }), 'invalid-request', 'payWith');
    expect((await suite.expectRefusal(() => unlock(p, 'cleave', { payWith: 'gems' }), 'insufficient-balance')).details).toEqual({
      currencyKey: 'gems',
      held: 1,
      requested: 2,
    });
    expect((await suite.expectRefusal(() => unlock(p, 'ghostly'), 'not-found')).message).toMatch(/ghost, which is not defined/);
    expect((await suite.expectRefusal(() => unlock(p, 'frosty'), 'disabled')).details).toEqual({ nodeKey: 'frosty', currencyKey: 'frozen' });
    expect(await snapshot(p)).toEqual(before);

    // whirl needs energy (consumed): allowance required, from a server only, and held to.
    const q = await live();
    await credit(q, 'gold', 1000);
    await unlock(q, 'slash');
    await unlock(q, 'cleave', { payWith: 'gold' });
    await record(q, 'chapter.2');
    const qBefore = await snapshot(q);
    expect((await suite.expectRefusal(() => unlock(q, 'whirl'), 'invalid-request', 'allowances')).details?.currencyKey).toBe('energy');
    await suite.expectRefusal(() => unlock(q, 'whirl', { allowances: { energy: 10 } }, 'player'), 'forbidden');
    expect((await suite.expectRefusal(() => unlock(q, 'whirl', { allowances: { energy: 2 } }), 'allowance-exceeded')).details).toEqual({
      currencyKey: 'energy',
      held: 0,
      requested: 3,
      allowance: 2,
    });
    expect(await snapshot(q)).toEqual(qBefore);
    await unlock(q, 'whirl', { allowances: { energy: 3 } });

    // focus is priced in a realm currency: paid from the current realm, or the realm named.
    const r = await live();
    await credit(r, 'tokens', 4, { realmId: 'permanent' });
    expect((await suite.expectRefusal(() => unlock(r, 'focus'), 'insufficient-balance')).details).toMatchObject({ currencyKey: 'tokens', held: 0 });
    await suite.expectRefusal(() => unlock(r, 'focus', { realmId: 'no-such-realm' }), 'not-found');
    const focus = await unlock(r, 'focus', { realmId: 'permanent' });
    expect(focus.charges.map((c) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([['tokens', -4, 0]]);
  });

  test('refusals change nothing: an unknown node, realm or player', async () => {
    const p = await live();
    await credit(p, 'gold', 100);
    const before = await snapshot(p);
    await suite.expectRefusal(() => unlock(p, 'nope'), 'not-found');
    await suite.expectRefusal(() => unlock(p, 'free', { realmId: 'no-such-realm' }), 'not-found');
    await suite.expectRefusal(() => unlock({ ...p, id: 'nobody' }, 'slash'), 'not-found');
    expect(await snapshot(p)).toEqual(before);
  });

  test("in a game of the service's own whose skill trees the game itself unlocks, a player may not unlock; its servers do", async () => {
    const p = await suite.player('house-live');
    await suite.expectRefusal(() => unlock(p, 'house.root', {}, 'player'), 'forbidden');
    expect(await unlockedNodes(p)).toEqual([]);
    expect(await unlock(p, 'house.root')).toEqual({ nodeKey: 'house.root', alreadyUnlocked: false, charges: [] });
    // Elsewhere players unlock their own nodes.
    expect((await unlock(await live(), 'free', {}, 'player')).alreadyUnlocked).toBe(false);
  });

  test('an item type may require a skill node: use answers locked (details.missing) until the node is unlocked', async () => {
    const p = await live();
    await suite.core.items.grant(suite.db, p.env, p.id, { itemTypeKey: 'blade', quantity: 2 });
    const use = () => suite.core.items.useStack(suite.db, p.env, p.id, { itemTypeKey: 'blade' });
    expect((await suite.expectRefusal(use, 'locked')).details).toEqual({ itemTypeKey: 'blade', missing: ['slash', 'chapter.1'] });
    await credit(p, 'gold', 10);
    await unlock(p, 'slash');
    expect((await suite.expectRefusal(use, 'locked')).details).toEqual({ itemTypeKey: 'blade', missing: ['chapter.1'] });
    await record(p, 'chapter.1');
    expect((await use()).answer).toEqual({ itemTypeKey: 'blade', item: null });
  });
});

describe('unlocks', () => {
  test('recorded the first time (created); after, the first record (source and time) unchanged; the source is `server` unless named', async () => {
    const p = await live();
    const first = await record(p, 'chapter.1', 'quest:intro');
    expect(first).toEqual({ created: true, unlock: { key: 'chapter.1', source: 'quest:intro', unlockedAt: expect.any(String) } });
    expect(Math.abs(Date.parse(first.unlock.unlockedAt) - Date.now())).toBeLessThan(60_000);
    expect(await record(p, 'chapter.1', 'something-else')).toEqual({ created: false, unlock: first.unlock });
    expect((await record(p, 'mode_hard')).unlock).toMatchObject({ key: 'mode_hard', source: 'server' });
    expect((await unlocks(p)).map((u) => [u.key, u.source])).toEqual([
      ['chapter.1', 'quest:intro'],
      ['mode_hard', 'server'],
    ]);
    await suite.expectRefusal(() => record({ ...p, id: 'no-such-player' }, 'ok'), 'not-found');
  });

  test('listed by key in byte order; a prefix matches literally (`_` is no wildcard)', async () => {
    const p = await live();
    for (const k of ['zone.b', 'zone.a', 'zoneXa', 'zone_a', 'zone.a.1', 'alpha', '9lives']) await record(p, k);
    expect((await unlocks(p)).map((u) => u.key)).toEqual(['9lives', 'alpha', 'zone.a', 'zone.a.1', 'zone.b', 'zoneXa', 'zone_a']);
    expect((await unlocks(p, { prefix: 'zone.' })).map((u) => u.key)).toEqual(['zone.a', 'zone.a.1', 'zone.b']);
    expect((await unlocks(p, { prefix: 'zone_' })).map((u) => u.key)).toEqual(['zone_a']);
    expect((await unlocks(p, { prefix: 'zone.a' })).map((u) => u.key)).toEqual(['zone.a', 'zone.a.1']);
    expect(await unlocks(p, { prefix: 'nothing' })).toEqual([]);
    await suite.expectRefusal(() => unlocks({ ...p, id: 'nobody' }), 'not-found');
  });

  test('removed whether or not held; afterwards recorded anew with its new source', async () => {
    const p = await live();
    const first = (await record(p, 'gone.soon', 'first')).unlock;
    await suite.core.unlocks.remove(suite.db, p.env, p.id, 'gone.soon');
    expect(await unlocks(p)).toEqual([]);
    await suite.core.unlocks.remove(suite.db, p.env, p.id, 'gone.soon');
    await suite.core.unlocks.remove(suite.db, p.env, p.id, 'never.held');
    const again = await record(p, 'gone.soon', 'second');
    expect(again).toMatchObject({ created: true, unlock: { source: 'second' } });
    expect(again.unlock.unlockedAt >= first.unlockedAt).toBe(true);
    await suite.expectRefusal(() => suite.core.unlocks.remove(suite.db, p.env, 'nobody', 'kept'), 'not-found');
  });
});

describe('XP', () => {
  const add = (p: Player, amount: number, track?: string) => suite.core.xp.add(suite.db, p.env, p.id, amount, track);
  const rows = async (p: Player) => (await suite.db('player_xp').where({ player_id: p.id }).orderBy('track')).map((r) => [r.track, Number(r.xp)]);

  test('adds to a track (default `default`) and answers its new total; the tracks are listed by name', async () => {
    const p = await live();
    expect(await add(p, 100)).toEqual({ track: 'default', xp: 100 });
    expect(await add(p, 50)).toEqual({ track: 'default', xp: 150 });
    expect(await add(p, 7, 'crafting')).toEqual({ track: 'crafting', xp: 7 });
    expect(await suite.core.xp.list(suite.db, p.env, p.id, {})).toEqual({
      items: [
        { track: 'crafting', xp: 7 },
        { track: 'default', xp: 150 },
      ],
      next: null,
    });
  });

  test('a total stops at 2^53-1: one more than fits is invalid-request on amount and adds nothing; an unknown player is not-found', async () => {
    const p = await live();
    await add(p, 1);
    // Just under the ceiling (put there directly: a test cannot add 2^53 times).
    await suite
      .db('player_xp')
      .where({ player_id: p.id })
      .update({ xp: Number.MAX_SAFE_INTEGER - 5 });
    await suite.expectRefusal(() => add(p, 6), 'invalid-request', 'amount');
    expect(await rows(p)).toEqual([['default', Number.MAX_SAFE_INTEGER - 5]]);
    expect(await add(p, 5)).toEqual({ track: 'default', xp: Number.MAX_SAFE_INTEGER });
    await suite.expectRefusal(() => add({ ...p, id: 'nobody' }, 1), 'not-found');
    await suite.expectRefusal(() => suite.core.xp.list(suite.db, p.env, 'nobody', {}), 'not-found');
  });
});

test('deleting the player takes their unlocked nodes, unlocks and XP', async () => {
  const p = await live();
  await credit(p, 'gold', 10);
  await unlock(p, 'slash');
  await record(p, 'chapter.9');
  await suite.core.xp.add(suite.db, p.env, p.id, 3);
  await suite.core.deletePlayer(suite.db, p.env, p.id);
  const left = await suite.db.raw(
    `SELECT (SELECT count(*) FROM player_skill_nodes WHERE player_id = ?)::int AS nodes,
            (SELECT count(*) FROM player_unlocks WHERE player_id = ?)::int AS unlocks,
            (SELECT count(*) FROM player_xp WHERE player_id = ?)::int AS xp`,
    [p.id, p.id, p.id],
  );
  expect(left.rows[0]).toEqual({ nodes: 0, unlocks: 0, xp: 0 });
});

describe('the SkillTree kind', () => {
  const version = () => contentVersion(suite.db, SKILL_TREES_CONTENT);
  const nodeRows = async () => (await suite.db('skill_nodes').orderBy(['tree_key', 'key']).select('key', 'tree_key')).map((r) => `${r.tree_key}/${r.key}`);
  const reconcile = (doc: AnyManifest) => reconcileDocument(suite.db, suite.core.bus, doc);

  test('the CEL rules (the CRD’s, evaluated by hearth apply too): parents of the same tree, unique node keys, each currency once, no node its own parent', () => {
    const refused = (nodes: unknown[]) => {
      try {
        validateManifest(JSON.parse(JSON.stringify(combatTree({ nodes }))), 'test');
      } catch (err) {
        expect(err).toBeInstanceOf(ManifestError);
        const e = err as ManifestError;
        return `${e.field} ${e.reason}`;
      }
      throw new Error('not refused');
    };
    expect(refused([{ key: 'a', name: 'A', parents: ['elsewhere'] }])).toBe('spec.nodes may name as parents only nodes of the same tree');
    expect(
      refused([
        { key: 'a', name: 'A' },
        { key: 'a', name: 'A again' },
      ]),
    ).toBe('spec.nodes must give each node a key of its own');
    expect(
      refused([
        {
          key: 'a',
          name: 'A',
          prices: [
            { currencyKey: 'gold', amount: 1 },
            { currencyKey: 'gold', amount: 2 },
          ],
        },
      ]),
    ).toBe('spec.nodes.0.prices must name each currency once');
    expect(refused([{ key: 'a', name: 'A', parents: ['a'] }])).toBe('spec.nodes.0.parents cannot name the node itself');
    expect(refused([{ key: 'a', name: 'A', priceRule: 'any' }])).toBe('spec.nodes.0.priceRule any needs at least one price');
    expect(
      refused([
        { key: 'b', name: 'B' },
        { key: 'a', name: 'A', parents: ['b', 'b'] },
      ]),
    ).toBe('spec.nodes.1.parents must name each parent once');
    expect(refused([])).toMatch(/^spec\.nodes /);
  });

  test('refused by the reconciler, naming the field and changing nothing: a cycle, a node key of another tree, a tree key of another document', async () => {
    const before = { version: await version(), nodes: await nodeRows() };
    const cycle = await manifestRefusal(() =>
      reconcile(
        combatTree({
          nodes: [
            { key: 'a', name: 'A', parents: ['c'] },
            { key: 'b', name: 'B', parents: ['a'] },
            { key: 'c', name: 'C', parents: ['b'] },
          ],
        }),
      ),
    );
    expect([cycle.field, cycle.reason, cycle.code]).toEqual(['spec.nodes.0.parents', 'form a cycle: a → c → b → a', 'invalid-request']);
    const stolen = await manifestRefusal(() =>
      reconcile(
        skillTree('stealth', {
          environment: GAME_ENV,
          name: 'Stealth',
          nodes: [
            { key: 'sneak', name: 'Sneak' },
            { key: 'vanish', name: 'Vanish' },
          ],
        }),
      ),
    );
    expect([stolen.field, stolen.code]).toEqual(['spec.nodes.1.key', 'conflict']);
    expect(stolen.reason).toContain('secret');
    const sameKey = await manifestRefusal(() =>
      reconcile(skillTree('combat-copy', { environment: GAME_ENV, key: 'combat', name: 'Copy', nodes: [{ key: 'x', name: 'X' }] })),
    );
    expect([sameKey.field, sameKey.code]).toEqual(['spec.key', 'conflict']);
    expect({ version: await version(), nodes: await nodeRows() }).toEqual(before);
    // Another environment may use the same node keys.
    expect(
      (await reconcile(skillTree('combat-test', { environment: 'alpha-test', key: 'combat', name: 'Combat', nodes: [{ key: 'slash', name: 'Slash' }] })))
        .action,
    ).toBe('created');
  });
});
