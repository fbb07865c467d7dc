/**
 * The Jepsen-style economy model both runs share (test/economy/jepsen.test.ts in-process,
 * test/faults/kill.test.ts across a kill -9 of an API process): the seeded generator, the catalogue
 * (capped coins, gems, a consumed energy, two purchasable item types, a purchasable card type), the
 * operations, and the checks that hold afterwards whatever happened on the way: every effect matches
 * its key's request, every balance replays from its ledger within its limits, and the items and cards
 * held are exactly what the purchases that acted bought.
 */
import type { Knex } from 'knex';
import { call } from '../support/http';
import { cardType, currency, itemType, standardManifests } from '../support/manifests';

export const COINS_CAP = 4000;
export const ALLOWANCE = 1500;
/** Purchasable item types (docs/economy.md "Buying"): a counted one paid in coins and gems, a one-by-one one paid in coins or energy. */
export const ELIXIR = {
  key: 'elixir',
  maxOwned: 40,
  prices: [
    { currencyKey: 'coins', amount: 30 },
    { currencyKey: 'gems', amount: 10 },
  ],
};
export const CHARM = {
  key: 'charm',
  maxOwned: 6,
  prices: [
    { currencyKey: 'coins', amount: 50 },
    { currencyKey: 'energy', amount: 20 },
  ],
};
/** A purchasable card type (docs/cards.md "Buying cards") paid in coins and gems, bought one at a time as a card or into its stack. */
export const RUNE = {
  key: 'rune',
  prices: [
    { currencyKey: 'coins', amount: 40 },
    { currencyKey: 'gems', amount: 5 },
  ],
};

/** The refusals a move may earn (409); a purchase may also earn `owned-limit`. Never a fault. */
export const MOVE_REFUSALS = new Set(['insufficient-balance', 'balance-cap', 'allowance-exceeded']);
export const PURCHASE_REFUSALS = new Set([...MOVE_REFUSALS, 'owned-limit']);

export function jepsenManifests() {
  return [
    ...standardManifests(),
    currency('coins', { environment: 'alpha-live', name: 'Coins', scope: 'account', kind: 'balance', max: COINS_CAP }),
    currency('gems', { environment: 'alpha-live', name: 'Gems', scope: 'account', kind: 'balance' }),
    currency('energy', { environment: 'alpha-live', name: 'Energy', scope: 'account', kind: 'consumed' }),
    itemType('elixir', {
      environment: 'alpha-live',
      name: 'Elixir',
      category: 'misc',
      ownership: 'counted',
      purchasable: true,
      maxOwned: ELIXIR.maxOwned,
      prices: ELIXIR.prices,
    }),
    itemType('charm', {
      environment: 'alpha-live',
      name: 'Charm',
      category: 'misc',
      ownership: 'one-by-one',
      purchasable: true,
      maxOwned: CHARM.maxOwned,
      priceRule: 'any',
      prices: CHARM.prices,
    }),
    cardType('rune', { environment: 'alpha-live', name: 'Rune', purchasable: true, prices: RUNE.prices }),
  ];
}

/** A small seeded generator (mulberry32): a failing run can be repeated with its seed. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** How a request is retried under its key (sendAsPatterned). */
export type Pattern = 'once' | 'race' | 'later' | 'both';
export const PATTERNS: readonly Pattern[] = ['once', 'race', 'later', 'both'];

export interface Operation<A> {
  key: string;
  playerId: string;
  currencyKey: string;
  kind: 'credit' | 'debit' | 'consume' | 'refund' | 'purchase';
  body: Record<string, unknown>;
  /** The signed change it makes when it acts (a move). */
  change: number;
  /** A purchase: what it buys and the signed change to each currency it charges, in currency-key order. */
  purchase?: { itemTypeKey: string; quantity: number; charges: { currencyKey: string; change: number }[]; card?: 'instance' | 'stack' };
  /** How it is sent: `once`, `race` (two or three at once), `later` (again after a pause), `both`. */
  pattern: Pattern;
  answers: A[];
}

/**
 * Sends an operation as its pattern says: once; two or three copies at once (`race`); again after a
 * pause of up to 30 ms (`later`); two at once, then again (`both`).
 */
export async function sendAsPatterned<O extends { pattern: Pattern }>(op: O, send: (op: O) => Promise<void>, rand: () => number): Promise<void> {
  const pause = () => new Promise((r) => setTimeout(r, Math.floor(rand() * 30)));
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
}

