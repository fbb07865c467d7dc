/**
 * `hearth dev store ...`: the player's and the store's side of the local store of a running
 * `hearth dev` (found through its connection.json), over the store's `/dev/` HTTP (store.ts
 * `handleControl`): a ticket as the game client gets one, the orders, the overlay's answer, a refund
 * or chargeback.
 */
import path from 'node:path';
import { runningDevServices } from '../dev-connection';
import { CliError, emit, table } from '../output';
import type { StandInTxn } from './store';

/** A store account id for the demo player: any uint64 will do. */
export const DEFAULT_STEAM_ID = '76561197960287930';

interface Common {
  dataDir: string;
  json?: boolean;
}

async function control<T>(dataDir: string, method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> {
  const { store } = runningDevServices(path.resolve(dataDir));
  let answer: Response;
  try {
    answer = await fetch(`${store.url}/dev/${route}`, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new CliError(`the local store of hearth dev (${store.url}) did not answer: ${(err as Error).message}`);
  }
  const text = await answer.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CliError(`the local store answered ${answer.status}: ${text.slice(0, 200)}`);
  }
  if (!answer.ok) {
    const refusal = parsed as { error?: string; message?: string };
    throw new CliError(`${refusal.error ?? answer.status}: ${refusal.message ?? text}`);
  }
  return parsed as T;
}

/** A ticket of the store account `steamId` for the demo project's app and identity string: what identify takes. */
export async function runDevStoreTicket(opts: Common & { steamId: string }): Promise<void> {
  const answer = await control<{ ticket: string; steamId: string }>(opts.dataDir, 'POST', 'tickets', { steamId: opts.steamId });
  emit(opts.json ?? false, answer, () => answer.ticket);
}

export async function runDevStoreOrders(opts: Common): Promise<void> {
  const { orders } = await control<{ orders: Omit<StandInTxn, 'finalized' | 'sandbox' | 'appid'>[] }>(opts.dataDir, 'GET', 'orders');
  emit(opts.json ?? false, { orders }, () =>
    table(
      ['ORDER', 'STATUS', 'STORE ACCOUNT', 'ITEMS', 'CREATED', 'CHANGED'],
      orders.map((o) => [
        o.orderid,
        o.status,
        o.steamid,
        o.items.map((i) => `${i.qty}× item ${i.itemid} ${i.amount} ${o.currency}`).join(', '),
        o.timecreated,
        o.time,
      ]),
    ),
  );
}

/** The overlay's answer (approve, decline) or the store taking the money back (refund, chargeback). */
export async function runDevStoreAction(action: 'approve' | 'decline' | 'refund' | 'chargeback', storeOrderId: string, opts: Common): Promise<void> {
  if (!/^[0-9]{1,20}$/.test(storeOrderId))
    throw new CliError(`<storeOrderId>: the store's order id (the order's storeOrderId, decimal digits), not ${JSON.stringify(storeOrderId)}`);
  const { order } = await control<{ order: { orderid: string; status: string } }>(opts.dataDir, 'POST', `orders/${storeOrderId}/${action}`);
  emit(opts.json ?? false, { order }, () => `order ${order.orderid}: ${order.status}`);
}
