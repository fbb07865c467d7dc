/**
 * Live calls with fetch, typed by openapi-typescript's types (schema.d.ts, written by run.sh beside
 * this file): run.sh gives the API's base URL, a server key and a currency in HEARTH_BASE,
 * HEARTH_SERVER_KEY and HEARTH_CURRENCY. Exits 1 at the first answer that is not what the API
 * documents. (`.mts`: the repository's type check does not take it, since schema.d.ts exists only
 * where run.sh writes it; run.sh checks it strictly there.)
 */
import type { components, operations } from './schema';

type Schemas = components['schemas'];
type Json<O extends keyof operations, S extends keyof operations[O]['responses']> = operations[O]['responses'][S] extends { content: { 'application/json': infer T } } ? T : never;

function check(ok: boolean, what: string, answer?: unknown): asserts ok {
  if (!ok) {
    process.stderr.write(`typescript: ${what}: ${JSON.stringify(answer)}\n`);
    process.exit(1);
  }
}

const base = process.env.HEARTH_BASE!;
const serverKey = process.env.HEARTH_SERVER_KEY!;
const currency = process.env.HEARTH_CURRENCY!;

async function call<T>(method: string, path: string, token: string, init: { body?: unknown; headers?: Record<string, string> } = {}) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

const signInBody: operations['signInServer']['requestBody']['content']['application/json'] = { subject: 'typescript-client' };
const signed = await call<Json<'signInServer', 201>>('POST', '/auth/server', serverKey, { body: signInBody });
check(signed.status === 201, 'sign-in', signed.body);
const playerId = signed.body.player.id;

const me = await call<Json<'getPlayer', 200>>('GET', '/players/me', signed.body.accessToken);
check(me.status === 200 && me.body.id === playerId, 'GET /players/me', me.body);

const flags = await call<Json<'listFlags', 200>>('GET', '/flags', serverKey);
const etag = flags.headers.get('etag');
check(flags.status === 200 && flags.body.items.length > 0 && etag !== null, 'GET /flags', flags.body);
const again = await call<never>('GET', '/flags', serverKey, { headers: { 'If-None-Match': etag } });
check(again.status === 304, 'GET /flags with If-None-Match', again.status);

const creditBody: operations['creditCurrency']['requestBody']['content']['application/json'] = { amount: 1_000_000_000, reason: 'live_test' };
const credit = async (key: string): Promise<Schemas['Movement']> => {
  const answer = await call<Json<'creditCurrency', 200>>('POST', `/players/${playerId}/currencies/${currency}/credit`, serverKey, { body: creditBody, headers: { 'Idempotency-Key': key } });
  check(answer.status === 200, 'credit', answer.body);
  return answer.body;
};
const first = await credit('typescript-1');
const replay = await credit('typescript-1');
check(!first.replayed && replay.replayed && replay.transactionId === first.transactionId && replay.balanceAfter === 1_000_000_000, 'replay', [first, replay]);
await credit('typescript-2');
check((await credit('typescript-3')).balanceAfter === 3_000_000_000, 'three credits are not 3,000,000,000');
const balances = await call<Json<'listBalances', 200>>('GET', `/players/${playerId}/inventories/account/balances`, serverKey);
check(balances.status === 200 && balances.body.items.length === 1 && balances.body.items[0].amount === 3_000_000_000, 'balances', balances.body);

const bad = await call<Schemas['Error']>('GET', '/flags?limit=1000', serverKey);
const invalid: Schemas['ErrorCode'] = 'invalid-request';
check(bad.status === 400 && bad.body.error === invalid && bad.body.message !== '', '400', bad.body);
const missing = await call<Json<'getPlayer', 404>>('GET', '/players/nobody', serverKey);
check(missing.status === 404 && missing.body.error === 'not-found' && missing.body.message !== '', '404', missing.body);
process.stdout.write('typescript: all calls answered as documented\n');
