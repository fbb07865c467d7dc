/**
 * The store adapter: Hearth's one way of speaking to the store's partner web API (Steam's
 * ISteamUserAuth and ISteamMicroTxn, docs/commerce.md "The store's web API"). It speaks the wire
 * format exactly: GET calls carry their parameters in the query, POST calls a form-urlencoded body;
 * 64-bit ids (orderid, transid, steamid) are decimal strings end to end, never JS numbers; every
 * answer is `{ response: { result, params } }` or `{ response: { result: "Failure", error: { errorcode,
 * errordesc } } }`.
 *
 * Every call has one deadline and a bounded answer. A failure is a typed error: `StoreRefusal` when the
 * store answered an error of its own (its code kept), `StoreUnavailable` for everything about reaching
 * it (network, deadline, size, a 5xx, an answer that is not the store's JSON, a key the store refuses
 * with its 403 page, a 400/404/405 for a call it does not take). The URL of a call is never put into an
 * error or a log line: a GET carries the publisher key in its query.
 */
import type { StoreSpecT } from '../contract/store';
import { STORE_BASE_URL } from '../contract/store';

/** Bounds of one call: the whole call (connect, answer, body) within timeoutMs; an answer of at most maxBytes. */
export const STORE_CALL = { timeoutMs: 10_000, maxBytes: 256 * 1024, reportMaxBytes: 8 * 1024 * 1024 } as const;

const UINT64_MAX = 18446744073709551615n;

/** A uint64 as the store's wire format carries it: a decimal string, 0 < n < 2^64. */
export function isUint64(value: string): boolean {
  return /^[1-9][0-9]{0,19}$/.test(value) && BigInt(value) <= UINT64_MAX;
}

/** The store answered an error of its own (`response.error`): its code and words, for `provider-refused`. */
export class StoreRefusal extends Error {
  constructor(
    readonly call: StoreCallName,
    readonly errorCode: number,
    readonly errorDescription: string,
  ) {
    super(`the store refused ${call}: ${errorCode} ${errorDescription}`);
    this.name = 'StoreRefusal';
  }
}

/** The store could not be reached or did not answer as the store: retry later (`unavailable`). */
export class StoreUnavailable extends Error {
  constructor(
    readonly call: StoreCallName,
    readonly reason: 'network' | 'timeout' | 'too-large' | 'malformed' | 'server-error' | 'key-refused' | 'call-refused',
    detail: string,
  ) {
    super(`the store did not answer ${call} (${reason}): ${detail}`);
    this.name = 'StoreUnavailable';
  }
}

/** The store's error codes Hearth acts on (its microtransaction documentation's list). */
export const STORE_ERROR = {
  failed: 2,
  invalidParameter: 3,
  notApproved: 5,
  alreadyCommitted: 6,
  userDenied: 10,
  notAllowedToPurchase: 103,
} as const;

export type StoreCallName = 'AuthenticateUserTicket' | 'GetUserInfo' | 'InitTxn' | 'QueryTxn' | 'FinalizeTxn' | 'GetReport' | 'RefundTxn';

/** A transaction's status at the store (QueryTxn, GetReport). */
export const TXN_STATUSES = [
  'Init',
  'Approved',
  'Succeeded',
  'Failed',
  'Refunded',
  'PartialRefund',
  'Chargedback',
  'RefundedSuspectedFraud',
  'RefundedFriendlyFraud',
] as const;
export type TxnStatus = (typeof TXN_STATUSES)[number];

export interface TicketOwner {
  /** The user the ticket proves, a uint64 as a decimal string. */
  steamId: string;
  /** Who owns the game (differs under family sharing). */
  ownerSteamId: string;
  vacBanned: boolean;
  publisherBanned: boolean;
}

export interface StoreUser {
  country: string;
  currency: string;
  /** `Active`, `Trusted` or `Locked from purchasing`. */
  status: string;
  state: string;
}

export interface TxnLine {
  /** The store's numeric item id (uint32). */
  itemId: number;
  qty: number;
  /** In minor units of the transaction's currency. */
  amount: number;
  description: string;
}

export interface TxnStart {
  orderId: string;
  steamId: string;
  language: string;
  currency: string;
  lines: TxnLine[];
  /** `client` (the overlay in the game, the default) or `web`. */
  userSession?: 'client' | 'web';
}

