/**
 * The faults tests' shared parts: a stack of real `hearth` processes on the stores a test names, and a
 * bounded load of clients that retry their idempotent writes as a game server would (same key, same
 * body, on a 503 or a dropped connection), keeping what was acknowledged so the test can check that
 * nothing acknowledged is lost and nothing retried is applied twice.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import YAML from 'yaml';
import { testTempDir } from '../support/temp-dir';
import { checkAnswer } from '../support/contract';
import { type HearthService, hearthEnv, logTail, runHearthLogged, startHearthService, waitReady } from '../support/hearth-process';
import { currency, standardManifests } from '../support/manifests';
import { freePort } from '../support/ports';
import { stopProcess } from '../support/processes';
import { sleep } from '../support/wait';

/** Every request of the load gives up after this: an answer slower than it is a hang, counted as `timeout`. */
export const REQUEST_BOUND_MS = 10_000;
export const CREDIT_AMOUNT = 3;

const fail = (message: string) => new Error(message);

export interface Stack {
  logs: string;
  /** http://127.0.0.1:port of the API (paths under /v1). */
  origin: string;
  base: string;
  serverKey: string;
  api: HearthService;
  apiMetrics: string;
  realtime?: HearthService & { port: number; metrics: string };
  stop(): Promise<void>;
}

/**
 * Migrates the database (`hearth migrate`), applies the tests' standard manifests and a `gold` balance
 * currency (`hearth apply -f`), and starts `hearth api` (and `hearth realtime` when asked) on free
 * ports with LOG_LEVEL=info, so that their logs hold the connection lines the tests look for.
 */
export async function startStack(
  label: string,
  stores: { DATABASE_URL: string; REDIS_URL: string; REDIS_PREFIX?: string },
  options: { realtime?: boolean } = {},
): Promise<Stack> {
  const logs = testTempDir(`hearth-faults-${label}-`);
  const env = {
    ...stores,
    REDIS_PREFIX: stores.REDIS_PREFIX ?? `hearth-faults:${randomBytes(6).toString('hex')}:`,
    HEARTH_MASTER_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'info',
  };
  const manifests = path.join(logs, 'manifests.yaml');
  const docs = [
    // Generous limits: the load is checked and counted, never refused for its rate.
    ...standardManifests({ requestsPerMinutePerCredential: 1_000_000, requestsPerMinutePerEnvironment: 1_000_000, requestsPerDayPerEnvironment: 100_000_000 }),
    currency('alpha-live-gold', { environment: 'alpha-live', key: 'gold', name: 'Gold', scope: 'account', kind: 'balance' }),
  ];
  fs.writeFileSync(manifests, docs.map((d) => YAML.stringify(d)).join('---\n'));
  await runHearthLogged(['migrate', '--json'], hearthEnv(env), path.join(logs, 'migrate.log'), fail);
  const applied = JSON.parse(await runHearthLogged(['apply', '-f', manifests, '--json'], hearthEnv(env), path.join(logs, 'apply.log'), fail));
  const serverKey: string = applied.results.find((r: any) => r.kind === 'ServerKey' && r.name === 'alpha-live-key').serverKey.key;

  const port = await freePort();
  const metricsPort = await freePort();
  const api = startHearthService(
    'hearth api',
    ['api'],
    hearthEnv({ ...env, PORT: String(port), METRICS_PORT: String(metricsPort) }),
    path.join(logs, 'api.log'),
  );
  const origin = `http://127.0.0.1:${port}`;
  let realtime: Stack['realtime'];
  try {
    await waitReady(api, `${origin}/readyz`, fail);
    if (options.realtime) {
      const rtPort = await freePort();
      const rtMetrics = await freePort();
      const service = startHearthService(
        'hearth realtime',
        ['realtime'],
        hearthEnv({ ...env, REALTIME_PORT: String(rtPort), METRICS_PORT: String(rtMetrics) }),
        path.join(logs, 'realtime.log'),
      );
      realtime = { ...service, port: rtPort, metrics: `http://127.0.0.1:${rtMetrics}/metrics` };
      await waitReady(service, `http://127.0.0.1:${rtPort}/readyz`, fail);
    }
  } catch (err) {
    for (const s of [api, realtime]) if (s) await stopProcess(s.child);
    throw err;
  }
  return {
    logs,
    origin,
    base: `${origin}/v1`,
    serverKey,
    api,
    apiMetrics: `http://127.0.0.1:${metricsPort}/metrics`,
    realtime,
    stop: async () => {
      for (const s of [realtime, api]) if (s) await stopProcess(s.child);
    },
  };
}

