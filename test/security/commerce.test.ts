/**
 * The OWASP API Top 10 (2023) attacks on commerce, with a store present: the stand-in store
 * (test/support/store-standin.ts) behind a tampering relay of this file's own, which passes every call
 * through unless a test tells it to change the next answer of a method (oversized, not JSON, numbers
 * for ids, another order or app, an HTML 403...). Commerce is where money comes in, so each attack
 * checks the refusal in the spec's error shape and that nothing moved: the store calls counted
 * (no InitTxn, no FinalizeTxn), the commerce rows counted, no entitlement made.
 *
 * The world: `shop-live` (the victim, the attacker, each with a store account of their own), its sibling
 * `shop-test`, and `rival-live`, another project selling through another app of the same store. The
 * victim holds a completed one-time order (its grant unacknowledged) and an order the player approved
 * in the overlay that nobody has settled yet: the bait, which any settlement would finalize.
 *
 * The API's log is captured (at trace level) for the whole file; after each test, neither the answers
 * it received nor the log lines written since carry the publisher key, the store's address or a store
 * transaction id.
 */
import fs from 'node:fs';
import type http from 'node:http';
import { flushLogs } from '@hearth/core';
import { STORE_CALL } from '@hearth/core/commerce';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, type Reply } from '../support/http';
import { StoreStandIn } from '../support/store-standin';
import { closeServer, listenOnLoopback } from '../support/loopback-server';
import { environment, project, serverKey } from '../support/manifests';
import { reportFigure } from '../support/figures';
import {
  APP_ID,
  IDENTITY,
  STORE_KEY,
  STORE_KEY_VARIABLE,
  type Buyer,
  authorize,
  commerceManifests,
  identifiedBuyer,
  identify,
  newBuyer,
  order,
  product,
  reconcile,
  storeSettings,
} from '../commerce/helpers';

jest.setTimeout(60_000);

const RIVAL_APP_ID = 481;

/** What the relay sends back instead of the stand-in's answer (given that answer). */
type Tampering = (upstream: { status: number; text: string }) => { status: number; body: string; contentType?: string };

/** A relay in front of the stand-in: each call passes through, or has its answer changed by the next tampering queued for its method. */
class TamperingRelay {
  private readonly queued = new Map<string, Tampering[]>();
  private server?: http.Server;
  url = '';

  constructor(private readonly upstream: string) {}

  async start(): Promise<this> {
    ({ server: this.server, url: this.url } = await listenOnLoopback((req, res) => void this.relay(req, res)));
    return this;
  }

  async stop(): Promise<void> {
    await closeServer(this.server);
  }

  next(method: string, tampering: Tampering): void {
    this.queued.set(method, [...(this.queued.get(method) ?? []), tampering]);
  }

  private async relay(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      await this.pass(req, res);
    } catch {
      res.destroy(); // the stand-in hung up (a call it never answers, cut when it stops)
    }
  }

  private async pass(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await fetch(`${this.upstream}${req.url}`, {
      method: req.method,
      headers: req.headers['content-type'] ? { 'Content-Type': req.headers['content-type'] } : {},
      body: req.method === 'POST' ? Buffer.concat(chunks) : undefined,
    });
    const upstream = { status: answer.status, text: await answer.text() };
    const method = new URL(req.url ?? '/', 'http://relay').pathname.split('/')[2] ?? '';
    const tampering = this.queued.get(method)?.shift();
    const out = tampering
      ? tampering(upstream)
      : { status: upstream.status, body: upstream.text, contentType: answer.headers.get('content-type') ?? undefined };
    res.writeHead(out.status, { 'Content-Type': out.contentType ?? 'application/json; charset=utf-8' });
    res.end(out.body);
  }
}

let h: Harness;
let store: StoreStandIn;
let relay: TamperingRelay;

/** Every line the API processes wrote (the logger writes its buffered lines with fs.writeSync to fd 1). */
const logged: string[] = [];
/** Every answer the API gave in this file, for the exposure checks. */
const answered: string[] = [];
const LOG_LEVEL = process.env.TEST_LOG_LEVEL;

/** `call` that keeps the answer's text. */
async function send(method: string, path: string, options: Parameters<typeof call>[3] = {}): Promise<Reply> {
  const reply = await call(h.base, method, path, options);
  answered.push(reply.text);
  return reply;
}
async function kept(reply: Promise<Reply>): Promise<Reply> {
  const r = await reply;
  answered.push(r.text);
  return r;
}

let victim: Buyer;
let attacker: Buyer;
let completedOrder: { id: string; storeOrderId: string };
let bait: { id: string; storeOrderId: string };
let grantId: string;

