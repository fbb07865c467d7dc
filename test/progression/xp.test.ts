/**
 * XP (spec §2 XP entry, §4 Progression; docs/progression.md "XP"), over real HTTP: tracks and their
 * totals, the default track, an Idempotency-Key required and a retry answering the first total, every
 * refusal changing nothing, the 2^53-1 ceiling, and concurrent retried additions (Jepsen-style): every
 * total is the sum of the additions acknowledged, each key added once.
 */
import { random, sendAsPatterned, type Operation } from '../economy/jepsen-model';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { projectWithout, standardManifests } from '../support/manifests';

jest.setTimeout(60_000);

let h: Harness;
let key: string;
let seq = 0;
const newKey = () => `xp-${Date.now()}-${++seq}`;

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), ...projectWithout('noprog', 'progression')] });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const add = (playerId: string, body: unknown, opts: { token?: string; idem?: string | null } = {}) =>
  call(h.base, 'POST', `/players/${playerId}/xp`, {
    token: opts.token ?? key,
    body,
    headers: opts.idem === null ? {} : { 'Idempotency-Key': opts.idem ?? newKey() },
  });
const rows = async (playerId: string) => (await h.db('player_xp').where({ player_id: playerId }).orderBy('track')).map((r) => [r.track, Number(r.xp)]);

