/**
 * OWASP API5:2023, broken function level authorization. Walking the route table's credential
 * declarations: every `server` route called with a player token and every `player` route called with
 * a server key is refused 403 `forbidden` (spec §4 "Credentials" 2) and changes nothing; the same
 * request with the right credential then succeeds, so the refusal is the credential's and not a bad
 * request's. A route with a `server` or `player` credential and no sample here fails the first test.
 *
 * Then the functions a route keeps to some callers: a server key acts only in its own environment
 * (definitions, symbol files, sign-in), only the host kicks or promotes, a `server:` save slot and
 * purchase allowances are for server keys.
 * (test/api/openapi.test.ts already sends the wrong kind of credential to every route with no body;
 * here each request is a good one, and the state after is checked.)
 */
import type { AnyRoute } from '@hearth/api';
import { call, expectError, type Reply } from '../support/http';
import { Actor, ROUTES, World, idem, routeName, startWorld } from './world';

jest.setTimeout(60_000);

/** A request that succeeds with the route's own credential; `path(asServer)` names the subject as a server key or a player token would. */
interface Sample {
  path: (asServer: boolean) => string;
  body?: unknown;
  ok: number;
}
type Prepare = (w: World, subject: Actor) => Promise<Sample>;

const must = (reply: Reply, ...ok: number[]) => {
  if (!ok.includes(reply.status)) throw new Error(`prepare: ${reply.status} ${reply.text}`);
  return reply.body;
};
const me = (subject: Actor) => (asServer: boolean) => (asServer ? subject.id : 'me');
const at = (w: World) => w.h.base;
const hostSession = async (w: World, host: Actor) => must(await call(at(w), 'POST', '/sessions', { token: host.token, body: { gameMode: 'duel', map: 'harbor' } }), 201).id as string;

