/**
 * Found by `make fuzz` (docs/reliability.md): a string holding U+0000 reached PostgreSQL, which cannot
 * store it in text and refused the whole statement: a 500 `internal-error` (first seen on POST
 * /players/:id/currencies/:key/debit with it in `realmId`). Every input is now refused with 400
 * `invalid-request` naming the field, before any handler runs, and nothing changes.
 */
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { currency, standardManifests } from '../support/manifests';

let h: Harness;
let server: string;
let playerId: string;
let playerToken: string;

beforeAll(async () => {
  h = await startHarness({
    manifests: [...standardManifests(), currency('gold', { environment: 'alpha-live', name: 'Gold', scope: 'account', kind: 'balance' })],
  });
  server = h.serverKeys['alpha-live-key'];
  const player = await signIn(h.base, server, 'nul-1', 'Nul');
  playerId = player.player.id;
  playerToken = player.accessToken;
});
afterAll(async () => {
  await h.close();
});

async function goldBalance(): Promise<number> {
  const reply = await call(h.base, 'GET', `/players/${playerId}/inventories/account/balances`, { token: server });
  expect(reply.status).toBe(200);
  return reply.body.items.find((b: { currencyKey: string }) => b.currencyKey === 'gold')?.amount ?? 0;
}

const move = (kind: string, body: unknown, idem: string) =>
  call(h.base, 'POST', `/players/${playerId}/currencies/gold/${kind}`, { token: server, body, headers: { 'Idempotency-Key': idem } });

test("a NUL in a body string (the fuzzer's debit) is 400 naming the field, and no balance moves", async () => {
  expect((await move('credit', { amount: 100, reason: 'grant' }, 'nul-credit')).status).toBe(200);
  expectError(await move('debit', { amount: 40, reason: 'spend', realmId: 'a\u0000b' }, 'nul-debit-1'), 400, 'invalid-request', 'body.realmId');
  expectError(await move('debit', { amount: 40, reason: 'sp\u0000end' }, 'nul-debit-2'), 400, 'invalid-request', 'body.reason');
  expect(await goldBalance()).toBe(100);
  // The key was not spent on the refusal: the same key with a clean body does its work.
  expect((await move('debit', { amount: 40, reason: 'spend' }, 'nul-debit-2')).status).toBe(200);
  expect(await goldBalance()).toBe(60);
});

test('a NUL nested in a free-form object, in a value or in a key, is refused and the save is not written', async () => {
  const put = (data: unknown) => call(h.base, 'PUT', '/players/me/data/slot-nul', { token: playerToken, body: { data } });
  expectError(await put({ inner: ['ok', 'n\u0000o'] }), 400, 'invalid-request', 'body.data.inner[1]');
  expectError(await put({ 'k\u0000ey': 1 }), 400, 'invalid-request', 'body.data');
  expectError(await call(h.base, 'GET', '/players/me/data/slot-nul', { token: playerToken }), 404, 'not-found');
});

test('a NUL in the query and in a path parameter is refused too', async () => {
  expectError(await call(h.base, 'GET', `/players/${playerId}/ledger?cursor=a%00b`, { token: server }), 400, 'invalid-request', 'query.cursor');
  expectError(
    await call(h.base, 'POST', `/players/${playerId}/currencies/go%00ld/credit`, {
      token: server,
      body: { amount: 1, reason: 'grant' },
      headers: { 'Idempotency-Key': 'nul-path' },
    }),
    400,
    'invalid-request',
  );
  expect(await goldBalance()).toBe(60);
});
