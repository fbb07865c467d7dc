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
import { type Harness, startHarness } from '../support/harness';
import { call, signIn } from '../support/http';
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
} from './jepsen-model';
import { reportFigure } from '../support/figures';

jest.setTimeout(60_000);

const OPERATIONS = Number(process.env.JEPSEN_OPERATIONS ?? 700);
const CLIENTS = 24;
const PLAYERS = 3;

type Answer = { status: number; body: any; checked: boolean };

describe('currency moves under concurrency and retries', () => {
  let h: Harness;
  let key: string;
  const seed = Number(process.env.JEPSEN_SEED ?? Date.now() % 1_000_000);

  beforeAll(async () => {
    h = await startHarness({ manifests: jepsenManifests() });
    key = h.serverKeys['alpha-live-key'];
  });
  afterAll(async () => {
    await h.close();
  });

  test(`every balance is its ledger, within its limits, and every key acted once (seed ${seed})`, async () => {
    const rand = random(seed);
    const players: string[] = [];
    for (let i = 0; i < PLAYERS; i++) players.push((await signIn(h.base, key, `jepsen-${seed}-${i}`)).player.id);
    const operations = makeOperations<Answer>(rand, players, OPERATIONS, `jepsen-${seed}`);

    const send = async (op: Operation<Answer>) => {
      const reply = await call(h.base, 'POST', pathOf(op), { token: key, body: op.body, headers: { 'Idempotency-Key': op.key } });
      // Asserted once every client is done: a client that threw here would leave the others running.
      op.answers.push({ status: reply.status, body: reply.body, checked: reply.contract.checked });
    };
    const run = (op: Operation<Answer>) => sendAsPatterned(op, send, rand);

    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < operations.length) await run(operations[next++]);
      }),
    );
    const elapsed = Date.now() - started;
    const sent = operations.reduce((n, op) => n + op.answers.length, 0);

    expect(operations.flatMap((op) => op.answers).filter((a) => !a.checked)).toEqual([]);
    // Each answer is a Movement (a Purchase) or one of the refusals a move (a purchase) may earn; never a fault.
    for (const op of operations) {
      const allowed = op.purchase ? PURCHASE_REFUSALS : MOVE_REFUSALS;
      for (const a of op.answers) {
        if (a.status !== 200)
          expect({ key: op.key, status: a.status, error: allowed.has(a.body?.error) ? 'a refusal of the move' : a.body?.error }).toEqual({
            key: op.key,
            status: 409,
            error: 'a refusal of the move',
          });
      }
    }

    // Every key acted at most once: its 200s are one Movement, at most one of them not replayed.
    const ledger = await LedgerCheck.read(h.db, players);
    let actedOperations = 0;
    for (const op of operations) {
      const done = op.answers.filter((a) => a.status === 200);
      if (done.length === 0) continue;
      actedOperations++;
      if (op.purchase) {
        // The one that acted answered the Purchase; every retry its charges, replayed, and granted: null.
        const acting = done.filter((a) => !a.body.replayed);
        expect({ key: op.key, acting: acting.length }).toEqual({ key: op.key, acting: 1 });
        const first = acting[0].body;
        for (const a of done)
          if (a.body.replayed) expect(a.body).toEqual({ replayed: true, charges: first.charges.map((c: any) => ({ ...c, replayed: true })), granted: null });
        expectGranted(op, first.granted);
        ledger.actedOnce(op, first);
        continue;
      }
      const first = done.find((a) => !a.body.replayed) ?? done[0];
      expect(done.filter((a) => !a.body.replayed).length).toBeLessThanOrEqual(1);
      for (const a of done) expect({ ...a.body, replayed: false }).toEqual({ ...first.body, replayed: false });
      ledger.actedOnce(op, first.body);
    }
    ledger.everyEntryAnswered();
    await ledger.holdingsAreWhatWasBought(h.db, players);
    await ledger.balancesAreTheirLedgers(h.db, players, h.base, key);
    const bought = ledger.bought;

    // The run did exercise what it claims to: contention, refusals, races and replays.
    const statuses = operations.flatMap((op) => op.answers);
    expect(statuses.filter((a) => a.status === 200 && a.body.replayed).length).toBeGreaterThan(OPERATIONS / 4);
    expect(statuses.filter((a) => a.status === 409).length).toBeGreaterThan(0);
    expect(actedOperations).toBeGreaterThan(OPERATIONS / 3);
    expect(bought.size).toBeGreaterThan(0);
    // Cards were bought too, as cards and into stacks.
    expect([...bought.keys()].filter((held) => held.includes('|card:')).length).toBeGreaterThan(0);
    expect(operations.filter((op) => op.purchase?.card && op.answers.some((a) => a.status === 200)).map((op) => op.purchase?.card)).toEqual(
      expect.arrayContaining(['instance', 'stack']),
    );
    const purchases = operations.filter((op) => op.purchase);
    reportFigure(
      `jepsen seed ${seed}: ${OPERATIONS} operations, ${sent} requests by ${CLIENTS} clients in ${elapsed} ms; ${actedOperations} acted (${purchases.filter((op) => op.answers.some((a) => a.status === 200)).length} of ${purchases.length} purchases, ${statuses.filter((a) => a.body?.error === 'owned-limit').length} owned-limit), ${statuses.filter((a) => a.status === 409).length} refusals`,
    );
  });
});
