/**
 * kill -9 of an API process mid-request (issue 13, "Faults"; docs/reliability.md "Faults: kill -9").
 *
 * Real parts: the harness's database (manifests applied) and Redis prefix, and `hearth api`
 * executables over them behind a round-robin TCP ingress (test/support/ingress.ts). Concurrent clients
 * run the Jepsen-style economy model (test/economy/jepsen-model.ts: credits, debits, consumes, refunds
 * and item purchases on a few players, each under its own Idempotency-Key, sent once, raced, or again
 * later with the same key) and retry every request that got no answer (a cut connection) or a 5xx,
 * with the same key, with backoff, bounded. Meanwhile the nemesis SIGKILLs process A while requests
 * are in flight, starts a fresh process C, and once C serves SIGKILLs B (so C carries the rest).
 *
 * Afterwards: every key a client saw acknowledged (200) has exactly its one effect in the ledger;
 * retries under one key converged to one effect (at most one 200 that is not a replay, every replay
 * the same outcome); every key in doubt (a request cut mid-flight) ended with an answer, and one more
 * retry of those that acted answers the same outcome; no idempotency record is left without its
 * answer and none exists for a key that never answered 200 (0 effects); every balance replays from its
 * ledger within its limits, and purchases granted their items exactly once.
 *
 * The kill of a realtime process and of a crash worker are held by test/realtime/failover.test.ts
 * and test/crashes/worker.test.ts.
 */
import { testTempDir } from '../support/temp-dir';
import { type Harness, startHarness } from '../support/harness';
import { call, signIn } from '../support/http';
import { type HearthService, logTail } from '../support/hearth-process';
import { type Ingress, startIngress } from '../support/ingress';
import { ApiProcesses, kill9 } from './api-processes';
import { sleep } from '../support/wait';
import {
  LedgerCheck,
  MOVE_REFUSALS,
  type Operation,
  PURCHASE_REFUSALS,
  expectGranted,
  jepsenManifests,
  makeOperations,
  pathOf,
  random,
  sendAsPatterned,
} from '../economy/jepsen-model';
import { reportFigure } from '../support/figures';

jest.setTimeout(120_000);

const CLIENTS = 16;
const PLAYERS = 3;
/** Operations run after the nemesis is done (so the fresh process carries load too); at most MAX_OPERATIONS in all. */
const OPERATIONS_AFTER = Number(process.env.KILL_OPERATIONS_AFTER ?? 150);
const MAX_OPERATIONS = 3000;
/** A send is retried until it gets an answer that is not a 5xx, at most this many tries (backoff 20 ms doubling to 400 ms). */
const MAX_ATTEMPTS = 40;
/** The nemesis waits for at least this many requests in flight before each kill. */
const IN_FLIGHT_AT_KILL = 4;

/** One try of a request: the answer it got, or the error that cut it; `at` (sent) and `end` are ms since the load began. */
type Attempt = { at: number; end: number; status: number; body: any; checked: boolean } | { at: number; end: number; error: string };
type Op = Operation<Attempt>;
const answered = (a: Attempt): a is Extract<Attempt, { status: number }> => 'status' in a;

/** A short name for why a request got no answer (fetch's error wraps undici's or the socket's). */
function errorKind(err: any): string {
  const code = err?.cause?.code ?? err?.code;
  const names: Record<string, string> = {
    UND_ERR_SOCKET: 'connection closed mid-request',
    ECONNRESET: 'connection reset',
    ECONNREFUSED: 'connection refused',
    EPIPE: 'broken pipe',
    UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  };
  return names[code] ?? `other (${code ?? err?.cause?.message ?? err?.message})`;
}

/** `median M ms, at most X ms` of a list of durations. */
function spread(ms: number[]): string {
  const sorted = [...ms].sort((x, y) => x - y);
  return sorted.length ? `a median ${sorted[Math.floor(sorted.length / 2)]} ms, at most ${sorted[sorted.length - 1]} ms` : 'none';
}