export interface TxnIds {
  orderId: string;
  transId: string;
}

export interface TxnReport extends TxnIds {
  steamId: string;
  status: TxnStatus;
  currency: string;
  country: string;
  time: string;
  items: { itemId: number; qty: number; amount: number; itemStatus: string | null }[];
}

/** How to reach the store for one project: its settings and the publisher key read for this call. */
export interface StoreAccess {
  settings: StoreSpecT;
  publisherKey: string;
  /** Told of every failed call (to log why: the routes answer only `unavailable` or `provider-refused`). Its error never names the URL. */
  onFailure?: (failure: StoreRefusal | StoreUnavailable) => void;
}

type Params = Record<string, string>;

/** The store's answer keys that hold 64-bit ids: kept as the digits they are, never parsed into a JS number. */
const UINT64_KEYS = ['orderid', 'transid', 'steamid', 'ownersteamid'];
const UINT64_AS_NUMBER = new RegExp(`"(${UINT64_KEYS.join('|')})"\\s*:\\s*(-?[0-9]+)`, 'g');

/** The store's partner web API for one project (one call per method; see the module's comment). */
export class StoreClient {
  private readonly base: string;

  constructor(private readonly access: StoreAccess) {
    this.base = (access.settings.baseUrl ?? STORE_BASE_URL).replace(/\/+$/, '');
  }

  /** Who holds this ticket, made by GetAuthTicketForWebApi with the project's identity string. */
  async authenticateUserTicket(ticket: string, identity: string): Promise<TicketOwner> {
    const params = await this.get('AuthenticateUserTicket', 'ISteamUserAuth/AuthenticateUserTicket/v1/', {
      appid: String(this.access.settings.appId),
      ticket,
      identity,
    });
    const steamId = uint64Field(params, 'steamid', 'AuthenticateUserTicket');
    if (params.result !== undefined && params.result !== 'OK') throw malformed('AuthenticateUserTicket', 'params.result is not OK');
    return {
      steamId,
      ownerSteamId: typeof params.ownersteamid === 'string' && isUint64(params.ownersteamid) ? params.ownersteamid : steamId,
      vacBanned: params.vacbanned === true,
      publisherBanned: params.publisherbanned === true,
    };
  }

  /** The user's wallet: country, currency and whether they may buy. */
  async getUserInfo(steamId: string): Promise<StoreUser> {
    const params = await this.get('GetUserInfo', `${this.txn()}/GetUserInfo/v2/`, { steamid: steamId });
    const text = (name: string) => {
      const value = params[name];
      if (typeof value !== 'string') throw malformed('GetUserInfo', `params.${name} is missing`);
      return value;
    };
    return { country: text('country'), currency: text('currency'), status: text('status'), state: typeof params.state === 'string' ? params.state : '' };
  }

  /** Starts the transaction: the store shows the player its overlay. */
  async initTxn(start: TxnStart): Promise<TxnIds> {
    const form: Params = {
      orderid: checkedUint64(start.orderId, 'orderId'),
      steamid: checkedUint64(start.steamId, 'steamId'),
      appid: String(this.access.settings.appId),
      itemcount: String(start.lines.length),
      language: start.language,
      currency: start.currency,
      usersession: start.userSession ?? 'client',
    };
    start.lines.forEach((line, i) => {
      form[`itemid[${i}]`] = String(line.itemId);
      form[`qty[${i}]`] = String(line.qty);
      form[`amount[${i}]`] = String(line.amount);
      form[`description[${i}]`] = line.description;
    });
    return txnIds(await this.post('InitTxn', `${this.txn()}/InitTxn/v3/`, form), 'InitTxn', start.orderId);
  }

  /** The transaction's status now. */
  async queryTxn(orderId: string): Promise<TxnReport> {
    const params = await this.get('QueryTxn', `${this.txn()}/QueryTxn/v3/`, {
      appid: String(this.access.settings.appId),
      orderid: checkedUint64(orderId, 'orderId'),
    });
    return txnReport(params, 'QueryTxn', orderId);
  }

  /** Takes the money of an approved transaction. */
  async finalizeTxn(orderId: string): Promise<TxnIds> {
    return txnIds(
      await this.post('FinalizeTxn', `${this.txn()}/FinalizeTxn/v2/`, {
        orderid: checkedUint64(orderId, 'orderId'),
        appid: String(this.access.settings.appId),
      }),
      'FinalizeTxn',
      orderId,
    );
  }