beforeAll(async () => {
  const realWrite = fs.writeSync.bind(fs) as (fd: number, data: any, ...rest: any[]) => number;
  jest.spyOn(fs, 'writeSync').mockImplementation(((fd: number, data: any, ...rest: any[]) => {
    if (fd !== 1) return realWrite(fd, data, ...rest);
    const text = Buffer.isBuffer(data) ? data.toString('utf8') : String(data);
    logged.push(text);
    return Buffer.byteLength(text);
  }) as typeof fs.writeSync);
  process.env.TEST_LOG_LEVEL = 'trace';
  process.env[STORE_KEY_VARIABLE] = STORE_KEY;
  store = await new StoreStandIn([STORE_KEY]).start();
  relay = await new TamperingRelay(store.url).start();
  const manifests = commerceManifests(store).map((doc) => {
    const spec = (doc as { spec: { store?: Record<string, unknown> } }).spec;
    return doc.kind === 'Project' && spec.store ? ({ ...doc, spec: { ...spec, store: { ...spec.store, baseUrl: relay.url } } } as typeof doc) : doc;
  });
  h = await startHarness({
    manifests: [
      ...manifests,
      project('rival', { store: storeSettings(store, { appId: RIVAL_APP_ID, baseUrl: relay.url }) }),
      environment('rival-live', 'rival'),
      serverKey('rival-live-key', 'rival-live'),
      product('rival-pack', {
        environment: 'rival-live',
        sku: 'starter-pack',
        name: 'Rival pack',
        storeItemId: 7,
        entitlement: 'starter',
        prices: [{ currency: 'USD', amount: 499 }],
      }),
    ],
  });

  victim = await identifiedBuyer(h, store);
  attacker = await identifiedBuyer(h, store);
  const bought = (await kept(order(h, victim))).body;
  store.authorize(bought.storeOrderId, true);
  const settled = await kept(authorize(h, victim, bought.storeOrderId));
  if (settled.body.order?.status !== 'completed') throw new Error(`setup: ${settled.text}`);
  completedOrder = { id: bought.id, storeOrderId: bought.storeOrderId };
  grantId = settled.body.entitlements[0].id;
  const open = (await kept(order(h, victim, { sku: 'gems-100', provider: 'steam', language: 'en' }))).body;
  store.authorize(open.storeOrderId, true);
  bait = { id: open.id, storeOrderId: open.storeOrderId };
});

afterAll(async () => {
  await h?.close();
  await relay?.stop();
  await store?.stop();
  jest.restoreAllMocks();
  if (LOG_LEVEL === undefined) delete process.env.TEST_LOG_LEVEL;
  else process.env.TEST_LOG_LEVEL = LOG_LEVEL;
});

/** Identified in another environment (the ticket made for that environment's app). */
async function buyerOf(keyName: string, appid = APP_ID): Promise<Buyer> {
  const buyer = await newBuyer(h, keyName);
  const reply = await identify(h, buyer, { ticket: store.issueTicket(buyer.steamId, { identity: IDENTITY, appid }), identity: IDENTITY });
  if (reply.status !== 200) throw new Error(`identify: ${reply.text}`);
  return buyer;
}

/** What an attack must leave as it was: the commerce rows and the store calls that move money or open orders. */
async function ledgerOfCommerce() {
  const count = async (table: string) => Number((await h.db(table).count({ n: '*' }))[0].n);
  return {
    orders: await count('commerce_orders'),
    openOrders: Number((await h.db('commerce_orders').whereIn('status', ['pending', 'awaiting-player']).count({ n: '*' }))[0].n),
    entitlements: await count('commerce_entitlements'),
    grantChanges: await count('commerce_grant_changes'),
    accounts: await count('commerce_store_accounts'),
    acknowledged: Number((await h.db('commerce_entitlements').whereNotNull('acknowledged_at').count({ n: '*' }))[0].n),
    initTxn: store.count('InitTxn'),
    finalizeTxn: store.count('FinalizeTxn'),
  };
}

async function unchangedBy<T>(attack: () => Promise<T>): Promise<T> {
  const before = await ledgerOfCommerce();
  const result = await attack();
  expect(await ledgerOfCommerce()).toEqual(before);
  return result;
}

/** The bait is still open and approved, never finalized. */
async function baitUntouched() {
  expect((await h.db('commerce_orders').where({ id: bait.id }).first()).status).toBe('awaiting-player');
  expect(store.txnOf(bait.storeOrderId)).toMatchObject({ status: 'Approved', finalized: 0 });
  expect(await h.db('commerce_entitlements').where({ order_id: bait.id }).first()).toBeUndefined();
}

