/**
 * The conventions every route shares (spec §4, §7, §8 body sizes): strict input, body limits before
 * reading, routing, the error shape, request ids, pagination, conditional reads, review and services.
 */
import { Type } from '@sinclair/typebox';
import { defineRoute, routeTable } from '@hearth/api';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { chunked, rawRequest } from '../support/raw-http';
import { NAMESPACE, gameConfig, project } from '../support/manifests';
import { mintLicenceKey } from '@hearth/core/licence';
import { organisationNamed } from '@hearth/core/tenancy';
import { dashboardMember, dashboardSettings, mintDashboardToken } from '../support/dashboards';

const boomRoute = defineRoute({
  operationId: 'testBoom',
  method: 'GET',
  path: '/test/boom',
  summary: 'A handler fault, for tests',
  tag: 'reference',
  credential: 'none',
  success: { status: 200, description: 'never' },
  refusals: [],
  handler: async () => {
    throw new Error('boom: secret internals');
  },
});

/**
 * A conditional read whose ETag is the test's `version` (per environment): its handler counts its
 * runs, so the test sees when the kept answer stood in for it.
 */
const answered = { runs: 0, version: 1 };
const Versioned = Type.Object({ version: Type.Integer(), environment: Type.Integer(), run: Type.Integer() }, { additionalProperties: false });
const versionedRoute = defineRoute({
  operationId: 'testVersioned',
  method: 'GET',
  path: '/test/versioned',
  summary: 'A conditional read, for tests',
  tag: 'reference',
  credential: 'server',
  etag: async (ctx) => `"v${answered.version}-e${ctx.env.id}"`,
  success: { status: 200, description: 'The version', schema: Versioned },
  refusals: [],
  handler: async (ctx) => ({ body: { version: answered.version, environment: ctx.env.id, run: ++answered.runs } }),
});

/**
 * A conditional read whose handler reads its body and its ETag from one snapshot and names that ETag,
 * as the content routes do; `moveBeforeRead` moves the content between the pipeline's ETag and the read.
 */
const snapshot = { runs: 0, version: 1, moveBeforeRead: false };
const snapshotEtag = (envId: number) => `"s${snapshot.version}-e${envId}"`;
const snapshotRoute = defineRoute({
  operationId: 'testSnapshotVersioned',
  method: 'GET',
  path: '/test/versioned-snapshot',
  summary: 'A conditional read answering the ETag of what it read, for tests',
  tag: 'reference',
  credential: 'server',
  etag: async (ctx) => snapshotEtag(ctx.env.id),
  success: { status: 200, description: 'The version', schema: Versioned },
  refusals: [],
  handler: async (ctx) => {
    if (snapshot.moveBeforeRead) {
      snapshot.moveBeforeRead = false;
      snapshot.version++;
    }
    return { body: { version: snapshot.version, environment: ctx.env.id, run: ++snapshot.runs }, headers: { ETag: snapshotEtag(ctx.env.id) } };
  },
});

let h: Harness;
let server: string;
let player: Awaited<ReturnType<typeof signIn>>;

beforeAll(async () => {
  h = await startHarness({ extraRoutes: [boomRoute, versionedRoute, snapshotRoute] });
  server = h.serverKeys['alpha-live-key'];
  player = await signIn(h.base, server, 'pipeline-1', 'Original');
});
afterAll(async () => {
  await h.close();
});

async function displayNameOf(token: string): Promise<string | null> {
  const me = await call(h.base, 'GET', '/players/me', { token });
  expect(me.status).toBe(200);
  return me.body.displayName;
}

/** JSON padded with trailing spaces to exactly `bytes` bytes (still valid JSON). */
function padded(value: unknown, bytes: number): string {
  const json = JSON.stringify(value);
  return json + ' '.repeat(bytes - Buffer.byteLength(json));
}