/** A counter's value in a Prometheus text page (summed over its label sets matching `labels`). */
export async function metric(url: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(url, { signal: AbortSignal.timeout(REQUEST_BOUND_MS) })).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    if (Object.entries(labels).every(([k, v]) => (m[2] ?? '').includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

export { logTail };

/** One answer of the load, or what stood in for one. */
export interface Outcome {
  /** `200`, `503 unavailable`, `connection error`, `timeout`, ... : the row of the figures' table. */
  kind: string;
  status?: number;
  body?: any;
  ms: number;
  at: number;
}

/**
 * One request, bounded in time, its answer held to the OpenAPI document (a ContractViolation is
 * thrown: it fails the test); a connection that fails or a bound passed is an outcome, not a throw.
 */
export async function send(
  base: string,
  method: string,
  route: string,
  init: { token: string; body?: unknown; headers?: Record<string, string> },
): Promise<Outcome> {
  const started = Date.now();
  const headers: Record<string, string> = { Authorization: `Bearer ${init.token}`, ...(init.headers ?? {}) };
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  let text: string;
  try {
    res = await fetch(base + route, {
      method,
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(REQUEST_BOUND_MS),
    });
    text = await res.text();
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const kind = e.name === 'TimeoutError' ? 'timeout' : `connection error${e.cause?.code ? ` (${e.cause.code})` : ''}`;
    return { kind, ms: Date.now() - started, at: started };
  }
  checkAnswer({ method, url: base + route, status: res.status, header: (name) => res.headers.get(name), text });
  const body = text ? JSON.parse(text) : undefined;
  const kind = res.status < 300 ? String(res.status) : `${res.status} ${body?.error ?? ''}`.trim();
  return { kind, status: res.status, body, ms: Date.now() - started, at: started };
}

/** What a retrying client may retry with the same key and body: the store was away, not the request wrong. */
export const retriable = (o: Outcome) => o.status === 503 || o.kind.startsWith('connection error') || o.kind === 'timeout';

export interface Player {
  id: string;
  token: string;
}

/**
 * The load: per player, a creditor (server key, Idempotency-Key, `reference` = the key so the ledger
 * names it), a saver (PUT of its own slots, the same body on every retry) and a reader. Each client
 * finishes the write it has started (retrying after the load's end until it is answered), so that
 * every key tried is acknowledged by the end: its effect must then be there exactly once.
 */
export class Load {
  readonly outcomes: Outcome[] = [];
  /** Credit keys acknowledged (200), by player id. */
  readonly credited = new Map<string, Set<string>>();
  /** Save slots acknowledged (200/201), by player id: slot key → the data written. */
  readonly saved = new Map<string, Map<string, unknown>>();
  /** Answers no client may get (a 500, a refusal of a good request): the test fails on any. */
  readonly wrong: Outcome[] = [];
  private stopping = false;
  private running: Promise<void>[] = [];

  constructor(
    private readonly base: string,
    private readonly serverKey: string,
    private readonly players: Player[],
    private readonly pauseMs = 20,
  ) {}

  start(): void {
    for (const p of this.players) {
      this.credited.set(p.id, new Set());
      this.saved.set(p.id, new Map());
      this.running.push(this.creditor(p), this.saver(p), this.reader(p));
    }
  }

  /** Stops starting new requests; resolves once every client has its last write answered (bounded by `withinMs`). */
  async stop(withinMs = 60_000): Promise<void> {
    this.stopping = true;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`the load's clients did not finish within ${withinMs} ms`)), withinMs)),
    );
    try {
      await Promise.race([Promise.all(this.running), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private record(o: Outcome, ok: (o: Outcome) => boolean): Outcome {
    this.outcomes.push(o);
    if (!ok(o) && !retriable(o)) this.wrong.push(o);
    return o;
  }

  /** Sends until answered with something other than "the store was away" (a client's retry loop). */
  private async untilAnswered(attempt: () => Promise<Outcome>, ok: (o: Outcome) => boolean): Promise<Outcome> {
    for (;;) {
      const o = this.record(await attempt(), ok);
      if (!retriable(o)) return o;
      await sleep(100);
    }
  }

  private async creditor(p: Player): Promise<void> {
    for (let n = 0; !this.stopping; n++) {
      const key = `credit-${p.id}-${n}`;
      const o = await this.untilAnswered(
        () =>
          send(this.base, 'POST', `/players/${p.id}/currencies/gold/credit`, {
            token: this.serverKey,
            headers: { 'Idempotency-Key': key },
            body: { amount: CREDIT_AMOUNT, reason: 'faults', reference: key },
          }),
        (x) => x.status === 200,
      );
      if (o.status === 200) this.credited.get(p.id)!.add(key);
      await sleep(this.pauseMs);
    }
  }

  private async saver(p: Player): Promise<void> {
    for (let n = 0; !this.stopping; n++) {
      const slot = `slot-${n % 20}`;
      const data = { n, player: p.id };
      const o = await this.untilAnswered(
        () => send(this.base, 'PUT', `/players/me/data/${slot}`, { token: p.token, body: { data } }),
        (x) => x.status === 200 || x.status === 201,
      );
      if (o.status === 200 || o.status === 201) this.saved.get(p.id)!.set(slot, data);
      await sleep(this.pauseMs);
    }
  }

  private async reader(p: Player): Promise<void> {
    while (!this.stopping) {
      this.record(await send(this.base, 'GET', '/players/me', { token: p.token }), (x) => x.status === 200);
      this.record(await send(this.base, 'GET', '/players/me/inventories/account/balances', { token: p.token }), (x) => x.status === 200);
      await sleep(this.pauseMs);
    }
  }

  /** Requests by kind of answer, for the figures. */
  byKind(from = 0, to = Infinity): Record<string, number> {
    const out: Record<string, number> = {};
    for (const o of this.outcomes) if (o.at >= from && o.at < to) out[o.kind] = (out[o.kind] ?? 0) + 1;
    return out;
  }
}

/** Every page of a list route. */
async function allPages(base: string, token: string, route: string): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const sep = route.includes('?') ? '&' : '?';
    const o = await send(base, 'GET', `${route}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
    if (o.status !== 200) throw new Error(`GET ${route}: ${o.kind}`);
    items.push(...o.body.items);
    cursor = o.body.next;
  } while (cursor);
  return items;
}

/**
 * What is durable, read back through the API: per player, the gold balance, the ledger's entries and
 * the references they name (the credit keys), and every slot acknowledged with the data last written.
 */
export async function readBack(base: string, serverKey: string, load: Load, players: Player[]) {
  const perPlayer = [];
  for (const p of players) {
    const balances = await allPages(base, p.token, '/players/me/inventories/account/balances');
    const ledger = await allPages(base, serverKey, `/players/${p.id}/ledger?currencyKey=gold`);
    const slots: Record<string, unknown> = {};
    for (const slot of load.saved.get(p.id)!.keys()) {
      const o = await send(base, 'GET', `/players/me/data/${slot}`, { token: p.token });
      slots[slot] = o.status === 200 ? o.body.data : o.kind;
    }
    perPlayer.push({
      id: p.id,
      balance: balances.find((b) => b.currencyKey === 'gold')?.amount ?? 0,
      references: ledger.map((e) => e.reference as string).sort(),
      slots,
    });
  }
  return perPlayer;
}

/**
 * Nothing durable lost or doubled, read back through the API: every acknowledged credit once in the
 * ledger (by its reference, the key), the balance their sum, every acknowledged save holding the data
 * last written. Answers what it read, for the figures.
 */
export async function expectNothingLostOrDoubled(base: string, serverKey: string, load: Load, players: Player[]) {
  const durable = await readBack(base, serverKey, load, players);
  for (const p of durable) {
    const keys = [...load.credited.get(p.id)!].sort();
    expect(keys.length).toBeGreaterThan(0);
    expect({ id: p.id, references: p.references, balance: p.balance }).toEqual({ id: p.id, references: keys, balance: keys.length * CREDIT_AMOUNT });
    expect(p.slots).toEqual(Object.fromEntries(load.saved.get(p.id)!));
  }
  return durable;
}

/** Fails the test when a stack's process died during the run (its log's tail says why). */
export function expectAlive(service: HearthService): void {
  if (service.child.exitCode !== null || service.child.signalCode !== null)
    throw new Error(`${service.name} exited (${service.child.exitCode ?? service.child.signalCode}):\n${logTail(service.log)}`);
}