const SAMPLES: Record<string, Prepare> = {
  // server routes
  'POST /auth/server': async (_w, s) => ({ path: () => '/auth/server', body: { subject: `api5-made-by-${s.id}` }, ok: 201 }),
  'DELETE /players/:playerId': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}`, ok: 204 }),
  'POST /sessions/:sessionId/status': async (w, s) => {
    const id = await hostSession(w, s);
    // Everyone seated ready moves it to PREPARING_INSTANCE, where a game server reports.
    must(await call(at(w), 'POST', `/sessions/${id}/ready`, { token: s.token, body: { isReady: true } }), 200);
    return { path: () => `/sessions/${id}/status`, body: { status: 'ERROR', error: 'api5' }, ok: 200 };
  },
  'POST /crash-symbols/uploads': async () => ({ path: () => '/crash-symbols/uploads', body: { label: 'game', version: '1.0', fileName: 'game.sym', sizeBytes: 10, sha256: '0'.repeat(64) }, ok: 200 }),
  'GET /crash-symbols/files': async () => ({ path: () => '/crash-symbols/files', ok: 200 }),
  'GET /definitions/realms': async () => ({ path: () => '/definitions/realms', ok: 200 }),
  'GET /definitions/currencies': async () => ({ path: () => '/definitions/currencies', ok: 200 }),
  'GET /definitions/item-types': async () => ({ path: () => '/definitions/item-types', ok: 200 }),
  'POST /players/:playerId/currencies/:currencyKey/credit': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}/currencies/sec-gems/credit`, body: { amount: 5, reason: 'api5' }, ok: 200 }),
  'POST /players/:playerId/currencies/:currencyKey/debit': async (w, s) => {
    must(await call(at(w), 'POST', `/players/${s.id}/currencies/sec-gems/credit`, { token: s.key, headers: idem(), body: { amount: 5, reason: 'api5' } }), 200);
    return { path: (srv) => `/players/${me(s)(srv)}/currencies/sec-gems/debit`, body: { amount: 1, reason: 'api5' }, ok: 200 };
  },
  'POST /players/:playerId/currencies/:currencyKey/refund': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}/currencies/sec-gems/refund`, body: { amount: 1, reason: 'api5' }, ok: 200 }),
  'POST /players/:playerId/currencies/:currencyKey/consume': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}/currencies/sec-energy/consume`, body: { amount: 1, allowance: 10, reason: 'api5' }, ok: 200 }),
  'POST /players/:playerId/items/grant': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}/items/grant`, body: { itemTypeKey: 'sec-relic' }, ok: 200 }),
  'POST /players/:playerId/items/:itemId/consume': async (w, s) => {
    const granted = must(await call(at(w), 'POST', `/players/${s.id}/items/grant`, { token: s.key, headers: idem(), body: { itemTypeKey: 'sec-relic' } }), 200);
    return { path: (srv) => `/players/${me(s)(srv)}/items/${granted.items[0].id}/consume`, ok: 200 };
  },
  'POST /players/:playerId/item-stacks/consume': async (w, s) => {
    must(await call(at(w), 'POST', `/players/${s.id}/items/grant`, { token: s.key, headers: idem(), body: { itemTypeKey: 'sec-stack', quantity: 2 } }), 200);
    return { path: (srv) => `/players/${me(s)(srv)}/item-stacks/consume`, body: { itemTypeKey: 'sec-stack', quantity: 1 }, ok: 200 };
  },
  'PUT /players/:playerId/unlocks/:key': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}/unlocks/api5.key`, body: { source: 'api5' }, ok: 201 }),
  'DELETE /players/:playerId/unlocks/:key': async (w, s) => {
    must(await call(at(w), 'PUT', `/players/${s.id}/unlocks/api5.gone`, { token: s.key, body: {} }), 201);
    return { path: (srv) => `/players/${me(s)(srv)}/unlocks/api5.gone`, ok: 204 };
  },
  // player routes
  'GET /realtime': async () => ({ path: () => '/realtime', ok: 200 }),
  'POST /sessions': async () => ({ path: () => '/sessions', body: { gameMode: 'duel', map: 'harbor' }, ok: 201 }),
  'POST /sessions/:sessionId/join': async (w) => {
    const id = await hostSession(w, await w.newActor());
    return { path: () => `/sessions/${id}/join`, body: {}, ok: 200 };
  },
  'POST /sessions/:sessionId/leave': async (w, s) => {
    const id = await hostSession(w, s);
    return { path: () => `/sessions/${id}/leave`, ok: 204 };
  },
  'POST /sessions/:sessionId/ready': async (w, s) => {
    const id = await hostSession(w, s);
    return { path: () => `/sessions/${id}/ready`, body: { isReady: true }, ok: 200 };
  },
  'POST /sessions/:sessionId/players/:playerId/kick': async (w, s) => {
    const id = await hostSession(w, s);
    const guest = await w.newActor();
    must(await call(at(w), 'POST', `/sessions/${id}/join`, { token: guest.token, body: {} }), 200);
    return { path: () => `/sessions/${id}/players/${guest.id}/kick`, ok: 200 };
  },
  'POST /sessions/:sessionId/players/:playerId/promote': async (w, s) => {
    const id = await hostSession(w, s);
    const guest = await w.newActor();
    must(await call(at(w), 'POST', `/sessions/${id}/join`, { token: guest.token, body: {} }), 200);
    return { path: () => `/sessions/${id}/players/${guest.id}/promote`, ok: 200 };
  },
  'POST /players/:playerId/legal/accept': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}/legal/accept`, body: { documents: [{ document: 'sec-terms', version: '1' }] }, ok: 200 }),
  'GET /players/:playerId/tours': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}/tours`, ok: 200 }),
  'POST /players/:playerId/tours/:tourId/complete': async (_w, s) => ({ path: (srv) => `/players/${me(s)(srv)}/tours/sec-tour/complete`, ok: 204 }),
  'POST /support/requests': async () => ({ path: () => '/support/requests', body: { subject: 'Help me', message: 'Something is broken in the shop.' }, ok: 201 }),
  'POST /support/reports': async (w) => ({ path: () => '/support/reports', body: { playerId: w.attacker.id, reason: 'cheating' }, ok: 201 }),
};

const oneKind = ROUTES.filter((r) => r.credential === 'server' || r.credential === 'player');
let w: World;
let ran = 0;

beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => {
  console.log(`api5: ${oneKind.length} routes of one credential kind, ${ran} requests`);
  await w?.h.close();
});

const send = (route: AnyRoute, path: string, token: string, body?: unknown) => {
  ran++;
  const headers = route.idempotency && route.idempotency !== 'none' ? idem() : undefined;
  return call(w.h.base, route.method, path, { token, body, headers });
};

test('every route that takes one kind of credential has a sample, and every sample names such a route', () => {
  const names = oneKind.map(routeName);
  expect(names.filter((n) => !(n in SAMPLES))).toEqual([]);
  expect(Object.keys(SAMPLES).filter((n) => !names.includes(n))).toEqual([]);
});

test.each(oneKind.map((r) => [routeName(r), r] as const))('%s: the other kind of credential → 403 forbidden, nothing changed; its own kind → success', async (name, route) => {
  const subject = await w.newActor();
  const sample = await SAMPLES[name](w, subject);
  const before = await w.snapshotOf(subject);
  const identities = await w.h.db('player_identities').count({ n: '*' }).first();

  const asServer = route.credential === 'server';
  const wrongToken = asServer ? subject.token : subject.key;
  // The wrong kind names the subject as its own kind would (`me` for a token, the id for a key), and as the route's own kind would.
  for (const path of new Set([sample.path(!asServer), sample.path(asServer)])) {
    const reply = await send(route, path, wrongToken, sample.body);
    try {
      expectError(reply, 403, 'forbidden');
    } catch (err) {
      throw new Error(`${name} (${path}) with a ${asServer ? 'player token' : 'server key'}: ${(err as Error).message}\nanswer: ${reply.status} ${reply.text}`);
    }
  }
  expect(await w.snapshotOf(subject)).toEqual(before);
  expect(await w.h.db('player_identities').count({ n: '*' }).first()).toEqual(identities);

  const right = await send(route, sample.path(asServer), asServer ? subject.key : subject.token, sample.body);
  expect({ status: right.status, text: right.status === sample.ok ? '' : right.text }).toEqual({ status: sample.ok, text: '' });
});

