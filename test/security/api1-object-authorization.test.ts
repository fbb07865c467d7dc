/**
 * OWASP API1:2023, broken object level authorization (BOLA). Every route of the route table whose
 * path names something (a player, a session, an item, an inventory, a key, a slug...) has a case
 * here, found by walking the table: a route added with a path parameter and no case fails the first
 * test. Each case crosses the route
 *   - between two players of one environment (the attacker's token naming the victim, or the
 *     attacker's own path naming the victim's item, inventory or session), and
 *   - between environments (alpha-test, a sibling environment of the same project, and rival-live,
 *     another project's, each with its own server key and player),
 * and expects the spec's refusal (§4: a player token naming any id is `forbidden`; a thing of another
 * environment, or not the caller's, is `not-found`; the wrong kind of credential is `forbidden`),
 * never another's data; then it reads everything the victim owns and compares it with before.
 */
import type { AnyRoute } from '@hearth/api';
import { call, expectError } from '../support/http';
import { type Actor, ROUTES, type World, idem, pathParams, routeName, startWorld } from './world';
import { reportFigure } from '../support/figures';

jest.setTimeout(60_000);

interface Attempt {
  label: string;
  path: string;
  token: string;
  body?: unknown;
  headers?: Record<string, string>;
  want: [number, string];
}
type Case = { exempt: string } | ((w: World, route: AnyRoute) => Attempt[]);

const FORBIDDEN: [number, string] = [403, 'forbidden'];
const NOT_FOUND: [number, string] = [404, 'not-found'];

/** The route's path with its parameters filled; every parameter must be given. */
function fill(route: AnyRoute, values: Record<string, string>): string {
  return route.path.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => {
    if (values[name] === undefined) throw new Error(`${routeName(route)}: no value for :${name}`);
    return encodeURIComponent(values[name]);
  });
}

/** What the credential kind alone decides: the wrong kind is forbidden before anything is looked up. */
const byKind = (route: AnyRoute, caller: 'server' | 'player', otherwise: [number, string]): [number, string] =>
  (route.credential === 'server' && caller === 'player') || (route.credential === 'player' && caller === 'server') ? FORBIDDEN : otherwise;

/**
 * The victim's path (playerId = the victim, the other parameters the victim's things) called by the
 * attacker of the same environment with a player token, and by each foreign environment's key and
 * player: a player token naming an id is forbidden (spec §4 path rule), a foreign key finds nobody.
 */
function victimPath(values: (w: World) => Record<string, string>, body?: (w: World) => unknown) {
  return (w: World, route: AnyRoute): Attempt[] => {
    const path = fill(route, { playerId: w.victim.id, ...values(w) });
    const b = body?.(w);
    const attempts: Attempt[] = [{ label: 'attacker token names the victim', path, token: w.attacker.token, body: b, want: FORBIDDEN }];
    for (const f of w.foreign) {
      attempts.push({ label: `${f.env} key names the victim`, path, token: f.key, body: b, want: byKind(route, 'server', NOT_FOUND) });
      attempts.push({ label: `${f.env} token names the victim`, path, token: f.token, body: b, want: FORBIDDEN });
    }
    return attempts;
  };
}

/**
 * The caller's own path (`me`, or their own id with their key) naming one of the victim's things:
 * the attacker of the same environment, the attacker's environment's key, each foreign environment.
 */
function ownPathVictimThing(values: (w: World) => Record<string, string>, body?: (w: World) => unknown, sameEnvironment = true) {
  return (w: World, route: AnyRoute): Attempt[] => {
    const b = body?.(w);
    const foreign = w.foreign.map((f) => [f.env, f] as [string, Actor]);
    const callers: Array<[string, Actor]> = sameEnvironment ? [['attacker', w.attacker], ...foreign] : foreign;
    const attempts: Attempt[] = [];
    for (const [label, who] of callers) {
      attempts.push({
        label: `${label} token, own path, the victim's thing`,
        path: fill(route, { playerId: 'me', ...values(w) }),
        token: who.token,
        body: b,
        want: byKind(route, 'player', NOT_FOUND),
      });
      attempts.push({
        label: `${label} key, own player, the victim's thing`,
        path: fill(route, { playerId: who.id, ...values(w) }),
        token: who.key,
        body: b,
        want: byKind(route, 'server', NOT_FOUND),
      });
    }
    return attempts;
  };
}

/** The caller's own path in a foreign environment naming content of alpha-live (a currency key): nothing of that name there. */
const foreignOwnPath = (values: (w: World) => Record<string, string>, body?: (w: World) => unknown) => ownPathVictimThing(values, body, false);

