/**
 * How the money engine's refusals are worded: ONE table of outcome → error code, message and details,
 * for every move of value (currency moves, purchases, item grants and the items routes' choice of
 * inventory). The engine decides (its function files raise SQLSTATE HM001 with the outcome as JSON);
 * the words are here, and test/core/engine-outcomes.test.ts holds the two to each other. Fields are named relative to the move's input
 * (`inventoryId`, `currencyKey`): each adapter says where that input was (the API `body.`/`path.`).
 */
import { Refusal, refuse } from '../errors';
import { IDEMPOTENCY_CONFLICT_MESSAGE } from '../idempotency';

/** What the engine says about a refused move: the outcome and what its words need. */
export interface EngineOutcome {
  outcome: string;
  currencyKey?: string;
  /** The move's kind (credit, debit, refund, consume). */
  kind?: string;
  currencyKind?: string | null;
  held?: number | string | null;
  cap?: number | string | null;
  requested?: number | string | null;
  allowance?: number | string | null;
  /** The body's field that named the place (inventoryId or realmId). */
  field?: string;
  itemTypeKey?: string;
  cardTypeKey?: string;
  cardTemplateKey?: string;
  limit?: number | string;
  payWith?: string;
  prices?: string[];
  /** locked: the unlocks the player lacks, in the type's order. */
  missing?: string[];
  consumedAt?: string;
  /** contents-unusable: the container, and whether the content's type is `switched off` or `not defined`. */
  container?: string;
  state?: string;
  /** Progression: the skill node unlocked, and its tree. */
  nodeKey?: string;
  treeKey?: string;
}

/** SQLSTATE of a refused move; DETAIL is the EngineOutcome as JSON. */
export const MOVE_REFUSED = 'HM001';

const num = (value: unknown) => Number(value);
/** A list the outcome names, for the words (the engine always sends it where the outcome has one). */
const listOf = (names: string[] | undefined) => (names ?? []).join(', ');
/** What a move that is paid for pays for (a purchase's item type, an unlock's skill node), for the words and the details. */
/** Who is moved, for the words on where it is held. */
const heldThing = (o: EngineOutcome) => (o.itemTypeKey !== undefined ? `The item type ${o.itemTypeKey}` : 'This currency');
/** What an outcome is about (an item type, a card type, or the skill node an unlock pays for), as words and as details. */
const typeKey = (o: EngineOutcome) => (o.nodeKey !== undefined ? `The skill node ${o.nodeKey}` : (o.itemTypeKey ?? o.cardTypeKey));
const typeDetails = (o: EngineOutcome) =>
  o.nodeKey !== undefined ? { nodeKey: o.nodeKey } : o.cardTypeKey !== undefined ? { cardTypeKey: o.cardTypeKey } : { itemTypeKey: o.itemTypeKey };

/**
 * What a move was asked (its request, and the player it moves for), by the names of the API's input:
 * a not-found outcome names the key it did not find from there, and the field that held it.
 */
export type MoveInput = Readonly<Record<string, unknown>>;

/** `what` "key" was not found, naming `field`: the key from the outcome when it says it, else from the move's input. */
function notFound(o: EngineOutcome, input: MoveInput | undefined, what: string, field: string): Refusal {
  const key = (o as unknown as Record<string, unknown>)[field] ?? input?.[field];
  return typeof key === 'string' ? refuse.notFound(what, { key, field }) : refuse.notFound(what);
}