/** `count` operations on `players`, keys `${label}-${i}` (a move's reference is `op ${i}`). */
export function makeOperations<A>(rand: () => number, players: string[], count: number, label: string): Operation<A>[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const upTo = (n: number) => 1 + Math.floor(rand() * n);
  const operations: Operation<A>[] = [];
  for (let i = 0; i < count; i++) {
    const playerId = pick(players);
    const shape = pick([
      'credit-coins',
      'debit-coins',
      'credit-gems',
      'debit-gems',
      'refund-gems',
      'consume-energy',
      'refund-energy',
      'purchase-elixir',
      'purchase-charm',
      'purchase-rune',
    ] as const);
    const [kind, currencyKey] = shape.split('-') as [Operation<A>['kind'], string];
    const pattern = pick(PATTERNS);
    if (kind === 'purchase' && currencyKey === RUNE.key) {
      // A card: no realm in this catalogue, so it goes to the account (realmId null).
      const card = pick(['instance', 'stack'] as const);
      const body = { cardTypeKey: RUNE.key, as: card, realmId: null };
      const charges = RUNE.prices.map((p) => ({ currencyKey: p.currencyKey, change: -p.amount }));
      operations.push({
        key: `${label}-${i}`,
        playerId,
        currencyKey: '',
        kind,
        body,
        change: 0,
        purchase: { itemTypeKey: RUNE.key, quantity: 1, charges, card },
        pattern,
        answers: [],
      });
      continue;
    }
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
      operations.push({
        key: `${label}-${i}`,
        playerId,
        currencyKey: '',
        kind,
        body,
        change: 0,
        purchase: { itemTypeKey: currencyKey, quantity, charges },
        pattern,
        answers: [],
      });
      continue;
    }
    const amount = currencyKey === 'energy' ? upTo(60) : upTo(400);
    const body: Record<string, unknown> = { amount, reason: `jepsen.${kind}`, reference: `op ${i}` };
    if (kind === 'consume') body.allowance = ALLOWANCE;
    const lowers = kind === 'debit' || (kind === 'refund' && currencyKey === 'energy');
    operations.push({ key: `${label}-${i}`, playerId, currencyKey, kind, body, change: lowers ? -amount : amount, pattern, answers: [] });
  }
  return operations;
}

export function pathOf(op: Operation<unknown>): string {
  if (op.purchase?.card) return `/players/${op.playerId}/purchases/cards`;
  return op.purchase ? `/players/${op.playerId}/purchases/items` : `/players/${op.playerId}/currencies/${op.currencyKey}/${op.kind}`;
}

/** What a purchase that acted granted: the items (or the stack after them), the card, or the card stack after one more. */
export function expectGranted(op: Operation<unknown>, granted: any): void {
  const { itemTypeKey, quantity, card } = op.purchase!;
  if (card === 'instance') expect(granted).toEqual({ card: expect.objectContaining({ cardTypeKey: itemTypeKey, consumedAt: null }), alreadyGranted: false });
  else if (card === 'stack') expect(granted).toEqual({ inventoryId: expect.any(String), cardTypeKey: itemTypeKey, quantity: expect.any(Number) });
  else {
    expect(granted.itemTypeKey).toBe(itemTypeKey);
    if (itemTypeKey === 'charm') expect(granted.items).toHaveLength(quantity);
    else expect(granted.stack.quantity).toBeGreaterThanOrEqual(quantity);
  }
}

/** Where the checks count what a purchase bought: items by type, cards by `card:` type (instances and stacks together). */
const heldKey = (playerId: string, op: Operation<unknown>) => `${playerId}|${op.purchase!.card ? 'card:' : ''}${op.purchase!.itemTypeKey}`;

/** The ledger as it stands, and what the checks below gather of it: which entries a key answered for, what was bought. */
export class LedgerCheck {
  readonly acted = new Set<string>();
  /** What the purchases that acted bought, by `${player}|${itemType}`. */
  readonly bought = new Map<string, number>();
  private constructor(
    readonly entries: any[],
    private readonly entryById: Map<string, any>,
  ) {}

  static async read(db: Knex, players: string[]): Promise<LedgerCheck> {
    const entries = await db('ledger_entries').whereIn('player_id', players).orderBy('id');
    return new LedgerCheck(entries, new Map(entries.map((e) => [String(e.id), e])));
  }