/** Content of alpha-live (a table, a post, a session) asked for with each foreign environment's credentials. */
function foreignOnly(values: (w: World) => Record<string, string>, body?: (w: World) => unknown) {
  return (w: World, route: AnyRoute): Attempt[] =>
    w.foreign.flatMap((f) => [
      { label: `${f.env} key`, path: fill(route, values(w)), token: f.key, body: body?.(w), want: byKind(route, 'server', NOT_FOUND) },
      { label: `${f.env} token`, path: fill(route, values(w)), token: f.token, body: body?.(w), want: byKind(route, 'player', NOT_FOUND) },
    ]);
}

const both =
  (...parts: Array<(w: World, route: AnyRoute) => Attempt[]>) =>
  (w: World, route: AnyRoute) =>
    parts.flatMap((p) => p(w, route));

const none = () => ({});
const item = (w: World) => ({ itemId: w.ids.itemId });
const chest = (w: World) => ({ itemId: w.ids.chestId });
const inventory = (w: World) => ({ inventory: w.ids.inventoryId });
const move = () => ({ amount: 1, reason: 'attack' });
const currencyKey = (w: World) => ({ currencyKey: w.ids.currencyKey });
const card = (w: World) => ({ cardId: w.ids.cardId });
const deck = (w: World) => ({ deckId: w.ids.deckId });
const deckCard = (w: World) => ({ deckId: w.ids.deckId, cardId: w.ids.cardId });
const deckType = (w: World) => ({ deckId: w.ids.deckId, cardTypeKey: 'sec-card' });
const cardBody = () => ({ cardTypeKey: 'sec-card', realmId: null });
const cardStackBody = () => ({ cardTypeKey: 'sec-card', quantity: 1, realmId: null });
const deckBody = (w: World) => ({ inventoryId: w.ids.inventoryId, name: 'pwned' });
const session = (w: World) => ({ sessionId: w.ids.sessionId });
const sessionMate = (w: World) => ({ sessionId: w.ids.sessionId, playerId: w.mate.id });

/** The attacker of the victim's environment, not seated in the victim's session: not-found (spec §4 sessions). */
const unseatedAttacker =
  (values: (w: World) => Record<string, string>, body?: (w: World) => unknown) =>
  (w: World, route: AnyRoute): Attempt[] => [
    { label: 'attacker token, not seated', path: fill(route, values(w)), token: w.attacker.token, body: body?.(w), want: NOT_FOUND },
  ];