const REFUSALS: Record<string, (o: EngineOutcome, input?: MoveInput) => Refusal> = {
  'idempotency-conflict': () => new Refusal('idempotency-conflict', IDEMPOTENCY_CONFLICT_MESSAGE),
  'player-not-found': (o, input) => notFound(o, input, 'The player', 'playerId'),
  'currency-not-found': (o, input) => notFound(o, input, 'The currency', 'currencyKey'),
  'item-type-not-found': (o, input) => notFound(o, input, 'The item type', 'itemTypeKey'),
  'inventory-not-found': (o, input) => notFound(o, input, 'The inventory', 'inventoryId'),
  'realm-not-found': (o, input) => notFound(o, input, 'The realm', 'realmId'),
  'no-current-realm': () => new Refusal('no-current-realm', 'No realm is open now.'),
  'both-choices': () => refuse.invalid('realmId', 'Name the inventory by inventoryId or by realmId, not both.'),
  // The place named (inventoryId or realmId) does not fit where the currency or item type is held.
  'held-on-account': (o) => refuse.invalid(o.field ?? 'realmId', `${heldThing(o)} is held on the account inventory.`),
  'held-per-realm': (o) => refuse.invalid(o.field ?? 'realmId', `${heldThing(o)} is held per realm, not on the account.`),
  'wrong-kind': (o) => refuse.invalid('currencyKey', `${o.currencyKey} is a ${o.currencyKind} currency: it cannot be moved by ${o.kind}.`),
  disabled: (o) => new Refusal('disabled', `The currency ${o.currencyKey} is switched off.`, { currencyKey: o.currencyKey }),
  // Of a currency (a debit, a purchase's charge) or of a counted stack (taking from it).
  'insufficient-balance': (o) =>
    new Refusal(
      'insufficient-balance',
      `Not enough ${o.currencyKey ?? typeKey(o)}: ${o.held} held, ${o.requested} asked.`,
      o.currencyKey !== undefined
        ? { currencyKey: o.currencyKey, held: num(o.held), requested: num(o.requested) }
        : { ...typeDetails(o), held: num(o.held), requested: num(o.requested) },
    ),
  'allowance-exceeded': (o) =>
    new Refusal('allowance-exceeded', `Spending ${o.requested} ${o.currencyKey} would pass the allowance of ${o.allowance} (${o.held} spent).`, {
      currencyKey: o.currencyKey,
      held: num(o.held),
      requested: num(o.requested),
      allowance: num(o.allowance),
    }),
  'balance-cap': (o) =>
    new Refusal('balance-cap', `${o.currencyKey} would pass its maximum of ${o.cap} (${o.held} held).`, {
      currencyKey: o.currencyKey,
      held: num(o.held),
      requested: num(o.requested),
    }),
  'not-purchasable': (o) => new Refusal('not-purchasable', `${typeKey(o)} is not for sale.`, typeDetails(o)),
  'item-type-disabled': (o) => new Refusal('disabled', `The item type ${o.itemTypeKey} is switched off.`, { itemTypeKey: o.itemTypeKey }),
  // The charges of a move that is paid for (hearth_price_charges): a purchase's or a skill node's.
  'pay-with-unpriced': (o) => refuse.invalid('payWith', `${typeKey(o)} has no price in ${o.payWith}; its prices are in ${listOf(o.prices)}.`),
  'pay-with-missing': (o) => refuse.invalid('payWith', `${typeKey(o)} is paid with any one of its prices: name its currency in payWith (${listOf(o.prices)}).`),
  // A price in a currency the environment does not have makes the item or card not for sale (the
  // node not to be had), never free.
  'price-currency-not-found': (o) =>
    o.nodeKey !== undefined
      ? new Refusal('not-found', `${typeKey(o)} is priced in ${o.currencyKey}, which is not defined.`)
      : new Refusal('not-purchasable', `${typeKey(o)} is priced in ${o.currencyKey}, which is not defined.`, { ...typeDetails(o), currencyKey: o.currencyKey }),
  'price-currency-disabled': (o) =>
    new Refusal('disabled', `${typeKey(o)} is priced in ${o.currencyKey}, which is switched off.`, { ...typeDetails(o), currencyKey: o.currencyKey }),
  'allowance-missing': (o) =>
    new Refusal(
      'invalid-request',
      `${typeKey(o)} is priced in ${o.currencyKey}, a consumed currency: a server key must send its allowance in allowances.${o.currencyKey}.`,
      {
        field: 'allowances',
        currencyKey: o.currencyKey,
      },
    ),
  'grant-key-counted': (o) => refuse.invalid('grantKey', `${o.itemTypeKey} is counted: a grantKey is for items held one by one.`),
  'data-counted': (o) => refuse.invalid('data', `${o.itemTypeKey} is counted: data is for items held one by one.`),
  'grant-key-quantity': () => refuse.invalid('quantity', 'A grant under a grantKey grants exactly one item.'),
  'held-one-by-one': (o) => refuse.invalid('itemTypeKey', `${o.itemTypeKey} is held one by one: act on its items by id.`),
  'item-not-found': (o, input) => notFound(o, input, 'The item', 'itemId'),
  'already-consumed': (o) =>
    new Refusal('already-consumed', `The item was already used, opened or consumed (${o.consumedAt}).`, { itemTypeKey: o.itemTypeKey }),
  'not-usable': (o) => new Refusal('not-usable', `${o.itemTypeKey} is not usable.`, { itemTypeKey: o.itemTypeKey }),
  'no-longer-defined': (o) => new Refusal('not-usable', `${o.itemTypeKey} is no longer defined.`, { itemTypeKey: o.itemTypeKey }),
  'not-a-container': (o) => new Refusal('not-usable', `Only a container is opened; ${o.itemTypeKey} is not one.`, { itemTypeKey: o.itemTypeKey }),
  'contents-unusable': (o) =>
    new Refusal('not-usable', `${o.container} cannot be opened: its contents name ${o.itemTypeKey}, which is ${o.state}.`, { itemTypeKey: o.itemTypeKey }),
  locked: (o) =>
    new Refusal('locked', `${o.itemTypeKey} needs unlocks the player lacks: ${listOf(o.missing)}.`, { itemTypeKey: o.itemTypeKey, missing: o.missing ?? [] }),
  'owned-limit': (o) =>
    new Refusal('owned-limit', `${typeKey(o)}: ${o.held} held, ${o.requested} more would pass the most one inventory may hold (${o.limit}).`, {
      ...typeDetails(o),
      held: num(o.held),
      requested: num(o.requested),
      limit: num(o.limit),
    }),
  // Cards (docs/cards.md).
  'card-type-not-found': (o, input) => notFound(o, input, 'The card type', 'cardTypeKey'),
  'card-type-disabled': (o) => new Refusal('disabled', `The card type ${o.cardTypeKey} is switched off.`, { cardTypeKey: o.cardTypeKey }),
  'card-template-not-found': (o, input) => notFound(o, input, 'The card template', 'cardTemplateKey'),
  'card-template-disabled': (o) => new Refusal('disabled', `The card template ${o.cardTemplateKey} is switched off.`, { cardTemplateKey: o.cardTemplateKey }),
  'card-not-found': (o, input) => notFound(o, input, 'The card', 'cardId'),
  'card-already-consumed': (o) => new Refusal('already-consumed', `The card was already consumed (${o.consumedAt}).`, { cardTypeKey: o.cardTypeKey }),
  'stack-card-fields': (o) => refuse.invalid(o.field ?? 'data', `A card bought as a stack is counted: ${o.field} is for a card bought as an instance.`),
  // progression: a skill node's unlock (docs/progression.md), and a stat moved past its range.
  'skill-node-not-found': (o, input) => notFound(o, input, 'The skill node', 'nodeKey'),
  'skill-tree-disabled': (o) =>
    new Refusal('disabled', `The skill node ${o.nodeKey} is in skill tree ${o.treeKey}, which is switched off.`, { nodeKey: o.nodeKey }),
  'skill-node-locked': (o) =>
    new Refusal('locked', `The skill node ${o.nodeKey} needs what the player lacks: ${listOf(o.missing)}.`, { nodeKey: o.nodeKey, missing: o.missing ?? [] }),
  'stat-out-of-range': (o) => refuse.invalid('by', `Adding ${o.requested} to ${o.held} would take the stat past the 64-bit range.`),
};

/** Every outcome the table words (test/core/engine-outcomes.test.ts holds them to what the SQL raises). */
export const ENGINE_OUTCOMES: readonly string[] = Object.keys(REFUSALS);

/** The refusal an outcome names (`input`: what the move was asked). An outcome the table does not know is a fault, not a refusal. */
export function refusalOf(o: EngineOutcome, input?: MoveInput): Refusal {
  const word = REFUSALS[o.outcome];
  if (!word) throw new Error(`the money engine answered an unknown outcome: ${o.outcome}`);
  return word(o, input);
}

/** The engine's refusal when `err` is one (HM001), else `err` itself, for the caller to throw. */
export function engineError(err: unknown, input?: MoveInput): unknown {
  const { code, detail } = err as { code?: string; detail?: string };
  if (code !== MOVE_REFUSED || detail === undefined) return err;
  return refusalOf(JSON.parse(detail) as EngineOutcome, input);
}
