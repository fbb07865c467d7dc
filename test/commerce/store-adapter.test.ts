/**
 * The store adapter (apps/core/src/commerce/store.ts) against the stand-in store
 * (test/support/store-standin.ts): the wire format of every call, 64-bit ids as strings, the
 * sandbox's interface, and each way a call fails as its own typed error, none naming the key.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StoreSpecT } from '@hearth/core/contract';
import { StoreClient, StoreRefusal, StoreUnavailable, STORE_CALL } from '../../apps/core/src/commerce/store';
import { StoreStandIn } from '../support/store-standin';

const KEY = 'publisher-key-0123';
const APP_ID = 480;
const IDENTITY = 'hearth-commerce';
const STEAM_ID = '76561197960287930'; // past 2^53

let store: StoreStandIn;

beforeAll(async () => {
  store = await new StoreStandIn([KEY]).start();
});
afterAll(async () => {
  await store.stop();
});

function client(overrides: Partial<StoreSpecT> = {}, publisherKey = KEY): StoreClient {
  const settings: StoreSpecT = {
    provider: 'steam',
    appId: APP_ID,
    sandbox: false,
    identity: IDENTITY,
    publisherKey: { env: 'UNUSED' },
    baseUrl: store.url,
    ...overrides,
  };
  return new StoreClient({ settings, publisherKey });
}

/** Expects `promise` to fail with a StoreUnavailable of `reason` whose words carry neither the key nor a URL. */
async function expectUnavailable(promise: Promise<unknown>, reason: string): Promise<void> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StoreUnavailable);
  expect((err as StoreUnavailable).reason).toBe(reason);
  expect(String((err as Error).message)).not.toContain(KEY);
  expect(String((err as Error).message)).not.toContain('http');
}

test('AuthenticateUserTicket is a GET with key, appid, ticket and identity in the query, and answers the steamid as a string', async () => {
  const ticket = store.issueTicket(STEAM_ID, { identity: IDENTITY, appid: APP_ID });
  const owner = await client().authenticateUserTicket(ticket, IDENTITY);
  expect(owner).toEqual({ steamId: STEAM_ID, ownerSteamId: STEAM_ID, vacBanned: false, publisherBanned: false });
  const call = store.calls.at(-1)!;
  expect(call).toMatchObject({ method: 'AuthenticateUserTicket', interface: 'ISteamUserAuth', httpMethod: 'GET' });
  expect(call.params).toEqual({ key: KEY, appid: String(APP_ID), ticket, identity: IDENTITY });
});

test("a ticket made for another identity string is the store's refusal with its code", async () => {
  const ticket = store.issueTicket(STEAM_ID, { identity: 'something-else', appid: APP_ID });
  const err = await client()
    .authenticateUserTicket(ticket, IDENTITY)
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(StoreRefusal);
  expect(err).toMatchObject({ call: 'AuthenticateUserTicket', errorCode: 101, errorDescription: 'Invalid ticket' });
});

test('GetUserInfo answers the wallet; a locked user is said as the store says it', async () => {
  store.setUser('76561197960287931', { country: 'DE', currency: 'EUR', status: 'Locked from purchasing' });
  expect(await client().getUserInfo('76561197960287931')).toEqual({ country: 'DE', currency: 'EUR', status: 'Locked from purchasing', state: '' });
  expect(store.calls.at(-1)).toMatchObject({ method: 'GetUserInfo', interface: 'ISteamMicroTxn', httpMethod: 'GET' });
});

test('InitTxn, QueryTxn and FinalizeTxn speak form bodies and uint64 strings end to end', async () => {
  const orderId = '18446744073709551000'; // near 2^64: only a string holds it
  store.setUser(STEAM_ID, { country: 'US', currency: 'USD', status: 'Active' });
  const started = await client().initTxn({
    orderId,
    steamId: STEAM_ID,
    language: 'en',
    currency: 'USD',
    lines: [{ itemId: 4294967295, qty: 1, amount: 499, description: 'Starter pack' }],
  });
  expect(started.orderId).toBe(orderId);
  expect(BigInt(started.transId)).toBeGreaterThan(BigInt(Number.MAX_SAFE_INTEGER));
  const init = store.calls.at(-1)!;
  expect(init).toMatchObject({ method: 'InitTxn', httpMethod: 'POST' });
  expect(init.params).toEqual({
    key: KEY,
    orderid: orderId,
    steamid: STEAM_ID,
    appid: String(APP_ID),
    itemcount: '1',
    language: 'en',
    currency: 'USD',
    usersession: 'client',
    'itemid[0]': '4294967295',
    'qty[0]': '1',
    'amount[0]': '499',
    'description[0]': 'Starter pack',
  });

  expect((await client().queryTxn(orderId)).status).toBe('Init');
  const notYet = await client()
    .finalizeTxn(orderId)
    .catch((e: unknown) => e);
  expect(notYet).toMatchObject({ errorCode: 5 });

  store.authorize(orderId, true);
  const approved = await client().queryTxn(orderId);
  expect(approved).toMatchObject({ orderId, transId: started.transId, steamId: STEAM_ID, status: 'Approved', currency: 'USD' });
  expect(approved.items).toEqual([{ itemId: 4294967295, qty: 1, amount: 499, itemStatus: 'Init' }]);

  expect(await client().finalizeTxn(orderId)).toEqual({ orderId, transId: started.transId });
  expect(store.calls.at(-1)).toMatchObject({ method: 'FinalizeTxn', httpMethod: 'POST', params: { key: KEY, orderid: orderId, appid: String(APP_ID) } });
  const again = await client()
    .finalizeTxn(orderId)
    .catch((e: unknown) => e);
  expect(again).toMatchObject({ call: 'FinalizeTxn', errorCode: 6 });
  expect((await client().queryTxn(orderId)).status).toBe('Succeeded');

  const report = await client().getReport(new Date(Date.now() - 60_000), 100);
  expect(report.orders.map((o) => o.orderId)).toContain(orderId);
  expect(store.calls.at(-1)!.params.type).toBe('GAMESALES');
});