const CASES: Record<string, Case> = {
  'GET /players/:playerId': victimPath(none),
  'PATCH /players/:playerId': victimPath(none, () => ({ displayName: 'pwned' })),
  'DELETE /players/:playerId': victimPath(none),
  'POST /players/:playerId/sign-out': victimPath(none),
  'GET /config/tables/:key': foreignOnly((w) => ({ key: w.ids.tableKey })),
  'GET /sessions/:sessionId': foreignOnly(session),
  'POST /sessions/:sessionId/join': foreignOnly(session, () => ({})),
  'POST /sessions/:sessionId/leave': both(unseatedAttacker(session), foreignOnly(session)),
  'POST /sessions/:sessionId/ready': both(
    unseatedAttacker(session, () => ({ isReady: true })),
    foreignOnly(session, () => ({ isReady: true })),
  ),
  'POST /sessions/:sessionId/players/:playerId/kick': both(unseatedAttacker(sessionMate), foreignOnly(sessionMate)),
  'POST /sessions/:sessionId/players/:playerId/promote': both(unseatedAttacker(sessionMate), foreignOnly(sessionMate)),
  'POST /sessions/:sessionId/status': foreignOnly(session, () => ({ status: 'ERROR', error: 'pwned' })),
  'GET /players/:playerId/legal': victimPath(none),
  'GET /players/:playerId/legal/outstanding': victimPath(none),
  'POST /players/:playerId/legal/accept': victimPath(none, () => ({ documents: [{ document: 'sec-terms', version: '1' }] })),
  'GET /players/:playerId/tours': victimPath(none),
  'POST /players/:playerId/tours/:tourId/complete': both(
    victimPath((w) => ({ tourId: w.ids.tourId })),
    // A foreign player completing alpha-live's tour id in their own environment: no such tour there.
    (w, route) =>
      w.foreign.map((f) => ({
        label: `${f.env} token, own path`,
        path: fill(route, { playerId: 'me', tourId: w.ids.tourId }),
        token: f.token,
        want: NOT_FOUND,
      })),
  ),
  'GET /blog/posts/:slug': foreignOnly((w) => ({ slug: w.ids.slug })),
  'GET /players/:playerId/data': victimPath(none),
  'GET /players/:playerId/data/:key': victimPath((w) => ({ key: w.ids.saveKey })),
  'PUT /players/:playerId/data/:key': victimPath(
    (w) => ({ key: w.ids.saveKey }),
    () => ({ data: { gold: 0 } }),
  ),
  'DELETE /players/:playerId/data/:key': victimPath((w) => ({ key: w.ids.saveKey })),
  'POST /crash-reports/:appKey': {
    exempt:
      'the path names an environment, not an object: the upload takes no credential (spec §4 crashes), writes a report only into the environment its app key names and answers no data of it; an unknown app key is tested in test/crashes/uploads.test.ts',
  },
  'GET /players/:playerId/inventories': victimPath(none),
  'GET /players/:playerId/inventories/:inventory': both(victimPath(inventory), ownPathVictimThing(inventory)),
  'GET /players/:playerId/inventories/:inventory/balances': both(victimPath(inventory), ownPathVictimThing(inventory)),
  'GET /players/:playerId/inventories/:inventory/items': both(victimPath(inventory), ownPathVictimThing(inventory)),
  'GET /players/:playerId/inventories/:inventory/item-stacks': both(victimPath(inventory), ownPathVictimThing(inventory)),
  'GET /players/:playerId/ledger': victimPath(none),
  'POST /players/:playerId/currencies/:currencyKey/credit': both(victimPath(currencyKey, move), foreignOwnPath(currencyKey, move)),
  'POST /players/:playerId/currencies/:currencyKey/debit': both(victimPath(currencyKey, move), foreignOwnPath(currencyKey, move)),
  'POST /players/:playerId/currencies/:currencyKey/refund': both(victimPath(currencyKey, move), foreignOwnPath(currencyKey, move)),
  'POST /players/:playerId/currencies/:currencyKey/consume': both(
    victimPath(currencyKey, () => ({ amount: 1, allowance: 10, reason: 'attack' })),
    foreignOwnPath(currencyKey, () => ({ amount: 1, allowance: 10, reason: 'attack' })),
  ),
  'POST /players/:playerId/items/grant': victimPath(none, () => ({ itemTypeKey: 'sec-relic' })),
  'POST /players/:playerId/items/:itemId/consume': both(victimPath(item), ownPathVictimThing(item)),
  'POST /players/:playerId/item-stacks/consume': victimPath(none, () => ({ itemTypeKey: 'sec-stack', quantity: 1 })),
  'POST /players/:playerId/items/:itemId/use': both(victimPath(item), ownPathVictimThing(item)),
  'POST /players/:playerId/item-stacks/use': victimPath(none, () => ({ itemTypeKey: 'sec-stack' })),
  'POST /players/:playerId/items/:itemId/open': both(victimPath(chest), ownPathVictimThing(chest)),
  'POST /players/:playerId/purchases/items': victimPath(none, () => ({ itemTypeKey: 'sec-potion' })),
  'GET /players/:playerId/inventories/:inventory/cards': both(victimPath(inventory), ownPathVictimThing(inventory)),
  'GET /players/:playerId/inventories/:inventory/card-stacks': both(victimPath(inventory), ownPathVictimThing(inventory)),
  'POST /players/:playerId/purchases/cards': victimPath(none, cardBody),
  'POST /players/:playerId/cards/grant': victimPath(none, cardBody),
  'POST /players/:playerId/cards/:cardId/consume': both(victimPath(card), ownPathVictimThing(card)),
  'POST /players/:playerId/card-stacks/grant': victimPath(none, cardStackBody),
  'POST /players/:playerId/card-stacks/consume': victimPath(none, cardStackBody),
  'GET /players/:playerId/decks': victimPath(none),
  // The attacker's own deck in the victim's inventory: no such inventory of theirs.
  'POST /players/:playerId/decks': both(victimPath(none, deckBody), ownPathVictimThing(none, deckBody)),
  'GET /players/:playerId/decks/:deckId': both(victimPath(deck), ownPathVictimThing(deck)),
  'PATCH /players/:playerId/decks/:deckId': both(
    victimPath(deck, () => ({ name: 'pwned' })),
    ownPathVictimThing(deck, () => ({ name: 'pwned' })),
  ),
  'DELETE /players/:playerId/decks/:deckId': both(victimPath(deck), ownPathVictimThing(deck)),
  'PUT /players/:playerId/decks/:deckId/cards/:cardId': both(victimPath(deckCard), ownPathVictimThing(deckCard)),
  'DELETE /players/:playerId/decks/:deckId/cards/:cardId': both(victimPath(deckCard), ownPathVictimThing(deckCard)),
  'PUT /players/:playerId/decks/:deckId/types/:cardTypeKey': both(
    victimPath(deckType, () => ({ count: 0 })),
    ownPathVictimThing(deckType, () => ({ count: 0 })),
  ),
  'GET /players/:playerId/decks/:deckId/validation': both(victimPath(deck), ownPathVictimThing(deck)),
  'GET /players/:playerId/unlocks': victimPath(none),
  'PUT /players/:playerId/unlocks/:key': victimPath(
    (w) => ({ key: w.ids.unlockKey }),
    () => ({ source: 'pwned' }),
  ),
  'DELETE /players/:playerId/unlocks/:key': victimPath((w) => ({ key: w.ids.unlockKey })),
  'GET /players/:playerId/xp': victimPath(none),
  'POST /players/:playerId/xp': victimPath(none, () => ({ amount: 1 })),
  'GET /players/:playerId/skill-trees': victimPath(none),
  // alpha-live's tree (hidden) asked in a foreign environment: no tree of that key there.
  'GET /players/:playerId/skill-trees/:treeKey': both(
    victimPath(() => ({ treeKey: 'sec-tree' })),
    foreignOwnPath(() => ({ treeKey: 'sec-tree' })),
  ),
  'POST /players/:playerId/skill-nodes/:nodeKey/unlock': both(
    victimPath(
      () => ({ nodeKey: 'sec-node' }),
      () => ({}),
    ),
    foreignOwnPath(
      () => ({ nodeKey: 'sec-node' }),
      () => ({}),
    ),
  ),
  'GET /players/:playerId/stats': victimPath(none),
  'GET /players/:playerId/entitlements': victimPath(none),
  // The victim's grant acknowledged by another environment's key (not-found) or any player token (forbidden).
  'POST /commerce/grants/:grantId/ack': foreignOnly((w) => ({ grantId: w.ids.grantId })),
  'POST /players/:playerId/stats/:key/increment': victimPath(
    () => ({ key: 'sec-stat' }),
    () => ({ by: 1 }),
  ),
  // The path names no object of another's: a stat needs no definition (docs/progression.md), so each
  // server key increments its own environment's counter (kept apart: test/stats/stats.test.ts). What
  // is left to cross is the credential: no player's token increments, of any environment.
  'POST /stats/:key/increment': (w, route) =>
    [w.attacker, ...w.foreign].map((who) => ({
      label: `${who.env} player token`,
      path: fill(route, { key: 'sec-stat' }),
      token: who.token,
      body: { by: 1 },
      want: FORBIDDEN,
    })),
};

