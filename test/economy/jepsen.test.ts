/**
 * A Jepsen-style check of currency moves and item purchases (issue 10's correctness bar): many
 * concurrent clients credit, debit, consume, refund and purchase on a few players' balances, retrying
 * the same Idempotency-Key at random (at once, racing the first request, and later). Afterwards, from
 * the database and the API: every balance equals the sum of its ledger and replays entry by entry to
 * each balanceAfter; nothing went below zero, past a cap, an allowance or a maxOwned; every key acted
 * exactly once (one ledger entry per move and per purchase's charge for each key that answered 200,
 * none for the others, every retry answered the first answer) and every purchase that acted granted
 * its items exactly once.
 * Bounded: a fixed number of operations, a fixed seed per run printed on failure.
 */
import { Harness, startHarness } from '../support/harness';
import { call, signIn } from '../support/http';
import { currency, itemType, standardManifests } from '../support/manifests';

jest.setTimeout(60_000);

const OPERATIONS = Number(process.env.JEPSEN_OPERATIONS ?? 700);
const CLIENTS = 24;
const PLAYERS = 3;
const COINS_CAP = 4000;
const ALLOWANCE = 1500;
/** Purchasable item types (docs/economy.md "Buying"): a counted one paid in coins and gems, a one-by-one one paid in coins or energy. */
const ELIXIR = { key: 'elixir', maxOwned: 40, prices: [{ currencyKey: 'coins', amount: 30 }, { currencyKey: 'gems', amount: 10 }] };
const CHARM = { key: 'charm', maxOwned: 6, prices: [{ currencyKey: 'coins', amount: 50 }, { currencyKey: 'energy', amount: 20 }] };

/** A small seeded generator (mulberry32): a failing run can be repeated with its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Operation {
  key: string;
  playerId: string;
  currencyKey: string;
  kind: 'credit' | 'debit' | 'consume' | 'refund' | 'purchase';
  body: Record<string, unknown>;
  /** The signed change it makes when it acts (a move). */
  change: number;
  /** A purchase: what it buys and the signed change to each currency it charges, in currency-key order. */
  purchase?: { itemTypeKey: string; quantity: number; charges: { currencyKey: string; change: number }[] };
  /** How it is sent: `once`, `race` (two or three at once), `later` (again after a pause), `both`. */
  pattern: 'once' | 'race' | 'later' | 'both';
  answers: { status: number; body: any; checked: boolean }[];
}

