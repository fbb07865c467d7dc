import { randomBytes, randomUUID } from 'node:crypto';
import { Refusal, CursorCodec, fingerprintOf } from '@hearth/core';
import { AMOUNT_MAX, IdempotencyKey, isGameKey, isIdempotencyKey } from '@hearth/core/contract';
import { EconomyService } from '@hearth/core/economy';
import type { Balance, Inventory, Movement } from '@hearth/core/shapes';
import { CliError, emit, table } from '../output';
import { refusalOnTheCommandLine } from '../refusals';
import { environmentOrFail } from './admin';
import { withRuntime } from '../runtime';

const LIMIT_MAX = 200;
/** Which flag of `credit`/`debit` carries each field of the move core is given. */
const MOVE_FLAGS = {
  playerId: '--player',
  currencyKey: '--currency',
  amount: '--amount',
  reason: '--reason',
  reference: '--reference',
  realmId: '--realm',
  inventoryId: '--realm',
  'Idempotency-Key': '--idempotency-key',
};
/** Staff corrections' idempotency keys live apart from the API's (scope `staff`), so they never collide with a game server's. */
const STAFF_SCOPE = 'staff';

/** The economy services over the CLI's database; the cursor key is throwaway, the CLI reads one page. */
function economy(): EconomyService {
  const cursors = new CursorCodec(randomBytes(32));
  return new EconomyService(cursors);
}

/** `hearth economy ledger`: a player's inventories with their balances, and the newest ledger entries. */
export async function runEconomyLedger(opts: { environment: string; player: string; currency?: string; limit?: string; json?: boolean }): Promise<void> {
  const limit = opts.limit === undefined ? 50 : Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIMIT_MAX) throw new CliError(`--limit must be a whole number from 1 to ${LIMIT_MAX}`);
  await withRuntime({}, async (rt) => {
    const env = await environmentOrFail(rt, opts.environment);
    const service = economy();
    try {
      const inventories: (Inventory & { balances: Balance[] })[] = [];
      for (const inventory of (await service.listInventories(rt.db, env, opts.player, { limit: LIMIT_MAX })).items) {
        const balances = (await service.balances(rt.db, env, opts.player, inventory.id, { limit: LIMIT_MAX })).items;
        inventories.push({ ...inventory, balances });
      }
      const ledger = (await service.ledger(rt.db, env, opts.player, { limit, currencyKey: opts.currency })).items;
      emit(!!opts.json, { environment: env.appKey, playerId: opts.player, inventories, ledger }, () => {
        const lines = [`player ${opts.player} in ${env.appKey}`];
        if (inventories.length === 0) lines.push('  no inventories');
        for (const inv of inventories) {
          lines.push(`  inventory ${inv.id} (${inv.realmId === null ? 'account' : `realm ${inv.realmId}`})`);
          for (const b of inv.balances) lines.push(`    ${b.currencyKey}: ${b.amount}`);
        }
        lines.push(ledger.length === 0 ? 'no ledger entries' : 'ledger, newest first:');
        if (ledger.length) {
          lines.push(
            table(
              ['CREATED', 'ENTRY', 'CURRENCY', 'AMOUNT', 'BALANCE AFTER', 'REASON', 'REFERENCE', 'INVENTORY'],
              ledger.map((e) => [
                e.createdAt,
                `#${e.id}`,
                e.currencyKey,
                `${e.amount > 0 ? '+' : ''}${e.amount}`,
                e.balanceAfter,
                e.reason,
                e.reference,
                e.inventoryId,
              ]),
            ),
          );
        }
        return lines.join('\n');
      });
    } catch (err) {
      if (err instanceof Refusal) throw new CliError(err.message);
      throw err;
    }
  });
}

/**
 * `hearth economy credit|debit`: a staff correction is a ledger entry like any move, never a row edit.
 * It runs under an idempotency key (given, or made and printed) so running it again does nothing twice.
 */
export async function runEconomyMove(
  kind: 'credit' | 'debit',
  opts: {
    environment: string;
    player: string;
    currency: string;
    amount: string;
    reason: string;
    reference?: string;
    realm?: string;
    idempotencyKey?: string;
    json?: boolean;
  },
): Promise<void> {
  const amount = Number(opts.amount);
  if (!/^\d+$/.test(opts.amount) || amount < 1 || amount > AMOUNT_MAX) throw new CliError(`--amount must be a whole number from 1 to ${AMOUNT_MAX}`);
  if (!isGameKey(opts.reason)) throw new CliError('--reason must be a key: 1-128 letters, digits and . _ : -, starting with a letter or digit');
  if (opts.reference !== undefined && (opts.reference.length < 1 || opts.reference.length > 200)) throw new CliError('--reference must be 1 to 200 characters');
  const key = opts.idempotencyKey ?? `cli-${randomUUID()}`;
  if (!isIdempotencyKey(key)) throw new CliError(`--idempotency-key must be ${IdempotencyKey.description}`);
  await withRuntime({}, async (rt) => {
    const env = await environmentOrFail(rt, opts.environment);
    const request = {
      amount,
      reason: opts.reason,
      reference: opts.reference,
      ...(opts.realm === undefined ? {} : { realmId: opts.realm === 'account' ? null : opts.realm }),
    };
    let movement: Movement;
    try {
      // The API's currency routes keep their key the same way: one statement claims, moves and answers.
      movement = await economy().moveOnce(rt.db, env, opts.player, opts.currency, kind, request, {
        environmentId: env.id,
        scope: STAFF_SCOPE,
        key,
        fingerprint: fingerprintOf(['economy', kind, opts.player, opts.currency, request]),
      });
    } catch (err) {
      if (err instanceof Refusal) throw refusalOnTheCommandLine(err, MOVE_FLAGS);
      throw err;
    }
    emit(!!opts.json, { idempotencyKey: key, movement }, () =>
      [
        `${movement.replayed ? 'already done under this key, nothing changed' : kind === 'credit' ? 'credited' : 'debited'}: ${movement.currencyKey} ${movement.amount > 0 ? '+' : ''}${movement.amount} -> ${movement.balanceAfter} (ledger entry #${movement.transactionId}, inventory ${movement.inventoryId})`,
        `idempotency key: ${key} (run again with --idempotency-key ${key} to retry safely)`,
      ].join('\n'),
    );
  });
}