/** Text of the victim's that no refusal may carry. */
const LEAKS = ['gold', 'alpha only', 'secret body', 'Only for alpha-live', '"victim"', '"mate"', 'sec-relic', 'sec-chest', 'Victim deck'];

const withParams = ROUTES.filter((r) => pathParams(r).length > 0);
let w: World;
let ran = 0;

beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => {
  // The figure docs/reliability.md quotes.
  reportFigure(`api1: ${withParams.length} routes with a path parameter, ${ran} crossed requests`);
  await w?.h.close();
});

test('every route with a path parameter has a case, and every case names a route of the table', () => {
  const names = withParams.map(routeName);
  expect(names.filter((n) => !(n in CASES))).toEqual([]);
  expect(Object.keys(CASES).filter((n) => !names.includes(n))).toEqual([]);
  expect(withParams.length).toBeGreaterThanOrEqual(43);
});

test.each(withParams.map((r) => [routeName(r), r] as const))(
  '%s: crossed between players and environments → refused, nothing read, nothing changed',
  async (name, route) => {
    const spec = CASES[name];
    if (!spec) throw new Error(`no BOLA case for ${name}: add one to CASES`);
    if ('exempt' in spec) {
      expect(route.credential).toBe('none');
      return;
    }
    const before = await w.snapshot();
    const attempts = spec(w, route);
    expect(attempts.length).toBeGreaterThan(0);
    for (const a of attempts) {
      const headers = route.idempotency && route.idempotency !== 'none' ? { ...idem(), ...(a.headers ?? {}) } : a.headers;
      const reply = await call(w.h.base, route.method, a.path, { token: a.token, body: a.body, headers });
      ran++;
      try {
        expectError(reply, a.want[0], a.want[1]);
        // A refusal may quote what the request itself named (a not-found quotes the key asked for):
        // the caller sent it, so that is no leak. Anything else of the victim's is.
        const asked = `${a.path} ${JSON.stringify(a.body ?? null)}`;
        for (const leak of LEAKS.filter((l) => !asked.includes(l.replaceAll('"', '')))) expect(reply.text).not.toContain(leak);
      } catch (err) {
        throw new Error(`${name}, ${a.label} (${a.path}): ${(err as Error).message}\nanswer: ${reply.status} ${reply.text}`);
      }
    }
    expect(await w.snapshot()).toEqual(before);
  },
);
