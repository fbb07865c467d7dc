/**
 * Saves under concurrent writers (spec §4 "Player saves", docs/saves.md "Concurrency"): 20 requests at
 * once on one player's slots (new slots, rewrites with and without expectedVersion, deletes) never
 * pass the player's 5 MB, never lose an update (each slot's acknowledged versions are 1..n with none
 * answered twice, and the slot holds the value of the write answered n), and leave the usage counters
 * equal to the sum of the slots' sizes; the same near an environment's plan limit with two players.
 */
import { type Harness, startHarness } from '../support/harness';
import { call, signIn } from '../support/http';
import { standardManifests } from '../support/manifests';
import { PLAYER_LIMIT, gameWithSavesOf } from '../support/fixtures/saves';

let h: Harness;
const ENVIRONMENT_LIMIT = 3_000_000;
const BIG = 250 * 1024;

beforeAll(async () => {
  h = await startHarness({
    manifests: [...standardManifests(), ...gameWithSavesOf('tight', ENVIRONMENT_LIMIT)],
  });
});
afterAll(async () => {
  await h.close();
});

interface Player {
  token: string;
  id: string;
}
interface Ack {
  slot: string;
  version: number;
  tag: string;
}

const VERSIONED = ['v0', 'v1', 'v2', 'v3'];
const NEW_SLOTS = Array.from({ length: 24 }, (_, i) => `n${i}`);
/** The compact size of a value is its padding plus a fixed envelope, so sizes vary with `bytes`. */
const value = (tag: string, bytes: number) => ({ tag, pad: 'x'.repeat(bytes) });

async function put(p: Player, key: string, body: unknown) {
  return call(h.base, 'PUT', `/players/me/data/${key}`, { token: p.token, body });
}

/**
 * `writers` requests at a time per player, each doing `steps` operations in turn: make a new slot
 * (expectedVersion 0), rewrite a versioned slot without expectedVersion, read-then-rewrite it with
 * expectedVersion, delete a new slot. Answers every acknowledged write of a versioned slot and the
 * count of each answer status; anything but the expected answers fails the test.
 */
async function runWriters(players: Player[], writers: number, steps: number) {
  const acks = new Map<Player, Ack[]>(players.map((p) => [p, []]));
  const statuses: Record<string, number> = {};
  const count = (status: number, error?: string) => {
    const name = error ? `${status} ${error}` : `${status}`;
    statuses[name] = (statuses[name] ?? 0) + 1;
  };
  const writer = async (p: Player, w: number) => {
    for (let step = 0; step < steps; step += 1) {
      const tag = `${p.id}/${w}/${step}`;
      // Of every six operations: two make a new slot, two rewrite, one rewrites with expectedVersion, one deletes.
      const op = (w + step) % 6;
      if (op === 0 || op === 1 || op === 5) {
        const slot = NEW_SLOTS[(w * 5 + step * 3) % NEW_SLOTS.length];
        if (op === 5) {
          const r = await call(h.base, 'DELETE', `/players/me/data/${slot}`, { token: p.token });
          expect(r.status).toBe(204);
          count(r.status);
          continue;
        }
        const r = await put(p, slot, { data: value(tag, BIG), expectedVersion: 0 });
        count(r.status, r.body?.error);
        if (r.status === 201) expect(r.body.version).toBe(1);
        else expect([409, 403]).toContain(r.status);
        continue;
      }
      const slot = VERSIONED[(w + step) % VERSIONED.length];
      const bytes = 1024 + ((w * 37 + step * 101) % 240) * 1024;
      let body: { data: unknown; expectedVersion?: number } = { data: value(tag, bytes) };
      if (op === 4) {
        const current = await call(h.base, 'GET', `/players/me/data/${slot}`, { token: p.token });
        body = { ...body, expectedVersion: current.status === 200 ? current.body.version : 0 };
      }
      const r = await put(p, slot, body);
      count(r.status, r.body?.error);
      if (r.status === 200 || r.status === 201) acks.get(p)!.push({ slot, version: r.body.version, tag });
      else expect([409, 403]).toContain(r.status);
    }
  };
  await Promise.all(players.flatMap((p) => Array.from({ length: writers }, (_, w) => writer(p, w))));
  return { acks, statuses };
}

/** Samples the committed totals while writers run; answers the largest seen. */
function sampleTotals(environmentId: number, playerIds: string[]) {
  let running = true;
  const largest = { environment: 0, environmentCounter: 0, player: 0, playerCounter: 0 };
  const done = (async () => {
    while (running) {
      const [{ sum }] = await h.db('player_saves').where({ environment_id: environmentId }).sum({ sum: 'size_bytes' });
      const env = await h.db('environments').where({ id: environmentId }).first('player_save_bytes');
      largest.environment = Math.max(largest.environment, Number(sum ?? 0));
      largest.environmentCounter = Math.max(largest.environmentCounter, Number(env.player_save_bytes));
      for (const id of playerIds) {
        const [{ sum: own }] = await h.db('player_saves').where({ player_id: id }).sum({ sum: 'size_bytes' });
        const player = await h.db('players').where({ id }).first('save_bytes');
        largest.player = Math.max(largest.player, Number(own ?? 0));
        largest.playerCounter = Math.max(largest.playerCounter, Number(player.save_bytes));
      }
    }
  })();
  return async () => {
    running = false;
    await done;
    return largest;
  };
}