describe("API1 object level: another player's or another environment's orders, entitlements and grants", () => {
  test("the attacker authorizing the victim's store order id (hint true or false): 404 naming storeOrderId, the store never asked", async () => {
    for (const hint of [true, false]) {
      const queried = store.count('QueryTxn');
      const reply = await unchangedBy(() => kept(authorize(h, attacker, bait.storeOrderId, hint)));
      expectError(reply, 404, 'not-found', 'body.storeOrderId');
      expect(store.count('QueryTxn')).toBe(queried);
    }
    await baitUntouched();
  });

  test("a player of the sibling environment or of another project naming the victim's order: 404, the store never asked", async () => {
    const others = [await buyerOf('shop-test-key'), await buyerOf('rival-live-key', RIVAL_APP_ID)];
    for (const other of others) {
      const queried = store.count('QueryTxn');
      for (const storeOrderId of [bait.storeOrderId, completedOrder.storeOrderId]) {
        expectError(await unchangedBy(() => kept(authorize(h, other, storeOrderId))), 404, 'not-found', 'body.storeOrderId');
      }
      // Their own reconciliation settles their own open orders (none): the victim's are not theirs to settle.
      const rec = await unchangedBy(() => kept(reconcile(h, other)));
      expect(rec.status).toBe(200);
      expect(rec.body).toEqual({ orders: [], entitlements: [] });
      expect(store.count('QueryTxn')).toBe(queried);
    }
    await baitUntouched();
  });

  test("a shop-live player naming an approved order of another project's player: 404, that order neither asked about nor finalized", async () => {
    const rival = await buyerOf('rival-live-key', RIVAL_APP_ID);
    const theirs = (await kept(order(h, rival))).body;
    store.authorize(theirs.storeOrderId, true);
    const asked = () => store.calls.filter((c) => c.params.orderid === theirs.storeOrderId && c.method !== 'InitTxn').length;
    expect(asked()).toBe(0);
    for (const who of [attacker, victim]) {
      expectError(await unchangedBy(() => kept(authorize(h, who, theirs.storeOrderId))), 404, 'not-found', 'body.storeOrderId');
    }
    expect(asked()).toBe(0);
    expect(store.txnOf(theirs.storeOrderId)).toMatchObject({ status: 'Approved', finalized: 0 });
    // Its own player settles it, in its own project's app.
    expect((await kept(authorize(h, rival, theirs.storeOrderId))).body.order.status).toBe('completed');
    expect(store.calls.filter((c) => c.method === 'FinalizeTxn' && c.params.orderid === theirs.storeOrderId).map((c) => c.params.appid)).toEqual([
      String(RIVAL_APP_ID),
    ]);
  });

  test("the attacker's reconciliation settles only the attacker's orders: the victim's approved order is not finalized", async () => {
    const queried = store.calls.filter((c) => c.method === 'QueryTxn' && c.params.orderid === bait.storeOrderId).length;
    const reply = await unchangedBy(() => kept(reconcile(h, attacker)));
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ orders: [], entitlements: [] });
    expect(store.calls.filter((c) => c.method === 'QueryTxn' && c.params.orderid === bait.storeOrderId)).toHaveLength(queried);
    await baitUntouched();
  });

  test("the victim's entitlements: the attacker's token 403, another environment's key 404, the victim's own key of the environment 200", async () => {
    const path = `/players/${victim.id}/entitlements`;
    expectError(await send('GET', path, { token: attacker.token }), 403, 'forbidden');
    expectError(await send('GET', path, { token: h.serverKeys['shop-test-key'] }), 404, 'not-found');
    expectError(await send('GET', path, { token: h.serverKeys['rival-live-key'] }), 404, 'not-found');
    const own = await send('GET', path, { token: h.serverKeys['shop-live-key'] });
    expect(own.status).toBe(200);
    expect(own.body.items.map((e: { orderId: string }) => e.orderId)).toEqual([completedOrder.id]);
    const mine = await send('GET', '/players/me/entitlements', { token: attacker.token });
    expect(mine.body.items).toEqual([]);
  });

  test("another environment's server key acking the victim's grant: 404, still unacknowledged; its grant lists never show it", async () => {
    for (const keyName of ['shop-test-key', 'rival-live-key']) {
      const key = h.serverKeys[keyName];
      expectError(await unchangedBy(() => send('POST', `/commerce/grants/${grantId}/ack`, { token: key })), 404, 'not-found');
      const grants = await send('GET', '/commerce/grants?limit=200', { token: key });
      expect(grants.body.items.map((g: { id: string }) => g.id)).not.toContain(grantId);
      const changes = await send('GET', '/commerce/grants/changes?limit=200', { token: key });
      expect(changes.body.items.map((c: { grant: { id: string } }) => c.grant.id)).not.toContain(grantId);
    }
    expect((await h.db('commerce_entitlements').where({ id: grantId }).first()).acknowledged_at).toBeNull();
    // A player token cannot ack at all (the wrong kind of credential).
    expectError(await unchangedBy(() => send('POST', `/commerce/grants/${grantId}/ack`, { token: attacker.token })), 403, 'forbidden');
  });
});