let h: Harness;
let serverKey: string;
let ingress: Ingress;
const apis = new ApiProcesses(() => h, testTempDir('hearth-kill-'));
const startApi = (name: string) => apis.start(name);

beforeAll(async () => {
  h = await startHarness({ manifests: jepsenManifests() });
  serverKey = h.serverKeys['alpha-live-key'];
});

afterAll(async () => {
  await ingress?.close();
  await apis.stopAll();
  await h?.close();
});

test('kill -9 of API processes mid-load: acknowledged writes stay, every key acts once, balances are their ledgers', async () => {
  const seed = Number(process.env.KILL_SEED ?? Date.now() % 1_000_000);
  const rand = random(seed);
  const [a, b] = await Promise.all([startApi('api-a'), startApi('api-b')]);
  ingress = await startIngress([a.port, b.port], 'round-robin');
  const base = `http://127.0.0.1:${ingress.port}/v1`;

  const players: string[] = [];
  for (let i = 0; i < PLAYERS; i++) players.push((await signIn(base, serverKey, `kill-${seed}-${i}`)).player.id);
  const operations = makeOperations<Attempt>(rand, players, MAX_OPERATIONS, `kill-${seed}`);

  const t0 = Date.now();
  const now = () => Date.now() - t0;
  let inFlight = 0;
  let requests = 0;
  /** Tries after one that got no answer or a 5xx (the pattern's own random retries are counted apart). */
  let retriesAfterFailure = 0;

  /** Sends until an answer that is not a 5xx, with the same key; every try is recorded. */
  const send = async (op: Op) => {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (attempt > 0) {
        retriesAfterFailure++;
        await sleep(Math.min(400, 20 * 2 ** (attempt - 1)) * (0.5 + rand() / 2));
      }
      const at = now();
      inFlight++;
      requests++;
      try {
        const reply = await call(base, 'POST', pathOf(op), { token: serverKey, body: op.body, headers: { 'Idempotency-Key': op.key } });
        // Asserted once every client is done: a client that threw here would leave the others running.
        op.answers.push({ at, end: now(), status: reply.status, body: reply.body, checked: reply.contract.checked });
        if (reply.status < 500) return;
      } catch (err) {
        op.answers.push({ at, end: now(), error: errorKind(err) });
      } finally {
        inFlight--;
      }
    }
  };
  const run = (op: Op) => sendAsPatterned(op, send, rand);

  // The nemesis: kill A mid-load, start a fresh C, kill B once C serves (C then carries the load).
  let next = 0;
  let stopAt = MAX_OPERATIONS;
  const kills: { name: string; at: number; inFlight: number; openConnections: number }[] = [];
  let freshReadyMs = 0;
  const waitForLoad = async (atLeast: number) => {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && (next < atLeast || inFlight < IN_FLIGHT_AT_KILL)) await sleep(2);
  };
  const killMidLoad = async (name: string, service: HearthService, port: number) => {
    kills.push({ name, at: now(), inFlight, openConnections: ingress.openTo.get(port) ?? 0 });
    await kill9(service);
  };
  const nemesis = (async () => {
    await waitForLoad(60);
    await killMidLoad('api-a', a.service, a.port);
    const c = await startApi('api-c');
    freshReadyMs = c.readyMs;
    ingress.backends.push(c.port);
    await waitForLoad(next + 40);
    await killMidLoad('api-b', b.service, b.port);
    stopAt = Math.min(MAX_OPERATIONS, next + OPERATIONS_AFTER);
  })().catch((err) => {
    stopAt = next; // the clients stop after their current operation, not at MAX_OPERATIONS
    throw err;
  });
  await Promise.all([
    nemesis,
    ...Array.from({ length: CLIENTS }, async () => {
      // Bounded: each client stops at stopAt (set once the nemesis is done) or MAX_OPERATIONS.
      while (next < stopAt) await run(operations[next++]);
    }),
  ]);
  const elapsed = now();
  const ran = operations.slice(0, next);
  const attempts = ran.flatMap((op) => op.answers);

  // Every answer is held to the document; each is a success, a refusal of the move, or a 503 retried.
  expect(attempts.filter(answered).filter((x) => !x.checked)).toEqual([]);
  for (const op of ran) {
    const allowed = op.purchase ? PURCHASE_REFUSALS : MOVE_REFUSALS;
    for (const x of op.answers.filter(answered)) {
      if (x.status === 200 || (x.status === 503 && x.body?.error === 'unavailable')) continue;
      expect({ key: op.key, status: x.status, error: allowed.has(x.body?.error) ? 'a refusal of the move' : x.body?.error }).toEqual({
        key: op.key,
        status: 409,
        error: 'a refusal of the move',
      });
    }
    // Every operation ended with an answer (the bounded retries sufficed).
    const last = op.answers[op.answers.length - 1];
    expect({ key: op.key, endedWithAnswer: answered(last) && last.status < 500 }).toEqual({ key: op.key, endedWithAnswer: true });
  }

  // Keys in doubt: some try was cut (no answer, or a 5xx). One more retry of those that acted answers the same outcome.
  const inDoubt = ran.filter((op) => op.answers.some((x) => !answered(x) || x.status >= 500));
  const confirm = new Map<string, any>();
  for (const op of inDoubt.filter((o) => o.answers.some((x) => answered(x) && x.status === 200))) {
    const reply = await call(base, 'POST', pathOf(op), { token: serverKey, body: op.body, headers: { 'Idempotency-Key': op.key } });
    expect({ key: op.key, status: reply.status, replayed: reply.body?.replayed }).toEqual({ key: op.key, status: 200, replayed: true });
    confirm.set(op.key, reply.body);
  }

  // Each acknowledged key: one effect, every 200 the same outcome, purchases granted once.
  const ledger = await LedgerCheck.read(h.db, players);
  const acknowledged = new Set<string>();
  const resolutions = { 'acted before the cut (retries replayed it)': 0, 'acted on a retry': 0, 'refused on a retry': 0 };
  for (const op of ran) {
    const done = op.answers.filter(answered).filter((x) => x.status === 200);
    if (inDoubt.includes(op)) {
      if (done.length === 0) resolutions['refused on a retry']++;
      else if (done.every((x) => x.body.replayed)) resolutions['acted before the cut (retries replayed it)']++;
      else resolutions['acted on a retry']++;
    }
    if (done.length === 0) continue;
    acknowledged.add(op.key);
    const acting = done.filter((x) => !x.body.replayed);
    expect({ key: op.key, acting: acting.length <= 1 }).toEqual({ key: op.key, acting: true });
    const replays = [...done.filter((x) => x.body.replayed).map((x) => x.body), ...(confirm.has(op.key) ? [confirm.get(op.key)] : [])];
    if (op.purchase) {
      // A replay answers the charges, replayed, and granted: null; the acting answer (when it was not cut) granted the items.
      const charges = acting.length ? acting[0].body.charges : replays[0].charges.map((c: any) => ({ ...c, replayed: false }));
      for (const r of replays) expect(r).toEqual({ replayed: true, charges: charges.map((c: any) => ({ ...c, replayed: true })), granted: null });
      if (acting.length) {
        expectGranted(op, acting[0].body.granted);
      }
      ledger.actedOnce(op, { charges });
      continue;
    }
    const first = acting.length ? acting[0].body : replays[0];
    for (const r of [...done.map((x) => x.body), ...replays])
      expect({ key: op.key, ...r, replayed: false }).toEqual({ key: op.key, ...first, replayed: false });
    ledger.actedOnce(op, first);
  }
  // No effect without an acknowledged key; every record has its answer (none stuck in flight by a
  // kill) and belongs to an acknowledged key (a key refused or never answered has no effect).
  ledger.everyEntryAnswered();
  const records = await h
    .db('idempotency_records')
    .where({ environment_id: (await h.db('environments').where({ name: 'alpha-live' }).first()).id })
    .whereLike('key', `kill-${seed}-%`);
  expect(records.filter((r) => r.status === null || r.body === null).map((r) => r.key)).toEqual([]);
  expect(records.map((r) => r.key).sort()).toEqual([...acknowledged].sort());
  await ledger.holdingsAreWhatWasBought(h.db, players);
  await ledger.balancesAreTheirLedgers(h.db, players, base, serverKey);

  // The run did what it claims: both kills cut requests in flight, and the fresh process served.
  for (const k of kills) expect({ kill: k.name, inFlight: k.inFlight >= IN_FLIGHT_AT_KILL }).toEqual({ kill: k.name, inFlight: true });
  expect(kills).toHaveLength(2);
  const failed = attempts.filter((x) => !answered(x) || x.status >= 500);
  expect(failed.length).toBeGreaterThan(0);
  expect(inDoubt.length).toBeGreaterThan(0);
  const cPort = ingress.backends[2];
  expect(ingress.connectionsTo.get(cPort) ?? 0).toBeGreaterThan(0);
  expect(acknowledged.size).toBeGreaterThan(ran.length / 3);

  // Figures (docs/reliability.md "Faults: kill -9").
  const errorsByKind = new Map<string, number>();
  for (const x of failed) {
    const kind = answered(x) ? `${x.status} ${x.body?.error ?? ''}`.trim() : x.error;
    errorsByKind.set(kind, (errorsByKind.get(kind) ?? 0) + 1);
  }
  const recovery = kills.map((k, i) => {
    // The first request sent after the kill that was acknowledged, and how long after the kill each
    // request it cut (failed after it, before the next kill: in flight on its process, or sent on a
    // kept-alive connection to it) had its answer (its next try's answer that was not a 5xx).
    const firstAck = Math.min(...attempts.filter((x) => answered(x) && x.status === 200 && x.at >= k.at).map((x) => x.end));
    const until = kills[i + 1]?.at ?? Infinity;
    const settled: number[] = [];
    const answeringTook: number[] = [];
    for (const op of ran) {
      for (const cut of op.answers.filter((x) => !answered(x) && x.end >= k.at && x.end < until)) {
        const answer = op.answers.find((x) => answered(x) && x.status < 500 && x.at >= cut.end);
        if (answer) {
          settled.push(answer.end - k.at);
          answeringTook.push(answer.end - answer.at);
        }
      }
    }
    return `${k.name} killed at ${k.at} ms with ${k.inFlight} requests in flight (${k.openConnections} connections open to it): first acknowledgement ${firstAck - k.at} ms after; the ${settled.length} requests it cut had their answer after ${spread(settled)} (the answering try itself took ${spread(answeringTook)})`;
  });
  const latencies = attempts.filter(answered).map((x) => x.end - x.at);
  const patternRetries = requests - retriesAfterFailure - ran.length;
  reportFigure(
    [
      `kill -9 seed ${seed}: ${ran.length} operations, ${requests} requests by ${CLIENTS} clients in ${elapsed} ms over 3 API processes (2 killed)`,
      `acknowledged ${acknowledged.size} keys (${ran.filter((op) => op.purchase && acknowledged.has(op.key)).length} purchases); refusals ${attempts.filter((x) => answered(x) && x.status === 409).length}`,
      `retried: ${retriesAfterFailure} after a failure, ${patternRetries} by the clients' own pattern (same key)`,
      `errors by kind: ${[...errorsByKind].map(([k, n]) => `${k} ${n}`).join(', ')}`,
      `keys in doubt ${inDoubt.length}: ${Object.entries(resolutions)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}; ${confirm.size} confirmed by one more retry`,
      ...recovery,
      `request latency through the ingress: ${spread(latencies)}`,
      `fresh process ready ${freshReadyMs} ms after its start`,
    ].join('\n'),
  );
  if (apis.services.some((s) => s.child.exitCode !== null && s.child.signalCode !== 'SIGKILL'))
    throw new Error(apis.services.map((s) => `${s.name}:\n${logTail(s.log)}`).join('\n'));
});
