/**
 * A local store speaking the store's partner web API (ISteamUserAuth, ISteamMicroTxn and its
 * sandbox) on 127.0.0.1: the store `hearth dev` runs for its demo project, and the stand-in every
 * commerce test reaches (test/support/store-standin.ts re-exports this one). It answers each call as
 * the store does (docs/commerce.md "The store's web API"): GET calls read the query, POST calls a
 * form-urlencoded body; a wrong key is a 403 HTML page, an unknown method 404, a wrong HTTP method
 * 405, a missing parameter 400; an error of the store's own is 200 with `response.result: "Failure"`
 * and `response.error { errorcode, errordesc }`. 64-bit ids are decimal strings in its answers, as
 * the store writes them.
 *
 * What the store's other side does (a game client's ticket, the player in the overlay, the store's
 * support refunding) is done with the methods below, or over HTTP under `/dev/` on the same port
 * (what `hearth dev store ...` calls; see `handleControl`).
 *
 * Knobs for tests: users' wallets and locks (`setUser`), `autoApprove` (every order approved at once,
 * as the load test uses), a failure or a delay for the next calls of a method (`failNext`,
 * `delayNext`, `onNext`), and what it was asked (`calls`, `count`).
 */
import type http from 'node:http';
import { closeServer, listenOnLoopback } from './loopback';

export interface StandInUser {
  country: string;
  currency: string;
  status: 'Active' | 'Trusted' | 'Locked from purchasing';
  state?: string;
}

export interface StandInTxn {
  orderid: string;
  transid: string;
  steamid: string;
  appid: string;
  status: string;
  currency: string;
  country: string;
  time: string;
  timecreated: string;
  sandbox: boolean;
  items: { itemid: number; qty: number; amount: number; vat: number; itemstatus: string }[];
  finalized: number;
}

export interface StandInCall {
  method: string;
  interface: string;
  httpMethod: string;
  params: Record<string, string>;
}

/** How a settled order is taken back at the store. */
export type SettledStatus = 'Refunded' | 'Chargedback' | 'PartialRefund' | 'RefundedSuspectedFraud' | 'RefundedFriendlyFraud';

type Failure = { errorcode: number; errordesc: string } | { status: number; body?: string } | { hang: true };

const METHODS: Record<string, { iface: 'auth' | 'txn'; http: 'GET' | 'POST'; version: string; required: string[] }> = {
  AuthenticateUserTicket: { iface: 'auth', http: 'GET', version: 'v1', required: ['key', 'appid', 'ticket'] },
  GetUserInfo: { iface: 'txn', http: 'GET', version: 'v2', required: ['key', 'steamid'] },
  InitTxn: { iface: 'txn', http: 'POST', version: 'v3', required: ['key', 'orderid', 'steamid', 'appid', 'itemcount', 'language', 'currency'] },
  QueryTxn: { iface: 'txn', http: 'GET', version: 'v3', required: ['key', 'appid'] },
  FinalizeTxn: { iface: 'txn', http: 'POST', version: 'v2', required: ['key', 'orderid', 'appid'] },
  GetReport: { iface: 'txn', http: 'GET', version: 'v5', required: ['key', 'appid', 'time'] },
  RefundTxn: { iface: 'txn', http: 'POST', version: 'v2', required: ['key', 'orderid', 'appid'] },
};

/** The store's time: seconds, UTC, as it writes them. */
const storeNow = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/** What `/dev/orders/<orderid>/<action>` does to the order: the overlay's answer, or the store taking the money back. */
const ACTIONS: Record<string, { from: string; to: string } | undefined> = {
  approve: { from: 'Init', to: 'Approved' },
  decline: { from: 'Init', to: 'Failed' },
  refund: { from: 'Succeeded', to: 'Refunded' },
  chargeback: { from: 'Succeeded', to: 'Chargedback' },
};