describe('strict input (spec §4)', () => {
  test('an unknown body field is 400 naming body.<field>, and nothing changes', async () => {
    const reply = await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: { displayName: 'Changed', colour: 'red' } });
    expectError(reply, 400, 'invalid-request', 'body.colour');
    expect(await displayNameOf(player.accessToken)).toBe('Original');
  });

  test('an unknown query parameter is 400 naming query.<name>, on routes with and without a query', async () => {
    expectError(await call(h.base, 'GET', '/flags?colour=red', { token: server }), 400, 'invalid-request', 'query.colour');
    expectError(await call(h.base, 'GET', '/players/me?colour=red', { token: player.accessToken }), 400, 'invalid-request', 'query.colour');
  });

  test('a malformed path parameter is 400 naming path.<name>', async () => {
    expectError(await call(h.base, 'GET', `/players/${'p'.repeat(65)}`, { token: server }), 400, 'invalid-request', 'path.playerId');
    expectError(await call(h.base, 'GET', '/config/tables/a%20b', { token: server }), 400, 'invalid-request', 'path.key');
    expectError(await call(h.base, 'GET', '/config/tables/50%25', { token: server }), 400, 'invalid-request', 'path.key');
  });

  test('a body that is not JSON is 400 naming body', async () => {
    const reply = await call(h.base, 'PATCH', '/players/me', {
      token: player.accessToken,
      rawBody: '{"displayName": "Broken"',
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(reply, 400, 'invalid-request', 'body');
    expect(await displayNameOf(player.accessToken)).toBe('Original');
  });

  test('JSON that is not an object is 400 naming body', async () => {
    for (const raw of ['[]', '"Ada"', '42', 'null']) {
      const reply = await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, rawBody: raw, headers: { 'Content-Type': 'application/json' } });
      expectError(reply, 400, 'invalid-request', 'body');
    }
  });

  test('JSON sent without Content-Type application/json is 400 naming body', async () => {
    const json = JSON.stringify({ displayName: 'NoType' });
    // fetch labels a string text/plain; a Buffer goes without any Content-Type.
    expectError(await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, rawBody: json }), 400, 'invalid-request', 'body');
    expectError(await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, rawBody: Buffer.from(json) }), 400, 'invalid-request', 'body');
    expectError(
      await call(h.base, 'PATCH', '/players/me', {
        token: player.accessToken,
        rawBody: json,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      }),
      400,
      'invalid-request',
      'body',
    );
    expect(await displayNameOf(player.accessToken)).toBe('Original');
    // With its charset parameter it is still JSON.
    const ok = await call(h.base, 'PATCH', '/players/me', {
      token: player.accessToken,
      rawBody: json,
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.displayName).toBe('NoType');
    await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: { displayName: 'Original' } });
  });

  test('a missing required field is 400 naming it; an empty body counts as {}', async () => {
    expectError(await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: {} }), 400, 'invalid-request', 'body.displayName');
    expectError(await call(h.base, 'PATCH', '/players/me', { token: player.accessToken }), 400, 'invalid-request', 'body.displayName');
    expectError(await call(h.base, 'POST', '/auth/server', { token: server, body: { displayName: 'Nobody' } }), 400, 'invalid-request', 'body.subject');
  });

  test('a field of the wrong type is 400 naming it (bodies are not coerced)', async () => {
    expectError(
      await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: { displayName: 42 } }),
      400,
      'invalid-request',
      'body.displayName',
    );
    expectError(await call(h.base, 'POST', '/auth/server', { token: server, body: { subject: 7 } }), 400, 'invalid-request', 'body.subject');
  });

  test('trimmed strings are stored trimmed, and a blank one is too short after trimming', async () => {
    const reply = await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: { displayName: '  Ada  ' } });
    expect(reply.status).toBe(200);
    expect(reply.body.displayName).toBe('Ada');
    expect(await displayNameOf(player.accessToken)).toBe('Ada');

    expectError(
      await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: { displayName: '   ' } }),
      400,
      'invalid-request',
      'body.displayName',
    );
    expectError(
      await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: { displayName: '\t\n ' } }),
      400,
      'invalid-request',
      'body.displayName',
    );
    expect(await displayNameOf(player.accessToken)).toBe('Ada');

    // 40 characters after trimming pass even when the padding makes the raw string longer.
    const forty = 'n'.repeat(40);
    const padded40 = await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: { displayName: `   ${forty}   ` } });
    expect(padded40.status).toBe(200);
    expect(padded40.body.displayName).toBe(forty);
  });

  test('lengths count characters, not bytes or UTF-16 units', async () => {
    for (const char of ['é', '漢', '😀']) {
      const forty = char.repeat(40);
      const ok = await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: { displayName: forty } });
      expect(ok.status).toBe(200);
      expect(ok.body.displayName).toBe(forty);
      expect(await displayNameOf(player.accessToken)).toBe(forty);

      const refused = await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: { displayName: char.repeat(41) } });
      expectError(refused, 400, 'invalid-request', 'body.displayName');
      expect(await displayNameOf(player.accessToken)).toBe(forty);
    }
    await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: { displayName: 'Original' } });
  });
});

