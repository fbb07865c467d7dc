/**
 * `hearth economy ledger|credit|debit` as real subprocesses over the harness's database: staff read a
 * player's balances and ledger, and correct a balance only through a ledger entry, idempotently.
 */
import { type Harness, startHarness } from '../support/harness';
import { call, signIn } from '../support/http';
import { oneLine, runHearth } from '../cli/run-hearth';
import { currency, standardManifests } from '../support/manifests';

jest.setTimeout(120_000); // every step runs the real command, a process start each

let h: Harness;
let vars: Record<string, string>;
let playerId: string;

beforeAll(async () => {
  h = await startHarness({
    manifests: [...standardManifests(), currency('gems', { environment: 'alpha-live', name: 'Gems', scope: 'account', kind: 'balance', max: 500 })],
  });
  vars = { DATABASE_URL: h.database.url };
  playerId = (await signIn(h.base, h.serverKeys['alpha-live-key'], 'cli-economy')).player.id;
  const credited = await call(h.base, 'POST', `/players/${playerId}/currencies/gems/credit`, {
    token: h.serverKeys['alpha-live-key'],
    body: { amount: 40, reason: 'quest_reward', reference: 'quest 1' },
    headers: { 'Idempotency-Key': 'cli-setup' },
  });
  expect(credited.status).toBe(200);
});
afterAll(async () => {
  await h.close();
});

const hearth = (...args: string[]) => runHearth(['economy', ...args], vars);