  /** Gives the money of a settled transaction back (support's tool; refunds reach Hearth through the report). */
  async refundTxn(orderId: string): Promise<TxnIds> {
    return txnIds(
      await this.post('RefundTxn', `${this.txn()}/RefundTxn/v2/`, { orderid: checkedUint64(orderId, 'orderId'), appid: String(this.access.settings.appId) }),
      'RefundTxn',
      orderId,
    );
  }

  /** What changed since `since` (RFC 3339): settled, refunded and charged back transactions. */
  async getReport(since: Date, maxResults: number): Promise<{ count: number; orders: TxnReport[] }> {
    const params = await this.get(
      'GetReport',
      `${this.txn()}/GetReport/v5/`,
      { appid: String(this.access.settings.appId), type: 'GAMESALES', time: since.toISOString().replace(/\.\d{3}Z$/, 'Z'), maxresults: String(maxResults) },
      STORE_CALL.reportMaxBytes,
    );
    if (!Array.isArray(params.orders)) throw malformed('GetReport', 'params.orders is not a list');
    const orders = (params.orders as unknown[]).map((order) => txnReport(asRecord(order, 'GetReport'), 'GetReport'));
    return { count: typeof params.count === 'number' ? params.count : orders.length, orders };
  }

  /** The sandbox's microtransactions are under their own interface; identity is the same either way. */
  private txn(): string {
    return this.access.settings.sandbox === true ? 'ISteamMicroTxnSandbox' : 'ISteamMicroTxn';
  }

  private get(call: StoreCallName, path: string, params: Params, maxBytes: number = STORE_CALL.maxBytes): Promise<Record<string, unknown>> {
    const query = new URLSearchParams({ key: this.access.publisherKey, ...params });
    return this.call(call, `${this.base}/${path}?${query.toString()}`, { method: 'GET' }, maxBytes);
  }

  private post(call: StoreCallName, path: string, form: Params): Promise<Record<string, unknown>> {
    const body = new URLSearchParams({ key: this.access.publisherKey, ...form }).toString();
    return this.call(
      call,
      `${this.base}/${path}`,
      { method: 'POST', body, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } },
      STORE_CALL.maxBytes,
    );
  }

  /** One call within one deadline; answers `response.params` or throws a typed error (never naming the URL). */
  private async call(call: StoreCallName, url: string, init: RequestInit, maxBytes: number): Promise<Record<string, unknown>> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new StoreUnavailable(call, 'timeout', `no answer within ${STORE_CALL.timeoutMs} ms`));
      }, STORE_CALL.timeoutMs);
    });
    const reading = exchange(call, url, { ...init, signal: controller.signal, redirect: 'error' }, maxBytes).then((params) => {
      // An answer that names an app is about this game's app, or it is not an answer to this call.
      if (params.appid !== undefined && String(params.appid) !== String(this.access.settings.appId)) throw malformed(call, 'params.appid is another app');
      return params;
    });
    reading.catch(() => undefined); // settled after the deadline, if ever: nobody waits for it then
    try {
      return await Promise.race([reading, deadline]);
    } catch (err) {
      if (err instanceof StoreRefusal || err instanceof StoreUnavailable) this.access.onFailure?.(err);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}