describe('body limits, before reading (spec §8)', () => {
  test('a body over 16 KB at POST /auth/server is 413 with details.limit 16384; exactly 16 KB is read', async () => {
    const over = await call(h.base, 'POST', '/auth/server', {
      token: server,
      rawBody: padded({ subject: 'too-big' }, 16_385),
      headers: { 'Content-Type': 'application/json' },
    });
    const body = expectError(over, 413, 'payload-too-large');
    expect(body.details).toEqual({ limit: 16_384 });
    expect(await h.db('player_identities').where({ subject: 'too-big' }).first()).toBeUndefined();

    const atLimit = await call(h.base, 'POST', '/auth/server', {
      token: server,
      rawBody: padded({ subject: 'just-fits' }, 16_384),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(atLimit.status).toBe(201);
  });

  test('the default limit is 64 KB (PATCH /players/me)', async () => {
    const over = await call(h.base, 'PATCH', '/players/me', {
      token: player.accessToken,
      rawBody: padded({ displayName: 'Huge' }, 65_537),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(expectError(over, 413, 'payload-too-large').details).toEqual({ limit: 65_536 });
    expect(await displayNameOf(player.accessToken)).toBe('Original');

    const atLimit = await call(h.base, 'PATCH', '/players/me', {
      token: player.accessToken,
      rawBody: padded({ displayName: 'Original' }, 65_536),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(atLimit.status).toBe(200);
  });

  test('a declared length over the limit is refused without waiting for the body', async () => {
    // Declares 1 MB, sends 20 bytes and waits: only a server that refuses on the header answers.
    const reply = await rawRequest(
      h.base,
      'PATCH',
      '/players/me',
      { Authorization: `Bearer ${player.accessToken}`, 'Content-Type': 'application/json', 'Content-Length': 1_048_576 },
      async (req) => {
        req.write('{"displayName": "aaa');
      },
    );
    expect(expectError(reply, 413, 'payload-too-large').details).toEqual({ limit: 65_536 });
  });

  test('a chunked body (no Content-Length) over the limit is 413 too', async () => {
    const reply = await rawRequest(
      h.base,
      'POST',
      '/auth/server',
      { Authorization: `Bearer ${server}`, 'Content-Type': 'application/json' },
      chunked(padded({ subject: 'chunked-too-big' }, 16_385)),
    );
    expect(expectError(reply, 413, 'payload-too-large').details).toEqual({ limit: 16_384 });
    expect(await h.db('player_identities').where({ subject: 'chunked-too-big' }).first()).toBeUndefined();

    const patch = await rawRequest(
      h.base,
      'PATCH',
      '/players/me',
      { Authorization: `Bearer ${player.accessToken}`, 'Content-Type': 'application/json' },
      chunked(padded({ displayName: 'Chunky' }, 65_537), 16),
    );
    expect(expectError(patch, 413, 'payload-too-large').details).toEqual({ limit: 65_536 });
    expect(await displayNameOf(player.accessToken)).toBe('Original');
  });

  test('a chunked body within the limit is read and acted on', async () => {
    const reply = await rawRequest(
      h.base,
      'POST',
      '/auth/server',
      { Authorization: `Bearer ${server}`, 'Content-Type': 'application/json' },
      chunked(padded({ subject: 'chunked-fits', displayName: 'Chunk' }, 16_384)),
    );
    expect(reply.status).toBe(201);
    expect(reply.body.player.displayName).toBe('Chunk');
  });
});

describe('routing, error shape and request ids (spec §4, §7)', () => {
  test('trailing slashes make no difference', async () => {
    const me = await call(h.base, 'GET', '/players/me/', { token: player.accessToken });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(player.player.id);
    expect((await call(h.base, 'GET', '/flags/', { token: server })).status).toBe(200);
    expect((await call(h.base, 'GET', '/openapi.json/')).status).toBe(200);
  });

  test('an unknown path is 404 not-found; so is a known path with a method it does not take', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['GET', '/players/me/nope'],
      ['DELETE', '/flags'],
      ['POST', '/players/me'],
      ['PUT', '/config/values'],
    ]) {
      const reply = await call(h.base, method, path, { token: server });
      expect(Object.keys(reply.body).sort()).toEqual(['error', 'message']);
      expectError(reply, 404, 'not-found');
    }
    // Outside /v1 too.
    expectError(await call(h.base.replace(/\/v1$/, ''), 'GET', '/players/me', { token: player.accessToken }), 404, 'not-found');
  });

  test('every refusal is exactly { error, message, details? }', async () => {
    const replies = [
      await call(h.base, 'GET', '/players/me'),
      await call(h.base, 'GET', '/players/me', { token: 'hsk_nope_nope' }),
      await call(h.base, 'DELETE', '/players/me', { token: player.accessToken }),
      await call(h.base, 'GET', '/flags?limit=0', { token: server }),
      await call(h.base, 'GET', '/config/tables/none', { token: server }),
    ];
    expect(replies.map((r) => r.status)).toEqual([401, 401, 403, 400, 404]);
    for (const reply of replies) {
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      const keys = Object.keys(reply.body).sort();
      expect([
        ['error', 'message'],
        ['details', 'error', 'message'],
      ]).toContainEqual(keys);
      expect(typeof reply.body.error).toBe('string');
      expect(typeof reply.body.message).toBe('string');
      if ('details' in reply.body) expect(typeof reply.body.details).toBe('object');
    }
  });

  test('a handler fault answers 500 without internals, with X-RateLimit-* (every answer carries them), and echoes the request id', async () => {
    const reply = await call(h.base, 'GET', '/test/boom', { headers: { 'X-Request-Id': 'fault-42' } });
    expect(reply.status).toBe(500);
    expect(Object.keys(reply.body).sort()).toEqual(['error', 'message']);
    expect(reply.text).not.toMatch(/boom|secret|stack|at .*\.ts/);
    expect(reply.headers.get('x-request-id')).toBe('fault-42');
    expect(reply.headers.get('x-ratelimit-limit')).toBe('600');
    expect(Number(reply.headers.get('x-ratelimit-remaining'))).toBeLessThan(600);
    expect(Number(reply.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(1);
  });

  test('X-Request-Id is echoed when given and generated when absent or unusable', async () => {
    const given = await call(h.base, 'GET', '/players/me', { token: player.accessToken, headers: { 'X-Request-Id': 'abc-123.XYZ' } });
    expect(given.headers.get('x-request-id')).toBe('abc-123.XYZ');
    const refused = await call(h.base, 'GET', '/nope', { headers: { 'X-Request-Id': 'on-a-refusal' } });
    expect(refused.headers.get('x-request-id')).toBe('on-a-refusal');

    const a = (await call(h.base, 'GET', '/players/me', { token: player.accessToken })).headers.get('x-request-id');
    const b = (await call(h.base, 'GET', '/players/me', { token: player.accessToken })).headers.get('x-request-id');
    expect(a).toMatch(/^\S{8,}$/);
    expect(b).toMatch(/^\S{8,}$/);
    expect(a).not.toBe(b);

    const tooLong = 'r'.repeat(129);
    const replaced = (await call(h.base, 'GET', '/players/me', { token: player.accessToken, headers: { 'X-Request-Id': tooLong } })).headers.get(
      'x-request-id',
    );
    expect(replaced).toMatch(/^\S{8,128}$/);
    expect(replaced).not.toBe(tooLong);
  });
});

describe('pagination (spec §4)', () => {
  const flagNames = ['fig', 'apple', 'date', 'cherry', 'grape', 'banana', 'elder'];
  const valueKeys = Array.from({ length: 55 }, (_, i) => `v${String(i).padStart(3, '0')}`);

  beforeAll(async () => {
    await h.apply([
      gameConfig('alpha-live-config', {
        environment: 'alpha-live',
        values: valueKeys.map((key, i) => ({ key, type: 'int', value: i, groupName: i % 2 === 0 ? 'even' : 'odd' })),
        flags: flagNames.map((name, i) => ({ name, enabled: i % 2 === 0 })),
      }),
      gameConfig('alpha-test-config', { environment: 'alpha-test', flags: flagNames.map((name) => ({ name, enabled: true })) }),
    ]);
  });

  async function page(path: string, token = server) {
    const reply = await call(h.base, 'GET', path, { token });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(['items', 'next']);
    return reply.body as { items: any[]; next: string | null };
  }

  test('limit must be an integer 1-200', async () => {
    for (const limit of ['0', '201', '-1', '1.5', 'abc', '', '3&limit=4']) {
      expectError(await call(h.base, 'GET', `/flags?limit=${limit}`, { token: server }), 400, 'invalid-request', 'query.limit');
    }
    expect((await page('/flags?limit=200')).items).toHaveLength(7);
    expect((await page('/flags?limit=1')).items).toHaveLength(1);
  });

  test('the default page size is 50 and next is null on the last page', async () => {
    const first = await page('/config/values');
    expect(first.items).toHaveLength(50);
    expect(first.next).toEqual(expect.any(String));
    const second = await page(`/config/values?cursor=${encodeURIComponent(first.next!)}`);
    expect(second.items).toHaveLength(5);
    expect(second.next).toBeNull();
    expect([...first.items, ...second.items].map((v) => v.key)).toEqual(valueKeys);

    // A list that fits one page has next null at once, even when it fills the page exactly.
    expect((await page('/flags')).next).toBeNull();
    expect((await page('/flags?limit=7')).next).toBeNull();
  });

  test('walking the pages with cursors gives every item once, in order', async () => {
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const p: { items: any[]; next: string | null } = await page(`/flags?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      sizes.push(p.items.length);
      seen.push(...p.items.map((f) => f.name));
      cursor = p.next;
      if (cursor === null) break;
    }
    expect(cursor).toBeNull();
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual([...flagNames].sort());
    const flags = await page('/flags');
    expect(flags.items).toEqual([...flagNames].sort().map((name) => ({ name, isEnabled: flagNames.indexOf(name) % 2 === 0 })));
  });

  test('a filtered list pages within its filter', async () => {
    const first = await page('/config/values?groupName=even&limit=20');
    const second = await page(`/config/values?groupName=even&limit=20&cursor=${encodeURIComponent(first.next!)}`);
    expect(second.next).toBeNull();
    const keys = [...first.items, ...second.items].map((v) => v.key);
    expect(keys).toEqual(valueKeys.filter((_, i) => i % 2 === 0));
  });

  test('a forged or edited cursor is 400 naming query.cursor', async () => {
    const { next } = await page('/flags?limit=3');
    const [body, mac] = next!.split('.');
    const flipped = mac.slice(0, -1) + (mac.endsWith('A') ? 'B' : 'A');
    const otherPosition = Buffer.from(JSON.stringify('a')).toString('base64url');
    const cursors = [
      `${body}.${flipped}`,
      `${otherPosition}.${mac}`,
      body,
      `.${mac}`,
      `${body}.`,
      'not-a-cursor',
      Buffer.from(JSON.stringify('cherry')).toString('base64url'),
      'c'.repeat(2049),
    ];
    for (const cursor of cursors) {
      expectError(await call(h.base, 'GET', `/flags?limit=3&cursor=${encodeURIComponent(cursor)}`, { token: server }), 400, 'invalid-request', 'query.cursor');
    }
    expectError(await call(h.base, 'GET', '/flags?cursor=', { token: server }), 400, 'invalid-request', 'query.cursor');
  });

  test('a cursor of another list, another environment or other filters is 400 naming query.cursor', async () => {
    const values = await page('/config/values?limit=3');
    expectError(
      await call(h.base, 'GET', `/flags?limit=3&cursor=${encodeURIComponent(values.next!)}`, { token: server }),
      400,
      'invalid-request',
      'query.cursor',
    );
    expectError(
      await call(h.base, 'GET', `/config/tables?cursor=${encodeURIComponent(values.next!)}`, { token: server }),
      400,
      'invalid-request',
      'query.cursor',
    );

    const otherEnv = await page('/flags?limit=3', h.serverKeys['alpha-test-key']);
    expect(otherEnv.next).toEqual(expect.any(String));
    expectError(
      await call(h.base, 'GET', `/flags?limit=3&cursor=${encodeURIComponent(otherEnv.next!)}`, { token: server }),
      400,
      'invalid-request',
      'query.cursor',
    );

    const even = await page('/config/values?groupName=even&limit=2');
    for (const filter of ['groupName=odd&', '']) {
      const reply = await call(h.base, 'GET', `/config/values?${filter}limit=2&cursor=${encodeURIComponent(even.next!)}`, { token: server });
      expectError(reply, 400, 'invalid-request', 'query.cursor');
    }
    expect(await page(`/config/values?groupName=even&limit=2&cursor=${encodeURIComponent(even.next!)}`)).toEqual(
      expect.objectContaining({ items: expect.any(Array) }),
    );
  });

  test('a cursor also works for a player token of the same environment (it belongs to the list, not the caller)', async () => {
    const first = await page('/flags?limit=3');
    const second = await page(`/flags?limit=3&cursor=${encodeURIComponent(first.next!)}`, player.accessToken);
    expect(second.items.map((f) => f.name)).toEqual(['date', 'elder', 'fig']);
  });
});

describe('ETag and If-None-Match (spec §4)', () => {
  let testKey: string;
  const config = (bananaEnabled: boolean) =>
    gameConfig('alpha-test-etag', {
      environment: 'alpha-test',
      values: [{ key: 'motd', type: 'string', value: 'Welcome' }],
      flags: [
        { name: 'zz-apple', enabled: true },
        { name: 'zz-banana', enabled: bananaEnabled },
      ],
    });

  beforeAll(async () => {
    testKey = h.serverKeys['alpha-test-key'];
    await h.apply([config(false)]);
  });

  test('a current ETag answers 304 with no body and the ETag', async () => {
    const first = await call(h.base, 'GET', '/flags', { token: testKey });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^".+"$/);

    const again = await call(h.base, 'GET', '/flags', { token: testKey, headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);

    // The weak form and a list that holds it match too; another tag does not.
    expect((await call(h.base, 'GET', '/flags', { token: testKey, headers: { 'If-None-Match': `W/${etag}` } })).status).toBe(304);
    expect((await call(h.base, 'GET', '/flags', { token: testKey, headers: { 'If-None-Match': `"other", ${etag}` } })).status).toBe(304);
    const other = await call(h.base, 'GET', '/flags', { token: testKey, headers: { 'If-None-Match': '"other"' } });
    expect(other.status).toBe(200);
    expect(other.body).toEqual(first.body);

    // A player token of the environment reads the same content under the same tag.
    const p = await signIn(h.base, testKey, 'etag-player');
    expect((await call(h.base, 'GET', '/flags', { token: p.accessToken, headers: { 'If-None-Match': etag } })).status).toBe(304);

    // Each read has its own tag: the values list is not the flags list.
    const values = await call(h.base, 'GET', '/config/values', { token: testKey });
    expect(values.headers.get('etag')).not.toBe(etag);
    expect((await call(h.base, 'GET', '/config/values', { token: testKey, headers: { 'If-None-Match': values.headers.get('etag')! } })).status).toBe(304);
  });

  test('re-applying identical content keeps the ETag; changed content gets the new content and a new ETag', async () => {
    const first = await call(h.base, 'GET', '/flags', { token: testKey });
    const etag = first.headers.get('etag')!;

    await h.apply([config(false)]);
    const same = await call(h.base, 'GET', '/flags', { token: testKey, headers: { 'If-None-Match': etag } });
    expect(same.status).toBe(304);
    expect(same.headers.get('etag')).toBe(etag);

    await h.apply([config(true)]);
    const changed = await call(h.base, 'GET', '/flags', { token: testKey, headers: { 'If-None-Match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.body.items.filter((f: { name: string }) => f.name.startsWith('zz-'))).toEqual([
      { name: 'zz-apple', isEnabled: true },
      { name: 'zz-banana', isEnabled: true },
    ]);
    const newEtag = changed.headers.get('etag')!;
    expect(newEtag).not.toBe(etag);
    expect((await call(h.base, 'GET', '/flags', { token: testKey, headers: { 'If-None-Match': newEtag } })).status).toBe(304);
  });
});

describe('a conditional read is serialized once per ETag, not per request', () => {
  test('the same ETag answers the bytes of its first answer without running the handler; another environment or version runs it again', async () => {
    const read = (token: string) => call(h.base, 'GET', '/test/versioned', { token });
    const runsBefore = answered.runs;
    const first = await read(server);
    expect(first.status).toBe(200);
    expect(first.body.run).toBe(runsBefore + 1);
    const again = await read(server);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(again.headers.get('content-length')).toBe(String(Buffer.byteLength(first.text)));
    expect(answered.runs).toBe(runsBefore + 1);
    // HEAD takes the kept answer too: its headers, no body.
    const head = await call(h.base, 'HEAD', '/test/versioned', { token: server });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(first.text)));

    // Another environment: its own answer.
    const other = await read(h.serverKeys['alpha-test-key']);
    expect(other.body.environment).not.toBe(first.body.environment);
    expect(answered.runs).toBe(runsBefore + 2);

    // A new version (new ETags): the handler runs again, once.
    answered.version++;
    const changed = await read(server);
    expect(changed.body).toEqual({ version: first.body.version + 1, environment: first.body.environment, run: runsBefore + 3 });
    expect((await read(server)).text).toBe(changed.text);
    expect(answered.runs).toBe(runsBefore + 3);
    // A refusal is never kept: without a credential, still 401.
    expectError(await call(h.base, 'GET', '/test/versioned'), 401, 'unauthorized');
  });

  test('a handler that names the ETag it read with is kept under that ETag, also when the content moved since the pipeline read its own', async () => {
    const read = () => call(h.base, 'GET', '/test/versioned-snapshot', { token: server });
    const first = await read();
    expect(first.status).toBe(200);
    const runs = snapshot.runs;
    expect((await read()).text).toBe(first.text);
    expect(snapshot.runs).toBe(runs);

    // The content moves between the pipeline's ETag (the old version) and the handler's read: the answer
    // is the new version under the new ETag, and is kept under that one, never under the old.
    snapshot.version++;
    snapshot.moveBeforeRead = true;
    const moved = await read();
    expect(moved.body.version).toBe(first.body.version + 2);
    expect(moved.headers.get('etag')).toBe(snapshotEtag(first.body.environment));
    expect(snapshot.runs).toBe(runs + 1);
    const again = await read();
    expect(again.text).toBe(moved.text);
    expect(again.headers.get('etag')).toBe(moved.headers.get('etag'));
    expect(snapshot.runs).toBe(runs + 1);
  });
});

describe('review and service switches (spec §4)', () => {
  let pendingPlayer: { accessToken: string; refreshToken: string };
  let pendingDashboard: string;

  beforeAll(async () => {
    // A player of the pending project, made directly: its sign-in routes are closed by review.
    const env = (await h.core.environments.byAppKey('pending-live'))!;
    const { player: made, tokensValidAfter } = await h.core.players.signIn(h.db, env, 'server', 'pending-player');
    pendingPlayer = await h.core.tokens.issue(made.id, env.appKey, tokensValidAfter);
    // A member of its custom dashboard, for the routes that take only a dashboard token.
    await h.apply([
      project('pending', { review: 'pending', dashboard: dashboardSettings('https://idp.example') }),
      dashboardMember('pending-member', {
        project: 'pending',
        subject: 'someone',
        environments: [{ environment: 'pending-live', permissions: ['open_dashboard', 'view_players'] }],
      }),
    ]);
    pendingDashboard = await mintDashboardToken(h.core, h.db, 'pending-member', 'pending-live');
  });

  test('every route acting for an environment answers 403 project-not-approved while the project awaits review', async () => {
    // The licence routes act for an organisation, in no environment: they stay open (the test below).
    const routes = routeTable().filter((r) => r.credential !== 'none' && r.credential !== 'licence');
    expect(routes.length).toBeGreaterThan(5);
    for (const route of routes) {
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name) => (name === 'playerId' ? 'me' : 'x'));
      const token =
        route.credential === 'player' ? pendingPlayer.accessToken : route.credential === 'dashboard' ? pendingDashboard : h.serverKeys['pending-live-key'];
      const reply = await call(h.base, route.method, path, { token, body: route.body ? {} : undefined });
      expect({ route: `${route.method} ${route.path}`, status: reply.status, error: reply.body?.error }).toEqual({
        route: `${route.method} ${route.path}`,
        status: 403,
        error: 'project-not-approved',
      });
    }
    // Both kinds of credential are held to it.
    expectError(await call(h.base, 'GET', '/players/me', { token: pendingPlayer.accessToken }), 403, 'project-not-approved');
  });

  test('the sign-ins that name a pending environment are refused too', async () => {
    expectError(
      await call(h.base, 'POST', '/auth/server', { token: h.serverKeys['pending-live-key'], body: { subject: 'nope' } }),
      403,
      'project-not-approved',
    );
    expectError(await call(h.base, 'POST', '/auth/idp', { body: { appKey: 'pending-live', idToken: 'x.y.z' } }), 403, 'project-not-approved');
    expectError(await call(h.base, 'POST', '/auth/refresh', { body: { refreshToken: pendingPlayer.refreshToken } }), 403, 'project-not-approved');
    expect(await h.db('player_identities').where({ subject: 'nope' }).first()).toBeUndefined();
  });

  test('the OpenAPI document, the key sets and the licence routes stay open', async () => {
    expect((await call(h.base, 'GET', '/openapi.json')).status).toBe(200);
    for (const path of ['/.well-known/jwks.json', '/licence/jwks.json']) {
      const jwks = await call(h.base, 'GET', path);
      expect(jwks.status).toBe(200);
      expect(jwks.body.keys.length).toBeGreaterThan(0);
    }
    const pending = await organisationNamed(h.db, NAMESPACE, 'pending');
    const licence = (await mintLicenceKey(h.db, pending!.id, 'pending-plugin', ['plugin'])).key;
    const body = { machineId: 'pending-machine', product: 'plugin', version: '1' };
    expect((await call(h.base, 'POST', '/licence/activate', { token: licence, body })).status).toBe(200);
    expect((await call(h.base, 'POST', '/licence/check', { token: licence, body: { machineId: body.machineId } })).status).toBe(200);
    expect((await call(h.base, 'POST', '/licence/release', { token: licence, body: { machineId: body.machineId } })).status).toBe(204);
  });

  test('config and flags answer 403 service-disabled where the project has them off; players routes always work', async () => {
    const plain = h.serverKeys['plain-live-key'];
    for (const path of ['/flags', '/config/values', '/config/tables', '/config/tables/x']) {
      expectError(await call(h.base, 'GET', path, { token: plain }), 403, 'service-disabled');
    }
    const p = await signIn(h.base, plain, 'plain-player', 'Plain');
    expectError(await call(h.base, 'GET', '/flags', { token: p.accessToken }), 403, 'service-disabled');
    expect((await call(h.base, 'GET', '/players/me', { token: p.accessToken })).status).toBe(200);
    expect((await call(h.base, 'GET', `/players/${p.player.id}`, { token: plain })).status).toBe(200);
    const renamed = await call(h.base, 'PATCH', '/players/me', { token: p.accessToken, body: { displayName: 'Plainer' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.displayName).toBe('Plainer');
  });
});
