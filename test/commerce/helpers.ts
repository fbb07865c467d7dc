/** Shared by the commerce tests: the stand-in store, a project selling through it, products and players. */
import { API_VERSION, type AnyManifest } from '@hearth/core/manifests';
import type { Harness } from '../support/harness';
import { call, signIn, type Reply } from '../support/http';
import { currency, environment, itemType, plan, product, project, projectWithout, serverKey } from '../support/manifests';
import type { StoreStandIn } from '../support/store-standin';

export const STORE_KEY = 'test-publisher-key-5b1e';
export const STORE_KEY_VARIABLE = 'HEARTH_TEST_STORE_KEY';
export const APP_ID = 480;
export const IDENTITY = 'hearth-commerce';

export function storeSettings(store: StoreStandIn, overrides: Record<string, unknown> = {}) {
  return {
    provider: 'steam' as const,
    appId: APP_ID,
    sandbox: false,
    identity: IDENTITY,
    publisherKey: { env: STORE_KEY_VARIABLE },
    baseUrl: store.url,
    ...overrides,
  };
}

export { product };

/**
 * `shop` sells through the stand-in (environments shop-live and shop-test), `nostore` sets no store,
 * `closed` has not switched commerce on. shop-live sells a one-time starter pack (USD, EUR), repeatable
 * gems (USD only) and a switched-off product; shop-test sells its own product only.
 */
export function commerceManifests(store: StoreStandIn): AnyManifest[] {
  return [
    plan('test'),
    project('shop', { store: storeSettings(store) }),
    environment('shop-live', 'shop'),
    environment('shop-test', 'shop'),
    serverKey('shop-live-key', 'shop-live'),
    serverKey('shop-test-key', 'shop-test'),
    project('nostore'),
    environment('nostore-live', 'nostore'),
    serverKey('nostore-live-key', 'nostore-live'),
    ...projectWithout('closed', 'commerce'),
    product('starter', {
      environment: 'shop-live',
      sku: 'starter-pack',
      name: 'Starter pack',
      storeItemId: 4294967295,
      entitlement: 'starter',
      prices: [
        { currency: 'USD', amount: 499 },
        { currency: 'EUR', amount: 449 },
      ],
    }),
    product('gems', {
      environment: 'shop-live',
      sku: 'gems-100',
      name: '100 gems',
      storeItemId: 2,
      entitlement: 'gems-100',
      repeatable: true,
      prices: [{ currency: 'USD', amount: 99 }],
    }),
    product('retired', {
      environment: 'shop-live',
      sku: 'retired',
      name: 'Gone',
      storeItemId: 3,
      entitlement: 'retired',
      enabled: false,
      prices: [{ currency: 'USD', amount: 1 }],
    }),
    currency('shop-gems', { environment: 'shop-live', key: 'gems', name: 'Gems', scope: 'account', kind: 'balance', max: 250 }),
    itemType('shop-badge', { environment: 'shop-live', key: 'badge', name: 'Badge', category: 'misc', ownership: 'counted' }),
    product('bundle', {
      environment: 'shop-live',
      sku: 'gem-bundle',
      name: 'Gem bundle',
      storeItemId: 5,
      entitlement: 'gem-bundle',
      repeatable: true,
      prices: [{ currency: 'USD', amount: 199 }],
      currencies: [{ currencyKey: 'gems', amount: 100 }],
      items: [{ itemTypeKey: 'badge', quantity: 1 }],
    }),
    product('test-only', {
      environment: 'shop-test',
      sku: 'test-only',
      name: 'Test',
      storeItemId: 4,
      entitlement: 'test-only',
      prices: [{ currency: 'USD', amount: 1 }],
    }),
  ];
}

export interface Buyer {
  id: string;
  token: string;
  steamId: string;
}

let counter = 0;
let steamIds = 76561197960265728n;

export async function newBuyer(h: Harness, keyName = 'shop-live-key'): Promise<Buyer> {
  const subject = `cm-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;
  const tokens = await signIn(h.base, h.serverKeys[keyName], subject);
  steamIds += 1n + BigInt(Math.floor(Math.random() * 1000));
  return { id: tokens.player.id, token: tokens.accessToken, steamId: steamIds.toString() };
}

export function identify(h: Harness, buyer: Buyer, body: Record<string, unknown>): Promise<Reply> {
  return call(h.base, 'POST', '/commerce/store/identify', { token: buyer.token, body });
}

/** A buyer who has proved their store account (wallet as given). */
export async function identifiedBuyer(
  h: Harness,
  store: StoreStandIn,
  wallet: { currency?: string; status?: 'Active' | 'Locked from purchasing' } = {},
  keyName?: string,
): Promise<Buyer> {
  const buyer = await newBuyer(h, keyName);
  store.setUser(buyer.steamId, { country: wallet.currency === 'EUR' ? 'DE' : 'US', currency: wallet.currency ?? 'USD', status: wallet.status ?? 'Active' });
  const reply = await identify(h, buyer, { ticket: store.issueTicket(buyer.steamId, { identity: IDENTITY, appid: APP_ID }), identity: IDENTITY });
  if (reply.status !== 200) throw new Error(`identify failed: ${reply.status} ${reply.text}`);
  return buyer;
}

export function order(
  h: Harness,
  buyer: Buyer,
  body: Record<string, unknown> = { sku: 'starter-pack', provider: 'steam', language: 'en' },
  headers?: Record<string, string>,
): Promise<Reply> {
  return call(h.base, 'POST', '/commerce/orders', { token: buyer.token, body, headers });
}

export function authorize(h: Harness, buyer: Buyer, storeOrderId: string, authorized = true): Promise<Reply> {
  return call(h.base, 'POST', '/commerce/store/authorizations', { token: buyer.token, body: { storeOrderId, authorized } });
}

export function reconcile(h: Harness, buyer: Buyer): Promise<Reply> {
  return call(h.base, 'POST', '/commerce/orders/reconcile', { token: buyer.token });
}