  /**
   * The effect of one key, from the Movement (a move) or the Purchase (first or replayed: its charges)
   * a 200 answered: its ledger entries exist, match the request, and no other key answered for them.
   */
  actedOnce(op: Operation<unknown>, answer: any): void {
    if (op.purchase) {
      expect(answer.charges.map((c: any) => ({ currencyKey: c.currencyKey, change: c.amount }))).toEqual(op.purchase.charges);
      const { itemTypeKey, quantity } = op.purchase;
      for (const charge of answer.charges) {
        const entry = this.entryById.get(charge.transactionId);
        expect({ key: op.key, found: entry !== undefined }).toEqual({ key: op.key, found: true });
        expect({
          player: entry.player_id,
          currency: entry.currency_key,
          amount: Number(entry.amount),
          reason: entry.reason,
          reference: entry.reference,
        }).toEqual({
          player: op.playerId,
          currency: charge.currencyKey,
          amount: charge.amount,
          reason: 'purchase',
          reference: `${op.purchase.card ? 'card' : 'item'}:${itemTypeKey}`,
        });
        expect({ key: op.key, answeredTwice: this.acted.has(charge.transactionId) }).toEqual({ key: op.key, answeredTwice: false });
        this.acted.add(charge.transactionId);
      }
      const held = heldKey(op.playerId, op);
      this.bought.set(held, (this.bought.get(held) ?? 0) + quantity);
      return;
    }
    const entry = this.entryById.get(answer.transactionId);
    expect({ key: op.key, found: entry !== undefined }).toEqual({ key: op.key, found: true });
    expect({ player: entry.player_id, currency: entry.currency_key, amount: Number(entry.amount), reference: entry.reference }).toEqual({
      player: op.playerId,
      currency: op.currencyKey,
      amount: op.change,
      reference: op.body.reference,
    });
    expect({ key: op.key, answeredTwice: this.acted.has(answer.transactionId) }).toEqual({ key: op.key, answeredTwice: false });
    this.acted.add(answer.transactionId);
  }

  /** No entry without a key that answered for it: nothing acted twice or unseen. */
  everyEntryAnswered(): void {
    expect(this.entries.filter((e) => !this.acted.has(String(e.id))).map((e) => ({ id: e.id, reference: e.reference }))).toEqual([]);
    expect(this.entries.length).toBe(this.acted.size);
  }

  /** Items: each purchase that acted granted its quantity once, and nothing else was granted; none past maxOwned. */
  async holdingsAreWhatWasBought(db: Knex, players: string[]): Promise<void> {
    const stackRows = await db('item_stacks as s')
      .join('inventories as i', 'i.id', 's.inventory_id')
      .whereIn('i.player_id', players)
      .select('i.player_id', 's.item_type_key', 's.quantity');
    const itemRows = (await db('items')
      .whereIn('player_id', players)
      .groupBy('player_id', 'item_type_key')
      .select('player_id', 'item_type_key')
      .count({ count: '*' })) as any[];
    const holdings = new Map<string, number>();
    for (const r of stackRows) if (Number(r.quantity) > 0) holdings.set(`${r.player_id}|${r.item_type_key}`, Number(r.quantity));
    for (const r of itemRows) holdings.set(`${r.player_id}|${r.item_type_key}`, Number(r.count));
    const cardStacks = await db('card_stacks as s')
      .join('inventories as i', 'i.id', 's.inventory_id')
      .whereIn('i.player_id', players)
      .select('i.player_id', 's.card_type_key', 's.quantity');
    const cardRows = (await db('cards')
      .whereIn('player_id', players)
      .groupBy('player_id', 'card_type_key')
      .select('player_id', 'card_type_key')
      .count({ count: '*' })) as any[];
    for (const r of [...cardStacks.map((c) => ({ ...c, count: c.quantity })), ...cardRows]) {
      const held = `${r.player_id}|card:${r.card_type_key}`;
      if (Number(r.count) > 0) holdings.set(held, (holdings.get(held) ?? 0) + Number(r.count));
    }
    expect(Object.fromEntries([...holdings].sort())).toEqual(Object.fromEntries([...this.bought].sort()));
    for (const [held, quantity] of holdings)
      if (!held.includes('|card:')) expect(quantity).toBeLessThanOrEqual(held.endsWith('|charm') ? CHARM.maxOwned : ELIXIR.maxOwned);
  }

  /** Each balance replays from its ledger, entry by entry, within its limits; the API tells the same. */
  async balancesAreTheirLedgers(db: Knex, players: string[], base: string, serverKey: string): Promise<void> {
    const balances = await db('balances as b').join('inventories as i', 'i.id', 'b.inventory_id').whereIn('i.player_id', players).select('b.*');
    for (const balance of balances) {
      const own = this.entries.filter((e) => e.inventory_id === balance.inventory_id && e.currency_key === balance.currency_key);
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
    for (const playerId of players) {
      const reply = await call(base, 'GET', `/players/${playerId}/inventories/account/balances`, { token: serverKey });
      const fromDb = balances.filter((b) => reply.body.inventory.id === b.inventory_id).map((b) => ({ currencyKey: b.currency_key, amount: Number(b.amount) }));
      expect(reply.body.items).toEqual(fromDb.sort((x, y) => (x.currencyKey < y.currencyKey ? -1 : 1)));
    }
  }
}