describe("API2 identity: the store's answer to a ticket says who the player is", () => {
  const account = (playerId: string) => h.db('commerce_store_accounts').where({ player_id: playerId }).first();

  test.each([
    ['a ticket of another app of the same store', (steamId: string) => store.issueTicket(steamId, { identity: IDENTITY, appid: RIVAL_APP_ID })],
    ['a ticket made for another identity string', (steamId: string) => store.issueTicket(steamId, { identity: 'another-game', appid: APP_ID })],
    ['a forged ticket (hex the store never made)', () => 'DEADBEEF'.repeat(16)],
  ])('%s: 400 invalid-ticket, no store account', async (_name, ticketOf) => {
    const buyer = await newBuyer(h);
    const reply = await kept(identify(h, buyer, { ticket: ticketOf(buyer.steamId), identity: IDENTITY }));
    expectError(reply, 400, 'invalid-ticket');
    expect(await account(buyer.id)).toBeUndefined();
    expect(store.calls.filter((c) => c.method === 'GetUserInfo' && c.params.steamid === buyer.steamId)).toHaveLength(0);
  });

  test('an expired ticket (the store answers its error): 400 invalid-ticket, no store account', async () => {
    const buyer = await newBuyer(h);
    store.failNext('AuthenticateUserTicket', { errorcode: 101, errordesc: 'Ticket expired' });
    expectError(
      await kept(identify(h, buyer, { ticket: store.issueTicket(buyer.steamId, { identity: IDENTITY, appid: APP_ID }), identity: IDENTITY })),
      400,
      'invalid-ticket',
    );
    expect(await account(buyer.id)).toBeUndefined();
  });

  test("a ticket for the rival project's app presented there proves its account; the same ticket in shop-live is refused", async () => {
    const buyer = await newBuyer(h, 'rival-live-key');
    const ticket = store.issueTicket(buyer.steamId, { identity: IDENTITY, appid: RIVAL_APP_ID });
    expect((await kept(identify(h, buyer, { ticket, identity: IDENTITY }))).body).toEqual({ storeId: buyer.steamId });
    const shopper = await newBuyer(h);
    expectError(await kept(identify(h, shopper, { ticket, identity: IDENTITY })), 400, 'invalid-ticket');
    expect(await account(shopper.id)).toBeUndefined();
  });

  test("a ticket of the victim's store account presented by another player: the store's answer names that account; the victim's orders, entitlements and grants stay the victim's", async () => {
    const other = await newBuyer(h);
    const ticket = store.issueTicket(victim.steamId, { identity: IDENTITY, appid: APP_ID });
    const reply = await kept(identify(h, other, { ticket, identity: IDENTITY }));
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ storeId: victim.steamId });
    expect((await account(other.id)).store_id).toBe(victim.steamId);
    expect((await account(victim.id)).store_id).toBe(victim.steamId); // the victim's own account is not moved
    // Nothing of the victim's follows the account: no entitlement, the one-time product not active, the victim's orders not theirs.
    const catalog = await send('GET', '/commerce/catalog', { token: other.token });
    expect(catalog.body.products.find((p: { sku: string }) => p.sku === 'starter-pack').active).toBe(false);
    expect((await send('GET', '/players/me/entitlements', { token: other.token })).body.items).toEqual([]);
    expectError(await unchangedBy(() => kept(authorize(h, other, bait.storeOrderId))), 404, 'not-found', 'body.storeOrderId');
    expect((await unchangedBy(() => kept(reconcile(h, other)))).body).toEqual({ orders: [], entitlements: [] });
    await baitUntouched();
  });

  test('past the identify limit: 429 rate-limited with Retry-After, the store not asked', async () => {
    const { rows } = await h.db.raw('SELECT extract(epoch FROM now())::float8 AS now');
    const left = 600 - (Math.floor(rows[0].now) % 600);
    if (left < 30) await new Promise((resolve) => setTimeout(resolve, (left + 1) * 1000)); // wall time: the limit counts per ten minutes of the database's clock
    const buyer = await newBuyer(h);
    // Ten attempts with forged tickets use the window up as well as good ones would.
    for (let i = 0; i < 10; i++) expectError(await kept(identify(h, buyer, { ticket: 'AB'.repeat(8 + i), identity: IDENTITY })), 400, 'invalid-ticket');
    const asked = store.count('AuthenticateUserTicket');
    const refused = await kept(identify(h, buyer, { ticket: store.issueTicket(buyer.steamId, { identity: IDENTITY, appid: APP_ID }), identity: IDENTITY }));
    expectError(refused, 429, 'rate-limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(store.count('AuthenticateUserTicket')).toBe(asked);
    expect(await account(buyer.id)).toBeUndefined();
  });
});

