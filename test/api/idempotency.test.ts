/**
 * Idempotency-Key (spec §4, §8; docs/api-conventions.md): a retry answers what the first answered and does nothing
 * again, even when the duplicates arrive at once. This file holds the pipeline's own keeping of the
 * record (`runIdempotent`, for a route whose handler does not keep it), through test-only routes with
 * a real effect (a row in a table this file creates): no route of the spec uses that mode today, since
 * every move of value keeps its record in the money engine's one statement (its keys are held by
 * test/economy and test/items, and on production routes by test/api/transactions.test.ts).
 */
import { Type } from '@sinclair/typebox';
import { Refusal } from '@hearth/core';
import { defineRoute } from '@hearth/api';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';

const EffectBody = Type.Object({ label: Type.String({ minLength: 1, maxLength: 60 }), amount: Type.Optional(Type.Integer()) }, { additionalProperties: false });

let flakyCalls = 0;

function effectRoute(operationId: string, path: string, idempotency: 'required' | 'optional') {
  return defineRoute({
    operationId,
    method: 'POST',
    path,
    summary: 'Records an effect, for tests',
    tag: 'reference',
    credential: 'either',
    body: EffectBody,
    idempotency,
    success: { status: 201, description: 'The effect' },
    refusals: ['conflict'],
    handler: async (ctx) => {
      // `flaky` is refused the first time only, as a handler refusing on the state of the moment would be.
      if (ctx.body.label === 'flaky' && flakyCalls++ === 0) throw new Refusal('conflict', 'Refused on purpose.');
      const [row] = await ctx
        .db('test_effects')
        .insert({
          environment_id: ctx.env.id,
          caller: ctx.principal.kind === 'player' ? ctx.principal.playerId : 'server',
          label: ctx.body.label,
          amount: ctx.body.amount ?? 1,
        })
        .returning(['id']);
      // A little work inside the transaction widens the window in which duplicates overlap.
      await ctx.db.raw('SELECT pg_sleep(0.02)');
      return { status: 201, body: { effectId: Number(row.id), label: ctx.body.label, at: new Date().toISOString() } };
    },
  });
}

const requiredRoute = effectRoute('testEffectRequired', '/test/effects', 'required');
const optionalRoute = effectRoute('testEffectOptional', '/test/effects-optional', 'optional');

let h: Harness;
let server: string;

beforeAll(async () => {
  h = await startHarness({ extraRoutes: [requiredRoute, optionalRoute] });
  server = h.serverKeys['alpha-live-key'];
  await h.db.raw(`CREATE TABLE test_effects (
    id bigserial PRIMARY KEY,
    environment_id bigint NOT NULL,
    caller text NOT NULL,
    label text NOT NULL,
    amount integer NOT NULL
  )`);
});
afterAll(async () => {
  await h.close();
});

async function effectsLabelled(label: string): Promise<{ environment_id: string; caller: string; amount: number }[]> {
  return h.db('test_effects').where({ label }).orderBy('id');
}

function post(path: string, token: string, body: unknown, key?: string) {
  return call(h.base, 'POST', path, { token, body, headers: key === undefined ? {} : { 'Idempotency-Key': key } });
}

test('a retry answers what the first answered, with the same status and body, and acts once', async () => {
  const first = await post('/test/effects', server, { label: 'once' }, 'key-once');
  expect(first.status).toBe(201);
  expect(first.body).toEqual({ effectId: expect.any(Number), label: 'once', at: expect.any(String) });
  expect(first.headers.get('idempotent-replayed')).toBe('false');

  for (let i = 0; i < 3; i++) {
    const retry = await post('/test/effects', server, { label: 'once' }, 'key-once');
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  }
  expect(await effectsLabelled('once')).toHaveLength(1);
});

test('the same body with its fields in another order is the same request', async () => {
  const first = await call(h.base, 'POST', '/test/effects', {
    token: server,
    rawBody: '{"label":"order","amount":2}',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'key-order' },
  });
  expect(first.status).toBe(201);
  const again = await call(h.base, 'POST', '/test/effects', {
    token: server,
    rawBody: '{ "amount": 2, "label": "order" }',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'key-order' },
  });
  expect(again.status).toBe(201);
  expect(again.body).toEqual(first.body);
  expect(await effectsLabelled('order')).toHaveLength(1);
});

test('the same key for a different request is 409 idempotency-conflict and acts not', async () => {
  const first = await post('/test/effects', server, { label: 'conflict-a' }, 'key-conflict');
  expect(first.status).toBe(201);

  expectError(await post('/test/effects', server, { label: 'conflict-b' }, 'key-conflict'), 409, 'idempotency-conflict');
  expectError(await post('/test/effects', server, { label: 'conflict-a', amount: 5 }, 'key-conflict'), 409, 'idempotency-conflict');
  // Another route with the same key and body is another request too.
  expectError(await post('/test/effects-optional', server, { label: 'conflict-a' }, 'key-conflict'), 409, 'idempotency-conflict');

  expect(await effectsLabelled('conflict-b')).toHaveLength(0);
  expect(await effectsLabelled('conflict-a')).toHaveLength(1);
  // The first answer still replays.
  expect((await post('/test/effects', server, { label: 'conflict-a' }, 'key-conflict')).body).toEqual(first.body);
});

test('a missing key where required is 400 naming header.Idempotency-Key, and acts not', async () => {
  expectError(await post('/test/effects', server, { label: 'no-key' }), 400, 'invalid-request', 'header.Idempotency-Key');
  expectError(await post('/test/effects', server, { label: 'no-key' }, ''), 400, 'invalid-request', 'header.Idempotency-Key');
  expect(await effectsLabelled('no-key')).toHaveLength(0);
});