describe('XP', () => {
  test('adds to a track (default `default`), answers its new total; GET lists the tracks by name with either credential', async () => {
    const p = await signIn(h.base, key, 'xp-basic');
    expect((await add(p.player.id, { amount: 100 })).body).toEqual({ track: 'default', xp: 100 });
    expect((await add(p.player.id, { amount: 50 })).body).toEqual({ track: 'default', xp: 150 });
    expect((await add(p.player.id, { amount: 7, track: 'crafting' })).body).toEqual({ track: 'crafting', xp: 7 });
    const mine = await call(h.base, 'GET', '/players/me/xp', { token: p.accessToken });
    expect(mine.body).toEqual({
      items: [
        { track: 'crafting', xp: 7 },
        { track: 'default', xp: 150 },
      ],
      next: null,
    });
    const page = await call(h.base, 'GET', `/players/${p.player.id}/xp?limit=1`, { token: key });
    expect(page.body.items).toEqual([{ track: 'crafting', xp: 7 }]);
    const rest = await call(h.base, 'GET', `/players/${p.player.id}/xp?limit=1&cursor=${encodeURIComponent(page.body.next)}`, { token: key });
    expect(rest.body).toEqual({ items: [{ track: 'default', xp: 150 }], next: null });
  });

  test('a retry under the same Idempotency-Key answers the first total and adds nothing; the key for another body is idempotency-conflict', async () => {
    const p = await signIn(h.base, key, 'xp-idem');
    const idem = newKey();
    const first = await add(p.player.id, { amount: 10 }, { idem });
    await add(p.player.id, { amount: 5 });
    const again = await add(p.player.id, { amount: 10 }, { idem });
    expect(again.body).toEqual(first.body);
    expect(again.body).toEqual({ track: 'default', xp: 10 });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expectError(await add(p.player.id, { amount: 11 }, { idem }), 409, 'idempotency-conflict');
    expect(await rows(p.player.id)).toEqual([['default', 15]]);
  });

  test('refusals change nothing: no key, bad amounts and tracks, unknown fields, a player token, unknown player, another environment, the service off; the 2^53-1 ceiling', async () => {
    const p = await signIn(h.base, key, 'xp-refusals');
    await add(p.player.id, { amount: 1 });
    expectError(await add(p.player.id, { amount: 1 }, { idem: null }), 400, 'invalid-request', 'header.Idempotency-Key');
    for (const amount of [0, -1, 1.5, 1_000_000_001, '3']) expectError(await add(p.player.id, { amount }), 400, 'invalid-request', 'body.amount');
    expectError(await add(p.player.id, {}), 400, 'invalid-request', 'body.amount');
    expectError(await add(p.player.id, { amount: 1, track: 'two words' }), 400, 'invalid-request', 'body.track');
    expectError(await add(p.player.id, { amount: 1, level: 3 }), 400, 'invalid-request', 'body.level');
    expectError(await add('me', { amount: 1 }, { token: p.accessToken }), 403, 'forbidden');
    expectError(await add('nobody', { amount: 1 }), 404, 'not-found');
    expectError(await add(p.player.id, { amount: 1 }, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    expectError(await call(h.base, 'GET', `/players/${p.player.id}/xp`, { token: p.accessToken }), 403, 'forbidden');
    expectError(await call(h.base, 'GET', '/players/nobody/xp', { token: key }), 404, 'not-found');
    const q = await signIn(h.base, h.serverKeys['noprog-live-key'], 'xp-noprog');
    expectError(await add(q.player.id, { amount: 1 }, { token: h.serverKeys['noprog-live-key'] }), 403, 'service-disabled');
    expect(await rows(p.player.id)).toEqual([['default', 1]]);
    // Just under the ceiling: one more than fits is refused and adds nothing.
    await h
      .db('player_xp')
      .where({ player_id: p.player.id })
      .update({ xp: Number.MAX_SAFE_INTEGER - 5 });
    expectError(await add(p.player.id, { amount: 6 }), 400, 'invalid-request', 'body.amount');
    expect((await add(p.player.id, { amount: 5 })).body).toEqual({ track: 'default', xp: Number.MAX_SAFE_INTEGER });
  });

  test('concurrent additions retried at random: each total is the sum of the keys acknowledged, each added once, every retry answering the first total', async () => {
    const seed = Number(process.env.JEPSEN_SEED ?? Date.now() % 1_000_000);
    const rand = random(seed);
    const players = [(await signIn(h.base, key, `xp-j-${seed}-0`)).player.id, (await signIn(h.base, key, `xp-j-${seed}-1`)).player.id];
    type Answer = { status: number; body: any };
    const ops: (Operation<Answer> & { track: string; amount: number })[] = Array.from({ length: 240 }, (_, i) => {
      const amount = 1 + Math.floor(rand() * 1000);
      const track = rand() < 0.5 ? 'default' : 'pvp';
      return {
        key: `xp-j-${seed}-${i}`,
        playerId: players[Math.floor(rand() * 2)],
        currencyKey: '',
        kind: 'credit',
        change: amount,
        track,
        amount,
        body: { amount, track },
        pattern: (['once', 'race', 'later', 'both'] as const)[Math.floor(rand() * 4)],
        answers: [],
      };
    });
    const send = async (op: Operation<Answer>) => {
      const reply = await add(op.playerId, op.body, { idem: op.key });
      op.answers.push({ status: reply.status, body: reply.body });
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < ops.length) await sendAsPatterned(ops[next++], send, rand);
      }),
    );
    for (const op of ops) {
      expect(op.answers.map((a) => a.status)).toEqual(op.answers.map(() => 200));
      for (const a of op.answers) expect(a.body).toEqual(op.answers[0].body);
    }
    for (const playerId of players) {
      const expected = new Map<string, number>();
      for (const op of ops.filter((o) => o.playerId === playerId)) expected.set(op.track, (expected.get(op.track) ?? 0) + op.amount);
      expect(Object.fromEntries(await rows(playerId))).toEqual(Object.fromEntries(expected));
      // The totals answered for a track are distinct: no two keys were answered the same running total.
      const totals = ops.filter((o) => o.playerId === playerId).map((o) => `${o.track}:${o.answers[0].body.xp}`);
      expect(new Set(totals).size).toBe(totals.length);
    }
  });
});

test('deleting the player takes their XP', async () => {
  const p = await signIn(h.base, key, 'xp-leaver');
  await add(p.player.id, { amount: 3 });
  expect((await call(h.base, 'DELETE', `/players/${p.player.id}`, { token: key })).status).toBe(204);
  expect(await rows(p.player.id)).toEqual([]);
});