describe('API3 property level: the client names no price, no status, no store order', () => {
  test.each([
    ['amount', 1],
    ['currency', 'JPY'],
    ['status', 'completed'],
    ['price', { currency: 'USD', amount: 1 }],
    ['storeOrderId', '12345'],
    ['storeId', '76561197960265729'],
    ['playerId', 'someone-else'],
  ])('an order body with %s: 400 naming it, no order, no InitTxn', async (field, value) => {
    const buyer = await identifiedBuyer(h, store);
    const reply = await unchangedBy(() => kept(order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en', [field]: value })));
    expectError(reply, 400, 'invalid-request', `body.${field}`);
  });

  test('an authorization with a field too many (status, entitlements) is 400 and asks nothing of the store', async () => {
    const queried = store.count('QueryTxn');
    for (const extra of [{ status: 'Succeeded' }, { entitlements: ['starter'] }, { playerId: attacker.id }]) {
      const reply = await unchangedBy(() =>
        send('POST', '/commerce/store/authorizations', { token: victim.token, body: { storeOrderId: bait.storeOrderId, authorized: true, ...extra } }),
      );
      expectError(reply, 400, 'invalid-request', `body.${Object.keys(extra)[0]}`);
    }
    expect(store.count('QueryTxn')).toBe(queried);
    await baitUntouched();
  });

  test('`authorized: true` for an order the player has not approved: still awaiting the player, nothing finalized or granted', async () => {
    const buyer = await identifiedBuyer(h, store);
    const made = (await kept(order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' }))).body;
    for (let i = 0; i < 3; i++) {
      const reply = await unchangedBy(() => kept(authorize(h, buyer, made.storeOrderId, true)));
      expect(reply.status).toBe(200);
      expect(reply.body.order.status).toBe('awaiting-player');
      expect(reply.body.entitlements).toEqual([]);
    }
    expect(store.txnOf(made.storeOrderId)).toMatchObject({ status: 'Init', finalized: 0 });
  });

  test('`authorized: true` for an order the player denied in the overlay: failed, nothing finalized or granted', async () => {
    const buyer = await identifiedBuyer(h, store);
    const made = (await kept(order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' }))).body;
    store.authorize(made.storeOrderId, false);
    const before = await ledgerOfCommerce();
    const reply = await kept(authorize(h, buyer, made.storeOrderId, true));
    expect(reply.body).toMatchObject({ order: { status: 'failed' }, entitlements: [] });
    expect(await ledgerOfCommerce()).toEqual({ ...before, openOrders: before.openOrders - 1 });
    expect(store.txnOf(made.storeOrderId).finalized).toBe(0);
  });
});

describe('API4 resource consumption', () => {
  test.each([
    ['/players/me/entitlements', 'player'],
    ['/commerce/grants', 'server'],
    ['/commerce/grants/changes', 'server'],
  ])('%s: limit 0 and 201 are 400 naming query.limit; 200 is served', async (path, credential) => {
    const token = credential === 'player' ? victim.token : h.serverKeys['shop-live-key'];
    for (const limit of ['0', '201', '-1', '1e3', 'all'])
      expectError(await send('GET', `${path}?limit=${limit}`, { token }), 400, 'invalid-request', 'query.limit');
    expect((await send('GET', `${path}?limit=200`, { token })).status).toBe(200);
  });

  test.each(['/commerce/orders', '/commerce/store/identify', '/commerce/store/authorizations'])(
    '%s: a body past 16 KB is 413 and reaches no store',
    async (path) => {
      const calls = store.calls.length;
      const reply = await unchangedBy(() => send('POST', path, { token: attacker.token, rawBody: JSON.stringify({ sku: 'x'.repeat(17 * 1024) }) }));
      expect(expectError(reply, 413, 'payload-too-large').details).toEqual({ limit: 16 * 1024 });
      expect(store.calls.length).toBe(calls);
    },
  );
});

describe('API6 sensitive business flows', () => {
  test('a one-time product held already: 409 already-active, no order, no InitTxn', async () => {
    expectError(await unchangedBy(() => kept(order(h, victim))), 409, 'already-active');
  });

  test('twenty racing orders for one product: one order, one InitTxn, the others order-in-progress', async () => {
    const buyer = await identifiedBuyer(h, store);
    const before = await ledgerOfCommerce();
    const replies = await Promise.all(Array.from({ length: 20 }, () => kept(order(h, buyer))));
    const made = replies.filter((r) => r.status === 201);
    expect(made).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 201)) expectError(r, 409, 'order-in-progress');
    const after = await ledgerOfCommerce();
    expect(after).toEqual({ ...before, orders: before.orders + 1, openOrders: before.openOrders + 1, initTxn: before.initTxn + 1 });
    // Approved and settled by ten racing authorizations: finalized once, granted once.
    store.authorize(made[0].body.storeOrderId, true);
    const settled = await Promise.all(Array.from({ length: 10 }, () => kept(authorize(h, buyer, made[0].body.storeOrderId))));
    for (const r of settled) expect(r.status).toBe(200);
    expect((await kept(authorize(h, buyer, made[0].body.storeOrderId))).body.order.status).toBe('completed');
    expect(store.txnOf(made[0].body.storeOrderId).finalized).toBe(1);
    expect(await h.db('commerce_entitlements').where({ player_id: buyer.id })).toHaveLength(1);
    reportFigure(`commerce attacks: 20 racing orders → 1 order, 1 InitTxn; 10 racing authorizations → 1 FinalizeTxn, 1 entitlement`);
  });

  test('an Idempotency-Key reused for another product: 409 idempotency-conflict, no second order, no InitTxn', async () => {
    const buyer = await identifiedBuyer(h, store);
    const headers = { 'Idempotency-Key': `api6-${buyer.id}` };
    const first = await kept(order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' }, headers));
    expect(first.status).toBe(201);
    expectError(
      await unchangedBy(() => kept(order(h, buyer, { sku: 'starter-pack', provider: 'steam', language: 'en' }, headers))),
      409,
      'idempotency-conflict',
    );
    // The same request again is the first order, not a second.
    const again = await unchangedBy(() => kept(order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' }, headers)));
    expect(again.body.id).toBe(first.body.id);
  });

  test('a product switched off: 404 naming sku; one priced in no currency of the wallet: 409 not-purchasable; neither reaches the store', async () => {
    const buyer = await identifiedBuyer(h, store);
    expectError(await unchangedBy(() => kept(order(h, buyer, { sku: 'retired', provider: 'steam', language: 'en' }))), 404, 'not-found', 'body.sku');
    const euro = await identifiedBuyer(h, store, { currency: 'EUR' });
    expectError(await unchangedBy(() => kept(order(h, euro, { sku: 'gems-100', provider: 'steam', language: 'en' }))), 409, 'not-purchasable');
    // Another environment's product is not on sale here.
    expectError(await unchangedBy(() => kept(order(h, buyer, { sku: 'test-only', provider: 'steam', language: 'en' }))), 404, 'not-found', 'body.sku');
  });
});

describe("API10 unsafe consumption of the store's answers", () => {
  /** A fresh approved order of a fresh buyer: what each bad answer of the store is tried on. */
  async function approvedOrder(): Promise<{ buyer: Buyer; storeOrderId: string; id: string }> {
    const buyer = await identifiedBuyer(h, store);
    const made = (await kept(order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' }))).body;
    store.authorize(made.storeOrderId, true);
    return { buyer, storeOrderId: made.storeOrderId, id: made.id };
  }
  const json = (body: unknown) => ({ status: 200, body: JSON.stringify(body) });
  /** A settled order of another buyer of the same store account... of anyone: its QueryTxn answer, to replay. */
  const succeededAnswer = (orderid: string, steamid: string) =>
    json({
      response: {
        result: 'OK',
        params: { orderid, transid: '9007199254740999', steamid, status: 'Succeeded', currency: 'USD', country: 'US', time: '2026-01-01T00:00:00Z', items: [] },
      },
    });

  const BAD_QUERY_ANSWERS: Array<[string, string, (o: { storeOrderId: string; buyer: Buyer }) => Tampering]> = [
    ['an oversized answer (300 KB)', 'unavailable', () => () => json({ response: { result: 'OK', params: { pad: 'x'.repeat(300 * 1024) } } })],
    ['an answer that is not JSON', 'unavailable', () => () => ({ status: 200, body: '{"response": {"result": "OK", "params": {' })],
    ['an HTML page with 200', 'unavailable', () => () => ({ status: 200, body: '<html><body>Sign in</body></html>', contentType: 'text/html' })],
    [
      "the store's HTML 403 (a key it refuses)",
      'unavailable',
      () => () => ({ status: 403, body: '<html><head><title>Forbidden</title></head></html>', contentType: 'text/html' }),
    ],
    ['a 500', 'unavailable', () => () => ({ status: 500, body: 'oops', contentType: 'text/plain' })],
    ['a steamid as a fraction', 'unavailable', () => (up) => ({ status: 200, body: up.text.replace(/"steamid":"[0-9]+"/, '"steamid":7.6561197960265728e16') })],
    ['an orderid as a negative number', 'unavailable', () => (up) => ({ status: 200, body: up.text.replace(/"orderid":"[0-9]+"/, '"orderid":-1') })],
    ['a status it does not know', 'unavailable', () => (up) => ({ status: 200, body: up.text.replace('"Approved"', '"Paid"') })],
    [
      "another order's Succeeded (an answer about an order not asked)",
      'unavailable',
      ({ buyer }) =>
        () =>
          succeededAnswer('9007199254740995', buyer.steamId),
    ],
    [
      'a Succeeded for the order, naming another store account',
      'unavailable',
      ({ storeOrderId }) =>
        () =>
          succeededAnswer(storeOrderId, '76561197960265729'),
    ],
    ['an answer naming another app', 'unavailable', () => (up) => ({ status: 200, body: up.text.replace('"params":{', `"params":{"appid":${RIVAL_APP_ID},`) })],
    ["an error of the store's own", 'provider-refused', () => () => json({ response: { result: 'Failure', error: { errorcode: 2, errordesc: 'Failed' } } })],
  ];

  test.each(BAD_QUERY_ANSWERS)('QueryTxn answering %s: typed %s, nothing finalized or granted, the order still open', async (_name, code, tampering) => {
    const o = await approvedOrder();
    relay.next('QueryTxn', tampering(o));
    const reply = await unchangedBy(() => kept(authorize(h, o.buyer, o.storeOrderId)));
    expectError(reply, code === 'unavailable' ? 503 : 502, code);
    expect(reply.text).not.toContain(STORE_KEY);
    expect(store.txnOf(o.storeOrderId)).toMatchObject({ status: 'Approved', finalized: 0 });
    // The store answering well again, the order settles once.
    const settled = await kept(authorize(h, o.buyer, o.storeOrderId));
    expect(settled.body.order.status).toBe('completed');
    expect(store.txnOf(o.storeOrderId).finalized).toBe(1);
  });

  test("the failure's reason is logged for the operator (the answer says only unavailable), and the line carries no key or URL", async () => {
    const o = await approvedOrder();
    const from = logged.length;
    relay.next('QueryTxn', () => ({ status: 403, body: '<html>Forbidden</html>', contentType: 'text/html' }));
    expectError(await kept(authorize(h, o.buyer, o.storeOrderId)), 503, 'unavailable');
    flushLogs(); // lines wait in the logger's buffer up to 10 ms
    const lines = logged
      .slice(from)
      .join('')
      .split('\n')
      .filter((line) => line.includes('the store call failed'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 40, call: 'QueryTxn', reason: 'key-refused' });
    expect(leaks(lines[0])).toEqual([]);
  });

  test('64-bit ids written as bare JSON numbers are read as the exact digits: the order settles', async () => {
    const o = await approvedOrder();
    expect(BigInt(o.storeOrderId) > 2n ** 53n).toBe(true);
    relay.next('QueryTxn', (up) => ({ status: 200, body: up.text.replace(/"(orderid|transid|steamid)":"([0-9]+)"/g, '"$1":$2') }));
    const reply = await kept(authorize(h, o.buyer, o.storeOrderId));
    expect(reply.body.order).toMatchObject({ status: 'completed', storeOrderId: o.storeOrderId });
    expect(store.txnOf(o.storeOrderId).finalized).toBe(1);
  });

  test("FinalizeTxn answering for another order: unavailable, not granted; the next settlement finds the store's Succeeded and grants once", async () => {
    const o = await approvedOrder();
    relay.next('FinalizeTxn', (up) => ({ status: 200, body: up.text.replace(/"orderid":"[0-9]+"/, '"orderid":"9007199254740995"') }));
    const before = await ledgerOfCommerce();
    expectError(await kept(authorize(h, o.buyer, o.storeOrderId)), 503, 'unavailable');
    expect(await ledgerOfCommerce()).toEqual({ ...before, finalizeTxn: before.finalizeTxn + 1 });
    expect(await h.db('commerce_orders').where({ id: o.id }).first()).toMatchObject({ status: 'awaiting-player' });
    // The store did take the money (the stand-in finalized it): the next settlement asks, sees Succeeded, grants once.
    const settled = await kept(reconcile(h, o.buyer));
    expect(settled.body.orders).toMatchObject([{ id: o.id, status: 'completed' }]);
    expect(store.txnOf(o.storeOrderId).finalized).toBe(1);
    expect(await h.db('commerce_entitlements').where({ order_id: o.id })).toHaveLength(1);
  });

  test("InitTxn answering for another order: unavailable; the order is left for reconciliation, not given to the other order's id", async () => {
    const buyer = await identifiedBuyer(h, store);
    relay.next('InitTxn', (up) => ({ status: 200, body: up.text.replace(/"orderid":"[0-9]+"/, '"orderid":"9007199254740995"') }));
    const before = await ledgerOfCommerce();
    expectError(await kept(order(h, buyer, { sku: 'gems-100', provider: 'steam', language: 'en' })), 503, 'unavailable');
    const row = await h.db('commerce_orders').where({ player_id: buyer.id }).first();
    expect(row).toMatchObject({ status: 'pending', store_trans_id: null });
    expect(await ledgerOfCommerce()).toEqual({ ...before, orders: before.orders + 1, openOrders: before.openOrders + 1, initTxn: before.initTxn + 1 });
  });

  test('identify: a steamid that is not a 64-bit id, or an oversized answer: unavailable, no store account', async () => {
    for (const tampering of [
      ((up) => ({ status: 200, body: up.text.replace(/"steamid":"[0-9]+"/, '"steamid":"0x10"') })) as Tampering,
      () => json({ response: { params: { result: 'OK', steamid: '76561197960265729', pad: 'x'.repeat(300 * 1024) } } }),
    ]) {
      const buyer = await newBuyer(h);
      relay.next('AuthenticateUserTicket', tampering);
      expectError(
        await kept(identify(h, buyer, { ticket: store.issueTicket(buyer.steamId, { identity: IDENTITY, appid: APP_ID }), identity: IDENTITY })),
        503,
        'unavailable',
      );
      expect(await h.db('commerce_store_accounts').where({ player_id: buyer.id }).first()).toBeUndefined();
    }
  });

  test(`a store that never answers: unavailable within the ${STORE_CALL.timeoutMs / 1000} s deadline, nothing granted, the API serving meanwhile`, async () => {
    const o = await approvedOrder();
    store.failNext('QueryTxn', { hang: true });
    const started = Date.now();
    const pending = unchangedBy(() => kept(authorize(h, o.buyer, o.storeOrderId)));
    const catalogStarted = Date.now();
    expect((await send('GET', '/commerce/catalog', { token: o.buyer.token })).status).toBe(200);
    expect(Date.now() - catalogStarted).toBeLessThan(1_000);
    const reply = await pending;
    const tookMs = Date.now() - started;
    expectError(reply, 503, 'unavailable');
    expect(tookMs).toBeGreaterThanOrEqual(STORE_CALL.timeoutMs - 100);
    expect(tookMs).toBeLessThan(STORE_CALL.timeoutMs + 2_000);
    expect(store.txnOf(o.storeOrderId).finalized).toBe(0);
    reportFigure(`commerce attacks: a hanging store → 503 unavailable in ${tookMs} ms (deadline ${STORE_CALL.timeoutMs} ms)`);
  });
});

/**
 * After every test, the answers it received and the log lines written since: none carries the publisher
 * key, the store's (or the relay's) address or a store transaction id. Checked per test, so a run of
 * one test checks what that test caused.
 */
let answersChecked = 0;
let linesChecked = 0;
const loggedLines = () => {
  flushLogs(); // what the logger still buffers is written (to the capture) first
  return logged.join('').split('\n').filter(Boolean);
};
function leaks(text: string): string[] {
  const secrets = [STORE_KEY, relay.url.replace('http://', ''), store.url.replace('http://', ''), 'key=', ...[...store.txns.values()].map((t) => t.transid)];
  return secrets.filter((secret) => text.includes(secret));
}
afterEach(() => {
  const answers = answered.slice(answersChecked);
  answersChecked = answered.length;
  expect(answers.map(leaks).flat()).toEqual([]);
  const lines = loggedLines();
  expect(lines.slice(linesChecked).map(leaks).flat()).toEqual([]);
  linesChecked = lines.length;
});

afterAll(() => {
  const lines = loggedLines();
  // The capture works (every request writes its access line), and the last test's late lines leak nothing either.
  expect(lines.length).toBeGreaterThan(0);
  expect(lines.slice(linesChecked).map(leaks).flat()).toEqual([]);
  // The capture saw the requests the store failed: the lines a leak would be in.
  const aboutStoreFailures = lines.filter((line) => /"status":50[23]\b/.test(line) || line.includes('"msg":"the store')).length;
  reportFigure(
    `commerce attacks: ${answered.length} answers and ${lines.length} log lines (${aboutStoreFailures} about the store's failures) checked: none with the key, the store's address or a transid`,
  );
});