export class StoreStandIn {
  readonly calls: StandInCall[] = [];
  readonly txns = new Map<string, StandInTxn>();
  private readonly tickets = new Map<string, { steamid: string; identity: string; appid: string }>();
  private readonly users = new Map<string, StandInUser>();
  private readonly failures = new Map<string, Failure[]>();
  private readonly delays = new Map<string, number[]>();
  private readonly hooks = new Map<string, ((params: Record<string, string>) => void)[]>();
  private nextTransId = 9_007_199_254_740_993n; // past 2^53: a JS number would lose it
  private server?: http.Server;
  url = '';
  /** Every transaction InitTxn makes is approved at once, as if its player answered the overlay (no test then calls `authorize`). */
  autoApprove = false;
  /** The app and identity string a ticket asked over `/dev/tickets` is for, when the request names none (`hearth dev` sets its demo project's). */
  ticketDefaults: { appid: number; identity: string } = { appid: 480, identity: 'hearth-dev' };
  /**
   * Awaited after an order is changed over `/dev/orders/...` (approved, declined, refunded, charged
   * back) and before that is answered: `hearth dev` runs its report job there, so Hearth has settled
   * the order (or taken its grant back) by the time `hearth dev store ...` returns.
   */
  afterChange?: (orderid: string) => Promise<void>;

  /** `keys`: the publisher keys it takes (another is its 403 page). */
  constructor(readonly keys: string[] = ['publisher-key']) {}

  /** Listens on 127.0.0.1 at `port` (0, the default: one the kernel picks). */
  async start(port = 0): Promise<this> {
    ({ server: this.server, url: this.url } = await listenOnLoopback((req, res) => void this.handle(req, res), port));
    return this;
  }

  async stop(): Promise<void> {
    await closeServer(this.server);
  }

  /** A ticket GetAuthTicketForWebApi would make for this user, app and identity string. */
  issueTicket(steamid: string, options: { identity: string; appid: number }): string {
    const ticket = Buffer.from(`${steamid}:${options.identity}:${this.tickets.size}:${Math.random()}`).toString('hex').toUpperCase();
    this.tickets.set(ticket, { steamid, identity: options.identity, appid: String(options.appid) });
    return ticket;
  }

  setUser(steamid: string, user: StandInUser): void {
    this.users.set(steamid, user);
  }

  /** The player's choice in the overlay: approved (`Approved`) or denied (`Failed`). */
  authorize(orderid: string, approved: boolean): void {
    const txn = this.txnOf(orderid);
    if (txn.status === 'Init') txn.status = approved ? 'Approved' : 'Failed';
  }

  /** A settled transaction refunded or charged back; it then shows in the report with that status. */
  settle(orderid: string, status: SettledStatus): void {
    const txn = this.txnOf(orderid);
    txn.status = status;
    txn.time = storeNow();
  }