test('ledger shows inventories, balances and the newest entries, as text and as JSON', async () => {
  const text = await hearth('ledger', '--environment', 'alpha-live', '--player', playerId);
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(/inventory \S+ \(account\)\n {4}gems: 40\n/);
  expect(text.stdout).toMatch(/CREATED +ENTRY +CURRENCY +AMOUNT +BALANCE AFTER +REASON +REFERENCE +INVENTORY\n/);
  expect(text.stdout).toMatch(/#\d+ +gems +\+40 +40 +quest_reward +quest 1 +\S+/);
  const json = await hearth('ledger', '--environment', 'alpha-live', '--player', playerId, '--json');
  const doc = JSON.parse(json.stdout);
  expect(doc).toMatchObject({
    environment: 'alpha-live',
    playerId,
    inventories: [{ realmId: null, balances: [{ currencyKey: 'gems', amount: 40 }] }],
    ledger: [{ amount: 40, balanceAfter: 40, reason: 'quest_reward' }],
  });
});

test('credit and debit write ledger entries; the same --idempotency-key acts once; refusals change nothing', async () => {
  const credit = await hearth(
    'credit',
    '--environment',
    'alpha-live',
    '--player',
    playerId,
    '--currency',
    'gems',
    '--amount',
    '15',
    '--reason',
    'support.correction',
    '--reference',
    'ticket 9',
    '--idempotency-key',
    'fix-9',
    '--json',
  );
  expect(credit.code).toBe(0);
  expect(JSON.parse(credit.stdout)).toMatchObject({
    idempotencyKey: 'fix-9',
    movement: { currencyKey: 'gems', amount: 15, balanceAfter: 55, replayed: false },
  });
  const again = await hearth(
    'credit',
    '--environment',
    'alpha-live',
    '--player',
    playerId,
    '--currency',
    'gems',
    '--amount',
    '15',
    '--reason',
    'support.correction',
    '--reference',
    'ticket 9',
    '--idempotency-key',
    'fix-9',
  );
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(/already done under this key, nothing changed: gems \+15 -> 55/);
  const conflict = await hearth(
    'credit',
    '--environment',
    'alpha-live',
    '--player',
    playerId,
    '--currency',
    'gems',
    '--amount',
    '16',
    '--reason',
    'support.correction',
    '--idempotency-key',
    'fix-9',
  );
  expect(conflict.code).not.toBe(0);
  expect(oneLine(conflict.stderr)).toMatch(/idempotency-conflict/);

  const debit = await hearth(
    'debit',
    '--environment',
    'alpha-live',
    '--player',
    playerId,
    '--currency',
    'gems',
    '--amount',
    '5',
    '--reason',
    'support.correction',
  );
  expect(debit.code).toBe(0);
  expect(debit.stdout).toMatch(/debited: gems -5 -> 50/);
  expect(debit.stdout).toMatch(/idempotency key: cli-/);

  const tooMuch = await hearth(
    'debit',
    '--environment',
    'alpha-live',
    '--player',
    playerId,
    '--currency',
    'gems',
    '--amount',
    '51',
    '--reason',
    'support.correction',
  );
  expect(tooMuch.code).not.toBe(0);
  expect(oneLine(tooMuch.stderr)).toMatch(/insufficient-balance/);
  const pastCap = await hearth(
    'credit',
    '--environment',
    'alpha-live',
    '--player',
    playerId,
    '--currency',
    'gems',
    '--amount',
    '451',
    '--reason',
    'support.correction',
  );
  expect(oneLine(pastCap.stderr)).toMatch(/balance-cap/);
  for (const bad of [
    ['--amount', '0'],
    ['--amount', '1.5'],
    ['--reason', 'has space'],
  ]) {
    const args = { '--amount': '1', '--reason': 'ok', ...Object.fromEntries([bad]) } as Record<string, string>;
    const refused = await hearth('credit', '--environment', 'alpha-live', '--player', playerId, '--currency', 'gems', ...Object.entries(args).flat());
    expect(refused.code).not.toBe(0);
  }
  // The engine's own reasons are refused by the same rule as on the API, naming the flag, in one line.
  const reserved = await hearth(
    'credit',
    '--environment',
    'alpha-live',
    '--player',
    playerId,
    '--currency',
    'gems',
    '--amount',
    '1',
    '--reason',
    'commerce',
    '--reference',
    'order-1',
  );
  expect(reserved.code).toBe(1);
  expect(oneLine(reserved.stderr)).toMatch(/invalid-request \(--reason\): "commerce" is a reason the money engine keeps for its own moves/);
  // --idempotency-key takes what the API's Idempotency-Key takes (printable ASCII, spaces too), no more.
  const spaced = await hearth(
    'credit',
    '--environment',
    'alpha-live',
    '--player',
    playerId,
    '--currency',
    'gems',
    '--amount',
    '1',
    '--reason',
    'support.correction',
    '--idempotency-key',
    'ticket 10',
  );
  expect(spaced.code).toBe(0);
  const tooLong = await hearth(
    'credit',
    '--environment',
    'alpha-live',
    '--player',
    playerId,
    '--currency',
    'gems',
    '--amount',
    '1',
    '--reason',
    'support.correction',
    '--idempotency-key',
    'k'.repeat(129),
  );
  expect(tooLong.code).not.toBe(0);
  expect(oneLine(tooLong.stderr)).toMatch(/--idempotency-key must be 1-128 printable ASCII characters/);
  const debitBack = await hearth(
    'debit',
    '--environment',
    'alpha-live',
    '--player',
    playerId,
    '--currency',
    'gems',
    '--amount',
    '1',
    '--reason',
    'support.correction',
    '--idempotency-key',
    'ticket 10 undo',
  );
  expect(debitBack.code).toBe(0);
  const unknown = await hearth('credit', '--environment', 'nowhere', '--player', playerId, '--currency', 'gems', '--amount', '1', '--reason', 'x');
  expect(oneLine(unknown.stderr)).toMatch(/no environment has app key "nowhere"/);

  const ledger = JSON.parse((await hearth('ledger', '--environment', 'alpha-live', '--player', playerId, '--json')).stdout);
  expect(ledger.ledger.map((e: { amount: number; balanceAfter: number }) => [e.amount, e.balanceAfter])).toEqual([
    [-1, 50],
    [1, 51],
    [-5, 50],
    [15, 55],
    [40, 40],
  ]);
  // The API sees the corrections too.
  const balances = await call(h.base, 'GET', `/players/${playerId}/inventories/account/balances`, { token: h.serverKeys['alpha-live-key'] });
  expect(balances.body.items).toEqual([{ currencyKey: 'gems', amount: 50 }]);
});