async function exchange(call: StoreCallName, url: string, init: RequestInit, maxBytes: number): Promise<Record<string, unknown>> {
  let answer: Response;
  try {
    answer = await fetch(url, { ...init, headers: { Accept: 'application/json', ...(init.headers as Record<string, string> | undefined) } });
  } catch (err) {
    // The cause's code only (ECONNREFUSED…): the error's own text may quote the address with its query.
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    throw new StoreUnavailable(call, 'network', typeof code === 'string' ? code : 'the request failed');
  }
  if (answer.status === 403) {
    await answer.body?.cancel();
    throw new StoreUnavailable(call, 'key-refused', 'the store refused the publisher key (403)');
  }
  if (answer.status === 400 || answer.status === 404 || answer.status === 405) {
    await answer.body?.cancel();
    throw new StoreUnavailable(call, 'call-refused', `the store does not take this call (${answer.status})`);
  }
  if (answer.status !== 200 || !answer.body) {
    await answer.body?.cancel();
    throw new StoreUnavailable(call, 'server-error', `the store answered ${answer.status}`);
  }
  const text = await readBounded(call, answer, maxBytes);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(UINT64_AS_NUMBER, '"$1":"$2"'));
  } catch {
    throw malformed(call, 'the answer is not JSON');
  }
  const response = asRecord(asRecord(parsed, call).response, call);
  if (response.error !== undefined || response.result === 'Failure') {
    const error = response.error === undefined ? {} : asRecord(response.error, call);
    const code = typeof error.errorcode === 'number' ? error.errorcode : Number(error.errorcode ?? 0);
    throw new StoreRefusal(call, Number.isInteger(code) ? code : 0, typeof error.errordesc === 'string' ? error.errordesc.slice(0, 200) : '');
  }
  if (response.result !== undefined && response.result !== 'OK') throw malformed(call, 'response.result is neither OK nor Failure');
  return asRecord(response.params, call);
}

async function readBounded(call: StoreCallName, answer: Response, maxBytes: number): Promise<string> {
  if (Number(answer.headers.get('content-length') ?? 0) > maxBytes) {
    await answer.body?.cancel();
    throw new StoreUnavailable(call, 'too-large', `the answer is larger than ${maxBytes} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.length;
      if (size > maxBytes) throw new StoreUnavailable(call, 'too-large', `the answer is larger than ${maxBytes} bytes`);
      chunks.push(chunk);
    }
  } catch (err) {
    throw err instanceof StoreUnavailable ? err : new StoreUnavailable(call, 'network', 'the answer was cut short');
  }
  return Buffer.concat(chunks).toString('utf8');
}

function malformed(call: StoreCallName, detail: string): StoreUnavailable {
  return new StoreUnavailable(call, 'malformed', detail);
}

function asRecord(value: unknown, call: StoreCallName): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed(call, 'an object was expected');
  return value as Record<string, unknown>;
}

function uint64Field(params: Record<string, unknown>, name: string, call: StoreCallName): string {
  const value = params[name];
  if (typeof value !== 'string' || !isUint64(value)) throw malformed(call, `params.${name} is not a 64-bit id`);
  return value;
}

/** An id Hearth sends: refused before any call when it is not a uint64 (a fault of the caller, not of the store). */
function checkedUint64(value: string, name: string): string {
  if (!isUint64(value)) throw new TypeError(`${name} must be a uint64 as a decimal string`);
  return value;
}

/**
 * The order an answer is about must be the order asked: an answer about another order (a store's or a
 * middlebox's mix-up, a replayed answer) would settle this order by another's status.
 */
function askedOrder(params: Record<string, unknown>, call: StoreCallName, asked: string): string {
  const orderId = uint64Field(params, 'orderid', call);
  if (orderId !== asked) throw malformed(call, 'params.orderid is not the order asked');
  return orderId;
}

function txnIds(params: Record<string, unknown>, call: StoreCallName, asked: string): TxnIds {
  return { orderId: askedOrder(params, call, asked), transId: uint64Field(params, 'transid', call) };
}

/** A transaction as QueryTxn (the order `asked`) or GetReport (any of the app's orders) tells it. */
function txnReport(params: Record<string, unknown>, call: StoreCallName, asked?: string): TxnReport {
  const status = params.status;
  if (typeof status !== 'string' || !(TXN_STATUSES as readonly string[]).includes(status)) throw malformed(call, 'params.status is not a known status');
  const items = Array.isArray(params.items) ? (params.items as unknown[]).map((item) => asRecord(item, call)) : [];
  return {
    orderId: asked === undefined ? uint64Field(params, 'orderid', call) : askedOrder(params, call, asked),
    transId: typeof params.transid === 'string' && isUint64(params.transid) ? params.transid : '',
    steamId: uint64Field(params, 'steamid', call),
    status: status as TxnStatus,
    currency: typeof params.currency === 'string' ? params.currency : '',
    country: typeof params.country === 'string' ? params.country : '',
    time: typeof params.time === 'string' ? params.time : '',
    items: items.map((item) => ({
      itemId: Number(item.itemid),
      qty: Number(item.qty),
      amount: Number(item.amount),
      itemStatus: typeof item.itemstatus === 'string' ? item.itemstatus : null,
    })),
  };
}