/** Every versioned slot: acknowledged versions are exactly 1..n, none twice, and the slot holds write n's value. */
async function expectNoLostUpdate(p: Player, acks: Ack[]) {
  for (const slot of VERSIONED) {
    const mine = acks.filter((a) => a.slot === slot).sort((a, b) => a.version - b.version);
    const stored = await call(h.base, 'GET', `/players/me/data/${slot}`, { token: p.token });
    if (mine.length === 0) {
      expect(stored.status).toBe(404);
      continue;
    }
    expect(mine.map((a) => a.version)).toEqual(mine.map((_, i) => i + 1));
    expect(stored.body.version).toBe(mine.length);
    expect(stored.body.data.tag).toBe(mine[mine.length - 1].tag);
  }
}

async function expectCountersExact(environmentId: number, players: Player[]) {
  for (const p of players) {
    const [{ sum }] = await h.db('player_saves').where({ player_id: p.id }).sum({ sum: 'size_bytes' });
    const row = await h.db('players').where({ id: p.id }).first('save_bytes');
    expect(Number(row.save_bytes)).toBe(Number(sum ?? 0));
    const listed = await call(h.base, 'GET', '/players/me/data?limit=200', { token: p.token });
    expect(listed.body.totalBytes).toBe(Number(sum ?? 0));
    expect(listed.body.items.reduce((n: number, i: { sizeBytes: number }) => n + i.sizeBytes, 0)).toBe(Number(sum ?? 0));
  }
  const [{ sum }] = await h.db('player_saves').where({ environment_id: environmentId }).sum({ sum: 'size_bytes' });
  const env = await h.db('environments').where({ id: environmentId }).first('player_save_bytes');
  expect(Number(env.player_save_bytes)).toBe(Number(sum ?? 0));
}

async function newPlayer(appKey: string, keyName: string, subject: string): Promise<Player> {
  const tokens = await signIn(h.base, h.serverKeys[keyName], subject);
  return { token: tokens.accessToken, id: tokens.player.id };
}

test("20 writers on one player's slots: never past 5 MB, no lost or doubled version, counters equal the slots", async () => {
  const env = (await h.core.environments.byAppKey('alpha-live'))!;
  const p = await newPlayer('alpha-live', 'alpha-live-key', 'sv-race');
  // 19 slots of 250 KB (4.9 MB) first, so the writers press on the quota.
  for (const slot of NEW_SLOTS.slice(0, 19)) expect((await put(p, slot, { data: value('seed', BIG) })).status).toBe(201);

  const stopSampling = sampleTotals(env.id, [p.id]);
  const { acks, statuses } = await runWriters([p], 20, 8);
  const largest = await stopSampling();

  expect(largest.player).toBeLessThanOrEqual(PLAYER_LIMIT);
  expect(largest.playerCounter).toBeLessThanOrEqual(PLAYER_LIMIT);
  // Every path was taken: new slots, conflicts and quota refusals.
  expect(statuses['201']).toBeGreaterThan(0);
  expect(statuses['200']).toBeGreaterThan(0);
  expect(statuses['409 conflict']).toBeGreaterThan(0);
  expect(statuses['403 quota-exceeded']).toBeGreaterThan(0);
  await expectNoLostUpdate(p, acks.get(p)!);
  await expectCountersExact(env.id, [p]);
}, 60_000);

test("two players' writers near the environment's plan limit: never past it, counters equal the slots", async () => {
  const env = (await h.core.environments.byAppKey('tight-live'))!;
  const players = [await newPlayer('tight-live', 'tight-live-key', 'sv-env-race-a'), await newPlayer('tight-live', 'tight-live-key', 'sv-env-race-b')];
  // 2.5 MB of the environment's 3,000,000 bytes first.
  for (const p of players) for (const slot of NEW_SLOTS.slice(0, 5)) expect((await put(p, slot, { data: value('seed', BIG) })).status).toBe(201);

  const stopSampling = sampleTotals(
    env.id,
    players.map((p) => p.id),
  );
  const { acks, statuses } = await runWriters(players, 10, 8);
  const largest = await stopSampling();

  expect(largest.environment).toBeLessThanOrEqual(ENVIRONMENT_LIMIT);
  expect(largest.environmentCounter).toBeLessThanOrEqual(ENVIRONMENT_LIMIT);
  expect(statuses['403 quota-exceeded']).toBeGreaterThan(0);
  expect(statuses['201']).toBeGreaterThan(0);
  for (const p of players) await expectNoLostUpdate(p, acks.get(p)!);
  await expectCountersExact(env.id, players);
}, 60_000);