test('ids the store writes as bare JSON numbers are still read digit for digit', async () => {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{"response":{"result":"OK","params":{"orderid":18446744073709551000,"transid":9007199254740993}}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const raw = new StoreClient({
      settings: {
        provider: 'steam',
        appId: APP_ID,
        sandbox: false,
        identity: IDENTITY,
        publisherKey: { env: 'X' },
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      },
      publisherKey: KEY,
    });
    expect(await raw.finalizeTxn('18446744073709551000')).toEqual({ orderId: '18446744073709551000', transId: '9007199254740993' });
  } finally {
    server.close();
  }
});

test('a sandbox project calls the microtransactions under ISteamMicroTxnSandbox, identity still under ISteamUserAuth', async () => {
  const sandbox = client({ sandbox: true });
  await sandbox.getUserInfo(STEAM_ID);
  expect(store.calls.at(-1)!.interface).toBe('ISteamMicroTxnSandbox');
  const ticket = store.issueTicket(STEAM_ID, { identity: IDENTITY, appid: APP_ID });
  await sandbox.authenticateUserTicket(ticket, IDENTITY);
  expect(store.calls.at(-1)!.interface).toBe('ISteamUserAuth');
});

test('an id that is not a uint64 is refused before any call', async () => {
  const before = store.calls.length;
  for (const bad of ['0', '-1', '18446744073709551616', '1e3', '12.5', '']) {
    await expect(client().queryTxn(bad)).rejects.toThrow(TypeError);
  }
  expect(store.calls.length).toBe(before);
});

test('a refused key (403 page), a call the store does not take (404/405/400) and a 5xx are unavailable, never naming the key', async () => {
  await expectUnavailable(client({}, 'wrong-key').getUserInfo(STEAM_ID), 'key-refused');
  store.failNext('GetUserInfo', { status: 404 });
  await expectUnavailable(client().getUserInfo(STEAM_ID), 'call-refused');
  store.failNext('GetUserInfo', { status: 405 });
  await expectUnavailable(client().getUserInfo(STEAM_ID), 'call-refused');
  store.failNext('GetUserInfo', { status: 400 });
  await expectUnavailable(client().getUserInfo(STEAM_ID), 'call-refused');
  store.failNext('GetUserInfo', { status: 503 });
  await expectUnavailable(client().getUserInfo(STEAM_ID), 'server-error');
  store.failNext('GetUserInfo', { status: 200, body: '<html>not json</html>' });
  await expectUnavailable(client().getUserInfo(STEAM_ID), 'malformed');
});

test('an unreachable store is unavailable (network)', async () => {
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  await expectUnavailable(client({ baseUrl: `http://127.0.0.1:${port}` }).getUserInfo(STEAM_ID), 'network');
});

test('an answer past the size bound is refused while reading', async () => {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(`{"response":{"result":"OK","params":{"pad":"${'x'.repeat(STORE_CALL.maxBytes + 10)}"}}}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await expectUnavailable(client({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }).getUserInfo(STEAM_ID), 'too-large');
  } finally {
    server.close();
  }
});

test('a store that never answers is ended by the deadline', async () => {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  try {
    store.failNext('QueryTxn', { hang: true });
    const pending = client().queryTxn('12345');
    const settled = pending.then(
      () => null,
      (e: unknown) => e,
    );
    await new Promise((resolve) => setImmediate(resolve));
    await jest.advanceTimersByTimeAsync(STORE_CALL.timeoutMs + 1);
    const err = await settled;
    expect(err).toBeInstanceOf(StoreUnavailable);
    expect((err as StoreUnavailable).reason).toBe('timeout');
  } finally {
    jest.useRealTimers();
  }
});
