/**
 * Cursor tampering (issue 13; OWASP API8/API1 as it meets pagination): spec §4's cursors are signed
 * and bound to their list, its environment and its filters (apps/core/src/pagination.ts). A cursor
 * carried to another player's list, another environment, another filter, or edited in any way is
 * 400 `invalid-request` naming `query.cursor`, never a page of rows from elsewhere.
 */
import { randomBytes } from 'node:crypto';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn, type Reply } from '../support/http';
import { gameConfig, standardManifests } from '../support/manifests';
import { reportFigure } from '../support/figures';

jest.setTimeout(60_000);

let h: Harness;
let live: string;
let test_: string;
let alice: string;
let bob: string;
let carol: string; // alpha-test

const values = (n: number, groupName?: string) =>
  Array.from({ length: n }, (_, i) => ({
    key: `${groupName ?? 'v'}${String(i).padStart(2, '0')}`,
    type: 'int',
    value: i,
    ...(groupName ? { groupName } : {}),
  }));

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      gameConfig('live-config', { environment: 'alpha-live', values: [...values(4, 'g1'), ...values(4, 'g2')] }),
      gameConfig('test-config', { environment: 'alpha-test', values: [...values(4, 'g1')] }),
    ],
  });
  live = h.serverKeys['alpha-live-key'];
  test_ = h.serverKeys['alpha-test-key'];
  alice = (await signIn(h.base, live, 'cursor-alice')).player.id;
  bob = (await signIn(h.base, live, 'cursor-bob')).player.id;
  carol = (await signIn(h.base, test_, 'cursor-carol')).player.id;
  for (const [player, key] of [
    [alice, live],
    [bob, live],
    [carol, test_],
  ] as const) {
    for (const slot of ['s1', 's2', 's3']) {
      expect((await call(h.base, 'PUT', `/players/${player}/data/${slot}`, { token: key, body: { data: { owner: player, slot } } })).status).toBe(201);
    }
  }
});
afterAll(async () => {
  await h.close();
});

async function firstCursor(path: string, token: string): Promise<string> {
  const page = await call(h.base, 'GET', `${path}${path.includes('?') ? '&' : '?'}limit=1`, { token });
  expect(page.status).toBe(200);
  expect(page.body.next).toEqual(expect.any(String));
  return page.body.next;
}

function expectCursorRefused(reply: Reply): void {
  expectError(reply, 400, 'invalid-request', 'query.cursor');
  expect(reply.body.items).toBeUndefined();
}

const withCursor = (path: string, cursor: string) => `${path}${path.includes('?') ? '&' : '?'}limit=1&cursor=${encodeURIComponent(cursor)}`;

test('a cursor works on its own list (the control)', async () => {
  const cursor = await firstCursor(`/players/${alice}/data`, live);
  const next = await call(h.base, 'GET', withCursor(`/players/${alice}/data`, cursor), { token: live });
  expect(next.status).toBe(200);
  expect(next.body.items.map((i: { key: string }) => i.key)).toEqual(['s2']);
});

test("a cursor of alice's saves on bob's saves: refused, none of bob's rows", async () => {
  const cursor = await firstCursor(`/players/${alice}/data`, live);
  expectCursorRefused(await call(h.base, 'GET', withCursor(`/players/${bob}/data`, cursor), { token: live }));
});

test('a cursor of a list in alpha-live used in alpha-test (same list, same positions): refused', async () => {
  const cursor = await firstCursor('/config/values?groupName=g1', live);
  expectCursorRefused(await call(h.base, 'GET', withCursor('/config/values?groupName=g1', cursor), { token: test_ }));
  const saves = await firstCursor(`/players/${alice}/data`, live);
  expectCursorRefused(await call(h.base, 'GET', withCursor(`/players/${carol}/data`, saves), { token: test_ }));
});

test('a cursor made under one filter, used under another or none: refused', async () => {
  const cursor = await firstCursor('/config/values?groupName=g1', live);
  expectCursorRefused(await call(h.base, 'GET', withCursor('/config/values?groupName=g2', cursor), { token: live }));
  expectCursorRefused(await call(h.base, 'GET', withCursor('/config/values', cursor), { token: live }));
});

test('a cursor of one kind of list on another kind (config values on saves, saves on config tables): refused', async () => {
  const config = await firstCursor('/config/values', live);
  expectCursorRefused(await call(h.base, 'GET', withCursor(`/players/${alice}/data`, config), { token: live }));
  const saves = await firstCursor(`/players/${alice}/data`, live);
  expectCursorRefused(await call(h.base, 'GET', withCursor('/config/tables', saves), { token: live }));
});

describe('edited cursors', () => {
  let cursor: string;
  beforeAll(async () => {
    cursor = await firstCursor(`/players/${alice}/data`, live);
  });
  const list = () => `/players/${alice}/data`;

  test('every single bit flipped, one at a time, in the position and in the signature: each refused', async () => {
    const bytes = Buffer.from(cursor, 'latin1');
    let refused = 0;
    for (let i = 0; i < bytes.length; i++) {
      for (const bit of [0x01, 0x20]) {
        const edited = Buffer.from(bytes);
        edited[i] ^= bit;
        const text = edited.toString('latin1');
        if (text === cursor) continue;
        // Base64url ignores nothing, but a flip can land on the padding-free last character's unused bits: still a different text, still refused.
        const reply = await call(h.base, 'GET', withCursor(list(), text), { token: live });
        expect({ i, bit, status: reply.status, error: reply.body?.error }).toEqual({ i, bit, status: 400, error: 'invalid-request' });
        refused++;
      }
    }
    reportFigure(`cursor-tampering: ${refused} bit-flipped cursors of ${cursor.length} characters, all refused`);
  });

  test('truncated at every length, and with characters added: each refused', async () => {
    for (let n = 0; n < cursor.length; n++) {
      const reply = await call(h.base, 'GET', withCursor(list(), cursor.slice(0, n)), { token: live });
      expect({ n, status: reply.status }).toEqual({ n, status: 400 });
    }
    // Padding, a space and characters base64 decoding skips decode to the same signature: still not the text the list made.
    for (const extra of ['A', '.', '=', '==', ' ', '.x', '!', '\n']) {
      const reply = await call(h.base, 'GET', withCursor(list(), cursor + extra), { token: live });
      expect({ extra, status: reply.status }).toEqual({ extra, status: 400 });
      expectCursorRefused(reply);
    }
  });

  test('a position re-encoded by hand with the signature kept (forging another start): refused', async () => {
    const [body, mac] = cursor.split('.');
    const position = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    const forged = Buffer.from(JSON.stringify(typeof position === 'string' ? '' : Array.isArray(position) ? position.map(() => '') : {})).toString('base64url');
    expectCursorRefused(await call(h.base, 'GET', withCursor(list(), `${forged}.${mac}`), { token: live }));
  });

  test('base64 garbage, JSON garbage, SQL and huge cursors: each refused', async () => {
    const garbage = [
      randomBytes(48).toString('base64url'),
      `${randomBytes(24).toString('base64url')}.${randomBytes(24).toString('base64url')}`,
      `${Buffer.from('{"$ne":null}').toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`,
      `${Buffer.from("' OR 1=1 --").toString('base64url')}.${cursor.split('.')[1]}`,
      '.',
      '..',
      '%00',
      'null',
      '[]',
      `${'A'.repeat(4000)}.${'B'.repeat(32)}`,
    ];
    for (const text of garbage) expectCursorRefused(await call(h.base, 'GET', withCursor(list(), text), { token: live }));
  });
});