describe('currency moves under concurrency and retries', () => {
  let h: Harness;
  let key: string;
  const seed = Number(process.env.JEPSEN_SEED ?? Date.now() % 1_000_000);

  beforeAll(async () => {
    h = await startHarness({
      manifests: [
        ...standardManifests(),
        currency('coins', { environment: 'alpha-live', name: 'Coins', scope: 'account', kind: 'balance', max: COINS_CAP }),
        currency('gems', { environment: 'alpha-live', name: 'Gems', scope: 'account', kind: 'balance' }),
        currency('energy', { environment: 'alpha-live', name: 'Energy', scope: 'account', kind: 'consumed' }),
        itemType('elixir', { environment: 'alpha-live', name: 'Elixir', category: 'misc', ownership: 'counted', purchasable: true, maxOwned: ELIXIR.maxOwned, prices: ELIXIR.prices }),
        itemType('charm', { environment: 'alpha-live', name: 'Charm', category: 'misc', ownership: 'one-by-one', purchasable: true, maxOwned: CHARM.maxOwned, priceRule: 'any', prices: CHARM.prices }),
      ],
    });
    key = h.serverKeys['alpha-live-key'];
  });
  afterAll(async () => {
    await h.close();
  });

  test(`every balance is its ledger, within its limits, and every key acted once (seed ${seed})`, async () => {
    const rand = random(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const upTo = (n: number) => 1 + Math.floor(rand() * n);
    const players: string[] = [];
    for (let i = 0; i < PLAYERS; i++) players.push((await signIn(h.base, key, `jepsen-${seed}-${i}`)).player.id);

    const operations: Operation[] = [];
    for (let i = 0; i < OPERATIONS; i++) {
      const playerId = pick(players);
      const shape = pick(['credit-coins', 'debit-coins', 'credit-gems', 'debit-gems', 'refund-gems', 'consume-energy', 'refund-energy', 'purchase-elixir', 'purchase-charm'] as const);
      const [kind, currencyKey] = shape.split('-') as [Operation['kind'], string];
      const pattern = pick(['once', 'race', 'later', 'both'] as const);
      if (kind === 'purchase') {
        const quantity = upTo(3);
        const body: Record<string, unknown> = { itemTypeKey: currencyKey, quantity };
        let prices = ELIXIR.prices;
        if (currencyKey === 'charm') {
          prices = [pick(CHARM.prices)];
          body.payWith = prices[0].currencyKey;
          if (body.payWith === 'energy') body.allowances = { energy: ALLOWANCE };
        }
        const charges = prices.map((p) => ({ currencyKey: p.currencyKey, change: (p.currencyKey === 'energy' ? 1 : -1) * p.amount * quantity }));
        operations.push({ key: `jepsen-${seed}-${i}`, playerId, currencyKey: '', kind, body, change: 0, purchase: { itemTypeKey: currencyKey, quantity, charges }, pattern, answers: [] });
        continue;
      }
      const amount = currencyKey === 'energy' ? upTo(60) : upTo(400);
      const body: Record<string, unknown> = { amount, reason: `jepsen.${kind}`, reference: `op ${i}` };
      if (kind === 'consume') body.allowance = ALLOWANCE;
      const lowers = kind === 'debit' || (kind === 'refund' && currencyKey === 'energy');
      operations.push({ key: `jepsen-${seed}-${i}`, playerId, currencyKey, kind, body, change: lowers ? -amount : amount, pattern, answers: [] });
    }

    const send = async (op: Operation) => {
      const path = op.purchase ? `/players/${op.playerId}/purchases/items` : `/players/${op.playerId}/currencies/${op.currencyKey}/${op.kind}`;
      const reply = await call(h.base, 'POST', path, { token: key, body: op.body, headers: { 'Idempotency-Key': op.key } });
      // Asserted once every client is done: a client that threw here would leave the others running.
      op.answers.push({ status: reply.status, body: reply.body, checked: reply.contract.checked });
    };
    const pause = () => new Promise((r) => setTimeout(r, Math.floor(rand() * 30)));
    const run = async (op: Operation) => {
      if (op.pattern === 'once') await send(op);
      if (op.pattern === 'race') await Promise.all(Array.from({ length: 2 + Math.floor(rand() * 2) }, () => send(op)));
      if (op.pattern === 'later') {
        await send(op);
        await pause();
        await send(op);
      }
      if (op.pattern === 'both') {
        await Promise.all([send(op), send(op)]);
        await pause();
        await send(op);
      }
    };

    const started = Date.now();
    let next = 0;
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (next < operations.length) await run(operations[next++]);
    }));
    const elapsed = Date.now() - started;
    const sent = operations.reduce((n, op) => n + op.answers.length, 0);

    expect(operations.flatMap((op) => op.answers).filter((a) => !a.checked)).toEqual([]);
    // Each answer is a Movement (a Purchase) or one of the refusals a move (a purchase) may earn; never a fault.
    const allowedRefusals = new Set(['insufficient-balance', 'balance-cap', 'allowance-exceeded']);
    const purchaseRefusals = new Set([...allowedRefusals, 'owned-limit']);
    for (const op of operations) {
      const allowed = op.purchase ? purchaseRefusals : allowedRefusals;
      for (const a of op.answers) {
        if (a.status !== 200) expect({ key: op.key, status: a.status, error: allowed.has(a.body?.error) ? 'a refusal of the move' : a.body?.error }).toEqual({ key: op.key, status: 409, error: 'a refusal of the move' });
      }
    }

    // Every key acted at most once: its 200s are one Movement, at most one of them not replayed.
    const entries = await h.db('ledger_entries').whereIn('player_id', players).orderBy('id');
    const entryById = new Map(entries.map((e) => [String(e.id), e]));
    const acted = new Set<string>();
    let actedOperations = 0;
    /** What the purchases that acted bought, by player and item type. */
    const bought = new Map<string, number>();
    for (const op of operations) {
      const done = op.answers.filter((a) => a.status === 200);
      if (done.length === 0) continue;
      actedOperations++;
      if (op.purchase) {
        // The one that acted answered the Purchase; every retry its charges, replayed, and granted: null.
        const acting = done.filter((a) => !a.body.replayed);
        expect({ key: op.key, acting: acting.length }).toEqual({ key: op.key, acting: 1 });
        const first = acting[0].body;
        for (const a of done) if (a.body.replayed) expect(a.body).toEqual({ replayed: true, charges: first.charges.map((c: any) => ({ ...c, replayed: true })), granted: null });
        expect(first.charges.map((c: any) => ({ currencyKey: c.currencyKey, change: c.amount }))).toEqual(op.purchase.charges);
        const { itemTypeKey, quantity } = op.purchase;
        expect(first.granted.itemTypeKey).toBe(itemTypeKey);
        if (itemTypeKey === 'charm') expect(first.granted.items).toHaveLength(quantity);
        else expect(first.granted.stack.quantity).toBeGreaterThanOrEqual(quantity);
        for (const charge of first.charges) {
          const entry = entryById.get(charge.transactionId);
          expect(entry).toBeDefined();
          expect({ player: entry.player_id, currency: entry.currency_key, amount: Number(entry.amount), reason: entry.reason, reference: entry.reference }).toEqual({
            player: op.playerId,
            currency: charge.currencyKey,
            amount: charge.amount,
            reason: 'purchase',
            reference: `item:${itemTypeKey}`,
          });
          expect(acted.has(charge.transactionId)).toBe(false);
          acted.add(charge.transactionId);
        }
        const held = `${op.playerId}|${itemTypeKey}`;
        bought.set(held, (bought.get(held) ?? 0) + quantity);
        continue;
      }
      const first = done.find((a) => !a.body.replayed) ?? done[0];
      expect(done.filter((a) => !a.body.replayed).length).toBeLessThanOrEqual(1);
      for (const a of done) expect({ ...a.body, replayed: false }).toEqual({ ...first.body, replayed: false });
      const entry = entryById.get(first.body.transactionId);
      expect(entry).toBeDefined();
      expect({ player: entry.player_id, currency: entry.currency_key, amount: Number(entry.amount), reference: entry.reference }).toEqual({
        player: op.playerId,
        currency: op.currencyKey,
        amount: op.change,
        reference: op.body.reference,
      });
      expect(acted.has(first.body.transactionId)).toBe(false);
      acted.add(first.body.transactionId);
    }
    // No entry without a key that answered for it: nothing acted twice or unseen.
    expect(entries.length).toBe(acted.size);

    // Items: each purchase that acted granted its quantity once, and nothing else was granted; none past maxOwned.
    const stackRows = await h.db('item_stacks as s').join('inventories as i', 'i.id', 's.inventory_id').whereIn('i.player_id', players).select('i.player_id', 's.item_type_key', 's.quantity');
    const itemRows = (await h.db('items').whereIn('player_id', players).groupBy('player_id', 'item_type_key').select('player_id', 'item_type_key').count({ count: '*' })) as any[];
    const holdings = new Map<string, number>();
    for (const r of stackRows) if (Number(r.quantity) > 0) holdings.set(`${r.player_id}|${r.item_type_key}`, Number(r.quantity));
    for (const r of itemRows) holdings.set(`${r.player_id}|${r.item_type_key}`, Number(r.count));
    expect(Object.fromEntries([...holdings].sort())).toEqual(Object.fromEntries([...bought].sort()));
    for (const [held, quantity] of holdings) expect(quantity).toBeLessThanOrEqual(held.endsWith('|charm') ? CHARM.maxOwned : ELIXIR.maxOwned);

    // Each balance replays from its ledger, entry by entry, within its limits.
    const balances = await h.db('balances as b').join('inventories as i', 'i.id', 'b.inventory_id').whereIn('i.player_id', players).select('b.*');
    for (const balance of balances) {
      const own = entries.filter((e) => e.inventory_id === balance.inventory_id && e.currency_key === balance.currency_key);
      let running = 0n;
      for (const e of own) {
        running += BigInt(e.amount);
        expect(BigInt(e.balance_after)).toBe(running);
        expect(running >= 0n).toBe(true);
        if (balance.currency_key === 'coins') expect(running <= BigInt(COINS_CAP)).toBe(true);
        if (balance.currency_key === 'energy') expect(running <= BigInt(ALLOWANCE)).toBe(true);
      }
      expect(BigInt(balance.amount)).toBe(running);
    }
    // And the API tells the same.
    for (const playerId of players) {
      const reply = await call(h.base, 'GET', `/players/${playerId}/inventories/account/balances`, { token: key });
      const fromDb = balances.filter((b) => reply.body.inventory.id === b.inventory_id).map((b) => ({ currencyKey: b.currency_key, amount: Number(b.amount) }));
      expect(reply.body.items).toEqual(fromDb.sort((x, y) => (x.currencyKey < y.currencyKey ? -1 : 1)));
    }

    // The run did exercise what it claims to: contention, refusals, races and replays.
    const statuses = operations.flatMap((op) => op.answers);
    expect(statuses.filter((a) => a.status === 200 && a.body.replayed).length).toBeGreaterThan(OPERATIONS / 4);
    expect(statuses.filter((a) => a.status === 409).length).toBeGreaterThan(0);
    expect(actedOperations).toBeGreaterThan(OPERATIONS / 3);
    expect(bought.size).toBeGreaterThan(0);
    const purchases = operations.filter((op) => op.purchase);
    console.log(`jepsen seed ${seed}: ${OPERATIONS} operations, ${sent} requests by ${CLIENTS} clients in ${elapsed} ms; ${actedOperations} acted (${purchases.filter((op) => op.answers.some((a) => a.status === 200)).length} of ${purchases.length} purchases, ${statuses.filter((a) => a.body?.error === 'owned-limit').length} owned-limit), ${statuses.filter((a) => a.status === 409).length} refusals`);
  });
});