describe('a server key manages only its own environment', () => {
  test('definitions and symbol files list only the key’s environment', async () => {
    const alphaOnly = ['sec-gems', 'sec-energy', 'sec-relic', 'sec-stack', 'sec-chest', 'sec-potion', 'alpha-symbols'];
    must(await call(w.h.base, 'POST', '/crash-symbols/uploads', { token: w.victim.key, body: { label: 'alpha-symbols', version: '1', fileName: 'a.sym', sizeBytes: 1, sha256: '1'.repeat(64) } }), 200);
    expect((await call(w.h.base, 'GET', '/definitions/currencies', { token: w.victim.key })).text).toContain('sec-gems');
    for (const f of w.foreign) {
      for (const path of ['/definitions/currencies', '/definitions/item-types', '/definitions/realms', '/crash-symbols/files']) {
        const reply = await call(w.h.base, 'GET', path, { token: f.key });
        ran++;
        expect(reply.status).toBe(200);
        for (const key of alphaOnly) expect(reply.text).not.toContain(key);
      }
    }
  });

  test('a sign-in with another environment’s key makes a player there, never hands out the victim', async () => {
    for (const f of w.foreign) {
      const reply = await call(w.h.base, 'POST', '/auth/server', { token: f.key, body: { subject: 'victim' } });
      ran++;
      expect(reply.status).toBe(201);
      expect(reply.body.player.id).not.toBe(w.victim.id);
      // That player's token is of its own environment: the victim's things are not-found with it.
      expectError(await call(w.h.base, 'GET', `/sessions/${w.ids.sessionId}`, { token: reply.body.accessToken }), 404, 'not-found');
    }
  });
});

describe('functions a route keeps to some callers', () => {
  test('only the host kicks or promotes: a seated guest → 403 forbidden, nobody moved', async () => {
    const host = await w.newActor();
    const [guest, other] = [await w.newActor(), await w.newActor()];
    const id = await hostSession(w, host);
    for (const p of [guest, other]) must(await call(w.h.base, 'POST', `/sessions/${id}/join`, { token: p.token, body: {} }), 200);
    const before = must(await call(w.h.base, 'GET', `/sessions/${id}`, { token: host.key }), 200);
    for (const action of ['kick', 'promote']) {
      for (const target of [other.id, host.id]) {
        expectError(await call(w.h.base, 'POST', `/sessions/${id}/players/${target}/${action}`, { token: guest.token }), 403, 'forbidden');
        ran++;
      }
    }
    expect(must(await call(w.h.base, 'GET', `/sessions/${id}`, { token: host.key }), 200)).toEqual(before);
  });

  test('a `server:` save slot: a player reads it but cannot write or delete it', async () => {
    const p = await w.newActor();
    must(await call(w.h.base, 'PUT', `/players/${p.id}/data/server:rank`, { token: p.key, body: { data: { rank: 1 } } }), 201);
    expectError(await call(w.h.base, 'PUT', '/players/me/data/server:rank', { token: p.token, body: { data: { rank: 99 } } }), 403, 'forbidden');
    expectError(await call(w.h.base, 'PUT', '/players/me/data/server:new', { token: p.token, body: { data: 1 } }), 403, 'forbidden');
    expectError(await call(w.h.base, 'DELETE', '/players/me/data/server:rank', { token: p.token }), 403, 'forbidden');
    ran += 3;
    expect(must(await call(w.h.base, 'GET', '/players/me/data/server:rank', { token: p.token }), 200).data).toEqual({ rank: 1 });
    expectError(await call(w.h.base, 'GET', '/players/me/data/server:new', { token: p.token }), 404, 'not-found');
  });

  test('purchase allowances from a player token → 403 forbidden, nothing bought or charged', async () => {
    const p = await w.newActor();
    must(await call(w.h.base, 'POST', `/players/${p.id}/currencies/sec-gems/credit`, { token: p.key, headers: idem(), body: { amount: 10, reason: 'api5' } }), 200);
    const before = await w.snapshotOf(p);
    expectError(
      await call(w.h.base, 'POST', '/players/me/purchases/items', { token: p.token, body: { itemTypeKey: 'sec-potion', allowances: { 'sec-energy': 100 } } }),
      403,
      'forbidden',
    );
    ran++;
    expect(await w.snapshotOf(p)).toEqual(before);
  });
});
