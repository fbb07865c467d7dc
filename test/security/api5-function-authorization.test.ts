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
 * (test/api/openapi.test.ts already sends the wrong kind of credential to every route, with placeholder ids;
 * here each request is a good one, and the state after is checked.)
 */
import type { AnyRoute } from '@hearth/api';
import { call, expectError } from '../support/http';
import { type Actor, ROUTES, type World, idem, routeName, startWorld } from './world';
import { SAMPLES, hostSession, must } from './samples';
import { reportFigure } from '../support/figures';

jest.setTimeout(60_000);

const oneKind = ROUTES.filter((r) => r.credential === 'server' || r.credential === 'player' || r.credential === 'licence');
const CREDENTIAL_NAMES = { server: 'server key', player: 'player token', licence: 'licence key' } as const;
type OneKind = keyof typeof CREDENTIAL_NAMES;
const credentialOf = (kind: OneKind, who: Actor) => (kind === 'server' ? who.key : kind === 'player' ? who.token : who.licence);
const sampled = Object.keys(SAMPLES).filter((n) => oneKind.some((r) => routeName(r) === n));
let w: World;
let ran = 0;

beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => {
  reportFigure(`api5: ${oneKind.length} routes of one credential kind, ${ran} requests`);
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
  expect(sampled.sort()).toEqual([...names].sort());
});

test.each(oneKind.map((r) => [routeName(r), r] as const))(
  '%s: the other kind of credential → 403 forbidden, nothing changed; its own kind → success',
  async (name, route) => {
    const subject = await w.newActor();
    const sample = await SAMPLES[name](w, subject);
    const before = await w.snapshotOf(subject);
    const identities = await w.h.db('player_identities').count({ n: '*' }).first();

    const own = route.credential as OneKind;
    const asServer = own === 'server';
    // Every other kind (a licence key included): named as its own kind would name the subject (`me` for a token, the id for a key), and as the route's own kind would.
    for (const wrong of (Object.keys(CREDENTIAL_NAMES) as OneKind[]).filter((kind) => kind !== own)) {
      for (const path of new Set([sample.path(wrong === 'server'), sample.path(asServer)])) {
        const reply = await send(route, path, credentialOf(wrong, subject), sample.body);
        try {
          expectError(reply, 403, 'forbidden');
        } catch (err) {
          throw new Error(`${name} (${path}) with a ${CREDENTIAL_NAMES[wrong]}: ${(err as Error).message}\nanswer: ${reply.status} ${reply.text}`);
        }
      }
    }
    expect(await w.snapshotOf(subject)).toEqual(before);
    expect(await w.h.db('player_identities').count({ n: '*' }).first()).toEqual(identities);

    const right = await send(route, sample.path(asServer), credentialOf(own, subject), sample.body);
    expect({ status: right.status, text: right.status === sample.ok ? '' : right.text }).toEqual({ status: sample.ok, text: '' });
  },
);

describe('a server key manages only its own environment', () => {
  test('definitions and symbol files list only the key’s environment', async () => {
    const alphaOnly = ['sec-gems', 'sec-energy', 'sec-relic', 'sec-stack', 'sec-chest', 'sec-potion', 'alpha-symbols'];
    must(
      await call(w.h.base, 'POST', '/crash-symbols/uploads', {
        token: w.victim.key,
        body: { label: 'alpha-symbols', version: '1', fileName: 'a.sym', sizeBytes: 1, sha256: '1'.repeat(64) },
      }),
      200,
    );
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
    must(
      await call(w.h.base, 'POST', `/players/${p.id}/currencies/sec-gems/credit`, { token: p.key, headers: idem(), body: { amount: 10, reason: 'api5' } }),
      200,
    );
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