  /** The next calls of `method` fail as given, one failure per call, in order. */
  failNext(method: string, ...failures: Failure[]): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), ...failures]);
  }

  /** The next call of `method` answers after `ms`. */
  delayNext(method: string, ms: number): void {
    this.delays.set(method, [...(this.delays.get(method) ?? []), ms]);
  }

  /** Runs `hook` with the call's parameters when the next call of `method` arrives, before it is answered (to change the store's state under a caller). */
  onNext(method: string, hook: (params: Record<string, string>) => void): void {
    this.hooks.set(method, [...(this.hooks.get(method) ?? []), hook]);
  }

  count(method: string): number {
    return this.calls.filter((call) => call.method === method).length;
  }

  txnOf(orderid: string): StandInTxn {
    const txn = this.txns.get(orderid);
    if (!txn) throw new Error(`the stand-in holds no transaction ${orderid}`);
    return txn;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    if (url.pathname.startsWith('/dev/')) return this.handleControl(req, res, url);
    const [, iface = '', method = '', version] = url.pathname.split('/');
    const spec = METHODS[method];
    const ifaceOk = spec && (spec.iface === 'auth' ? iface === 'ISteamUserAuth' : iface === 'ISteamMicroTxn' || iface === 'ISteamMicroTxnSandbox');
    if (!spec || !ifaceOk || version !== spec.version) return html(res, 404, 'Not Found');
    if (req.method !== spec.http) return html(res, 405, 'Method Not Allowed');
    let params: Record<string, string>;
    if (spec.http === 'POST') {
      const body = await readBody(req);
      if (!String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return html(res, 400, 'Bad Request');
      params = Object.fromEntries(new URLSearchParams(body));
    } else {
      params = Object.fromEntries(url.searchParams);
    }
    this.calls.push({ method, interface: iface, httpMethod: spec.http, params });
    if (!this.keys.includes(params.key ?? '')) return html(res, 403, 'Forbidden');
    if (spec.required.some((name) => params[name] === undefined)) return html(res, 400, 'Bad Request');
    const delay = this.delays.get(method)?.shift();
    if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
    this.hooks.get(method)?.shift()?.(params);
    const failure = this.failures.get(method)?.shift();
    if (failure) {
      if ('hang' in failure) return; // never answers: the caller's deadline must end it
      if ('status' in failure) return html(res, failure.status, failure.body ?? 'Error');
      return json(res, 200, { response: { result: 'Failure', error: failure } });
    }
    const answer = this.answer(method, params, iface === 'ISteamMicroTxnSandbox');
    json(res, 200, { response: answer });
  }

  /**
   * The store's other side over HTTP, JSON in and out (refusals `{ error, message }`):
   * - `POST /dev/tickets { steamId, appId?, identity? }` → 201 `{ ticket, steamId }`: the ticket a
   *   game client signed in to the store as `steamId` gets from GetAuthTicketForWebApi;
   * - `GET /dev/orders` → `{ orders }`: every transaction as QueryTxn reports it, oldest first;
   * - `POST /dev/orders/<orderid>/approve` or `decline`: the player's answer in the overlay (an
   *   order still `Init`); `refund` or `chargeback`: the store takes a settled (`Succeeded`) order's
   *   money back → `{ order }`; 404 `not-found` for an order it does not hold, 409 `conflict` for one
   *   not in the state the action needs.
   */
  private async handleControl(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const body = await readBody(req);
    const refuse = (status: number, error: string, message: string) => json(res, status, { error, message }, true);
    if (url.pathname === '/dev/orders' && req.method === 'GET') {
      const orders = [...this.txns.values()].sort((a, b) => a.timecreated.localeCompare(b.timecreated)).map((t) => this.report(t));
      return json(res, 200, { orders }, true);
    }
    if (url.pathname === '/dev/tickets' && req.method === 'POST') {
      let asked: { steamId?: unknown; appId?: unknown; identity?: unknown };
      try {
        asked = body.trim() === '' ? {} : (JSON.parse(body) as typeof asked);
      } catch {
        return refuse(400, 'invalid-request', 'the body is not JSON');
      }
      const steamId = String(asked.steamId ?? '');
      if (!/^[0-9]{1,20}$/.test(steamId)) return refuse(400, 'invalid-request', 'steamId: a store account id (decimal digits) is required');
      const appid = asked.appId === undefined ? this.ticketDefaults.appid : Number(asked.appId);
      const identity = asked.identity === undefined ? this.ticketDefaults.identity : String(asked.identity);
      return json(res, 201, { ticket: this.issueTicket(steamId, { appid, identity }), steamId }, true);
    }
    const [, , orders, orderid = '', action = '', extra] = url.pathname.split('/');
    const change = ACTIONS[action];
    if (orders !== 'orders' || !change || extra !== undefined) return refuse(404, 'not-found', `no such control: ${req.method ?? ''} ${url.pathname}`);
    if (req.method !== 'POST') return refuse(405, 'method-not-allowed', `${url.pathname} takes POST`);
    const txn = this.txns.get(orderid);
    if (!txn) return refuse(404, 'not-found', `the store holds no order ${orderid}`);
    if (txn.status !== change.from) return refuse(409, 'conflict', `order ${orderid} is ${txn.status}: ${action} needs an order that is ${change.from}`);
    if (change.to === 'Refunded' || change.to === 'Chargedback') this.settle(orderid, change.to);
    else {
      this.authorize(orderid, change.to === 'Approved');
      txn.time = storeNow(); // the report lists an order by its last change
    }
    try {
      await this.afterChange?.(orderid);
    } catch (err) {
      return refuse(500, 'internal', `the order is ${change.to} at the store, but Hearth's reading of the store's report failed: ${(err as Error).message}`);
    }
    return json(res, 200, { order: this.report(txn) }, true);
  }

  private answer(method: string, p: Record<string, string>, sandbox: boolean): Record<string, unknown> {
    const refuse = (errorcode: number, errordesc: string) => ({ result: 'Failure', error: { errorcode, errordesc } });
    const param = (name: string) => p[name] ?? '';
    switch (method) {
      case 'AuthenticateUserTicket': {
        const held = this.tickets.get(param('ticket'));
        if (!held || held.appid !== p.appid || held.identity !== (p.identity ?? '')) return { error: { errorcode: 101, errordesc: 'Invalid ticket' } };
        return { params: { result: 'OK', steamid: held.steamid, ownersteamid: held.steamid, vacbanned: false, publisherbanned: false } };
      }
      case 'GetUserInfo': {
        const user = this.users.get(param('steamid')) ?? { country: 'US', currency: 'USD', status: 'Active' as const };
        return { result: 'OK', params: { state: user.state ?? '', country: user.country, currency: user.currency, status: user.status } };
      }
      case 'InitTxn': {
        const orderid = param('orderid');
        if (!/^[0-9]{1,20}$/.test(orderid)) return refuse(3, 'Invalid parameter: orderid');
        if (this.txns.has(orderid)) return refuse(3, 'Invalid parameter: duplicate orderid');
        const user = this.users.get(param('steamid'));
        if (user?.status === 'Locked from purchasing') return refuse(103, 'User is not allowed to purchase');
        if (user && user.currency !== p.currency) return refuse(8, 'Currency does not match user wallet');
        const count = Number(p.itemcount);
        const items = [];
        for (let i = 0; i < count; i++) {
          const itemid = p[`itemid[${i}]`];
          const qty = p[`qty[${i}]`];
          const amount = p[`amount[${i}]`];
          if (![itemid, qty, amount].every((v) => v !== undefined && /^[0-9]+$/.test(v)) || p[`description[${i}]`] === undefined) {
            return refuse(3, `Invalid parameter: item ${i}`);
          }
          items.push({ itemid: Number(itemid), qty: Number(qty), amount: Number(amount), vat: 0, itemstatus: 'Init' });
        }
        const now = storeNow();
        const transid = String(this.nextTransId++);
        this.txns.set(orderid, {
          orderid,
          transid,
          steamid: param('steamid'),
          appid: param('appid'),
          status: this.autoApprove ? 'Approved' : 'Init',
          currency: param('currency'),
          country: user?.country ?? 'US',
          time: now,
          timecreated: now,
          sandbox,
          items,
          finalized: 0,
        });
        return { result: 'OK', params: { orderid, transid } };
      }
      case 'QueryTxn': {
        const txn = p.orderid !== undefined ? this.txns.get(p.orderid) : [...this.txns.values()].find((t) => t.transid === p.transid);
        if (!txn || txn.appid !== p.appid) return refuse(3, 'Invalid parameter: no such order');
        return { result: 'OK', params: this.report(txn) };
      }
      case 'FinalizeTxn': {
        const txn = this.txns.get(param('orderid'));
        if (!txn || txn.appid !== p.appid) return refuse(3, 'Invalid parameter: no such order');
        if (txn.status === 'Succeeded') return refuse(6, 'Transaction has already been committed');
        if (txn.status !== 'Approved') return refuse(5, 'Transaction has not been approved by user');
        txn.status = 'Succeeded';
        txn.finalized += 1;
        txn.items.forEach((item) => (item.itemstatus = 'Succeeded'));
        return { result: 'OK', params: { orderid: txn.orderid, transid: txn.transid } };
      }
      case 'GetReport': {
        const since = Date.parse(param('time'));
        const max = Number(p.maxresults ?? 1000);
        const orders = [...this.txns.values()]
          .filter((t) => t.appid === p.appid && t.status !== 'Init' && Date.parse(t.time) >= since)
          .sort((a, b) => Date.parse(a.time) - Date.parse(b.time))
          .slice(0, max)
          .map((t) => this.report(t));
        return { result: 'OK', params: { count: orders.length, orders } };
      }
      case 'RefundTxn': {
        const txn = this.txns.get(param('orderid'));
        if (!txn || txn.status !== 'Succeeded') return refuse(2, 'Refund failed');
        this.settle(txn.orderid, 'Refunded');
        return { result: 'OK', params: { orderid: txn.orderid, transid: txn.transid } };
      }
    }
    return refuse(2, 'failed');
  }

  private report(txn: StandInTxn) {
    const { finalized: _finalized, sandbox: _sandbox, appid: _appid, ...shown } = txn;
    return { ...shown, usstate: '' };
  }
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function html(res: http.ServerResponse, status: number, title: string): void {
  res.writeHead(status, { 'Content-Type': 'text/html' });
  res.end(`<html><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`);
}

/** A JSON answer; the control's end with a newline (what curl prints reads as a line), the store's as the store writes them. */
function json(res: http.ServerResponse, status: number, body: unknown, newline = false): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(newline ? `${JSON.stringify(body)}\n` : JSON.stringify(body));
}