test('where optional, no key acts every time and a key makes retries replay', async () => {
  expect((await post('/test/effects-optional', server, { label: 'optional-free' })).status).toBe(201);
  expect((await post('/test/effects-optional', server, { label: 'optional-free' })).status).toBe(201);
  expect(await effectsLabelled('optional-free')).toHaveLength(2);

  const first = await post('/test/effects-optional', server, { label: 'optional-keyed' }, 'opt-key');
  const again = await post('/test/effects-optional', server, { label: 'optional-keyed' }, 'opt-key');
  expect(again.status).toBe(201);
  expect(again.body).toEqual(first.body);
  expect(await effectsLabelled('optional-keyed')).toHaveLength(1);
});

test('where optional, a key sent empty or blank is a malformed key (400), not a request without one', async () => {
  // The fuzzer's find: an empty Idempotency-Key was taken as none, so the request acted unguarded.
  for (const key of ['', '   ']) {
    expectError(await post('/test/effects-optional', server, { label: 'optional-blank' }, key), 400, 'invalid-request', 'header.Idempotency-Key');
  }
  expect(await effectsLabelled('optional-blank')).toHaveLength(0);
});

test('a key must be 1-128 printable ASCII characters', async () => {
  const longest = '~'.repeat(128);
  expect((await post('/test/effects', server, { label: 'key-128' }, longest)).status).toBe(201);
  expect((await post('/test/effects', server, { label: 'key-printable' }, ' !"#$%&()*+,-./09:;<=>?@AZ[\\]^_`az{|}~')).status).toBe(201);

  for (const key of ['k'.repeat(129), 'tab\there', 'caf\u00e9']) {
    const reply = await post('/test/effects', server, { label: 'bad-key' }, key);
    expectError(reply, 400, 'invalid-request', 'header.Idempotency-Key');
  }
  expect(await effectsLabelled('bad-key')).toHaveLength(0);
  expect(await effectsLabelled('key-128')).toHaveLength(1);
});

test('20 concurrent duplicates act exactly once and all answer the same', async () => {
  const replies = await Promise.all(Array.from({ length: 20 }, () => post('/test/effects', server, { label: 'stampede', amount: 7 }, 'key-stampede')));
  expect(replies.map((r) => r.status)).toEqual(Array(20).fill(201));
  for (const reply of replies) expect(reply.body).toEqual(replies[0].body);
  expect(replies.filter((r) => r.headers.get('idempotent-replayed') === 'false')).toHaveLength(1);
  expect(await effectsLabelled('stampede')).toHaveLength(1);
});

test('concurrent requests with one key and different bodies: one acts, the others conflict', async () => {
  const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => post('/test/effects', server, { label: `race-${i}` }, 'key-race')));
  const acted = replies.filter((r) => r.status === 201);
  const conflicts = replies.filter((r) => r.status === 409);
  expect(acted.length + conflicts.length).toBe(10);
  expect(new Set(acted.map((r) => r.body.label)).size).toBe(1);
  for (const c of conflicts) expectError(c, 409, 'idempotency-conflict');
  const rows = await h.db('test_effects').where('label', 'like', 'race-%');
  expect(rows).toHaveLength(1);
});

test('a refused first attempt leaves the key free: the retry acts', async () => {
  expectError(await post('/test/effects', server, { label: 'flaky' }, 'key-after-refusal'), 409, 'conflict');
  expect(await h.db('idempotency_records').where({ key: 'key-after-refusal' }).first()).toBeUndefined();
  expect(await effectsLabelled('flaky')).toHaveLength(0);

  const retry = await post('/test/effects', server, { label: 'flaky' }, 'key-after-refusal');
  expect(retry.status).toBe(201);
  expect(retry.headers.get('idempotent-replayed')).toBe('false');
  expect(await effectsLabelled('flaky')).toHaveLength(1);
  expect((await post('/test/effects', server, { label: 'flaky' }, 'key-after-refusal')).body).toEqual(retry.body);
});

test('keys are scoped per environment and per player', async () => {
  const body = { label: 'scoped' };
  const live = await post('/test/effects', server, body, 'shared-key');
  const test_ = await post('/test/effects', h.serverKeys['alpha-test-key'], body, 'shared-key');
  const ada = await signIn(h.base, server, 'idem-ada');
  const bob = await signIn(h.base, server, 'idem-bob');
  const adaReply = await post('/test/effects', ada.accessToken, body, 'shared-key');
  const bobReply = await post('/test/effects', bob.accessToken, body, 'shared-key');
  for (const r of [live, test_, adaReply, bobReply]) {
    expect(r.status).toBe(201);
    expect(r.headers.get('idempotent-replayed')).toBe('false');
  }
  expect(new Set([live, test_, adaReply, bobReply].map((r) => r.body.effectId)).size).toBe(4);

  // Each caller's retry replays its own answer.
  expect((await post('/test/effects', ada.accessToken, body, 'shared-key')).body).toEqual(adaReply.body);
  expect((await post('/test/effects', bob.accessToken, body, 'shared-key')).body).toEqual(bobReply.body);
  expect((await post('/test/effects', h.serverKeys['alpha-test-key'], body, 'shared-key')).body).toEqual(test_.body);

  const rows = await effectsLabelled('scoped');
  expect(rows.map((r) => r.caller).sort()).toEqual([ada.player.id, bob.player.id, 'server', 'server'].sort());
  expect(new Set(rows.map((r) => r.environment_id)).size).toBe(2);
});
