/**
 * OWASP API3:2023, broken object property level authorization: mass assignment and excessive data
 * exposure.
 *
 * Mass assignment, walking the route table: for every route with a JSON body, a good request (the
 * one test/security/samples.ts makes, which succeeds as it is) is sent again with one more field:
 * an unknown one, each read-only field of the things the API keeps (ids, versions, times, balances,
 * owners, roles...), and each field of the route's own answer that its body does not take. Each is
 * refused 400 `invalid-request` naming that field, and nothing changed: the player's state read
 * through the API, and the row count of every table, are as before.
 *
 * Exposure: every body and every answer schema of the table is closed (`additionalProperties:
 * false` on every object but the documented free-form game data), and test/support/http.ts holds
 * every answer any test receives to those schemas; no answer schema has a field named like a secret
 * except the tokens of the sign-in answers; and the secrets themselves (server keys, their stored
 * hashes, the master key, the signing key's private part) appear in no answer this run received.
 */
import type { AnyRoute } from '@hearth/api';
import { call, expectError, type Reply } from '../support/http';
import { LICENCE_SIGNING_KEYS } from '@hearth/core/licence';
import { loadSigningKeys } from '@hearth/core/auth';
import { type Actor, ROUTES, type World, idem, routeName, startWorld } from './world';
import { SAMPLES } from './samples';
import { reportFigure } from '../support/figures';

jest.setTimeout(60_000);

type Json = Record<string, any>;

/** Fields a client must never set: what the API keeps of players, saves, sessions, money and items. */
const READ_ONLY: Record<string, unknown> = {
  id: 'x1',
  playerId: 'someone-else',
  environment: 'alpha-test',
  environmentId: 1,
  appKey: 'alpha-test',
  version: 99,
  createdAt: '2020-01-01T00:00:00.000Z',
  updatedAt: '2020-01-01T00:00:00.000Z',
  balance: 1_000_000,
  balanceAfter: 1_000_000,
  amount: 1_000_000,
  owner: 'someone-else',
  ownerId: 'someone-else',
  isHost: true,
  isAdmin: true,
  role: 'admin',
  permissions: ['*'],
  sizeBytes: 0,
  transactionId: '1',
  replayed: true,
  consumedAt: null,
  unlockedAt: '2020-01-01T00:00:00.000Z',
  acceptedAt: '2020-01-01T00:00:00.000Z',
};
const UNKNOWN = { 'hearth-unknown-field': 1 };

const bodyRoutes = ROUTES.filter((r) => r.body && (r.bodyMode ?? 'json') === 'json');
const props = (schema: unknown): string[] => Object.keys(((schema ?? {}) as Json).properties ?? {});
let w: World;
let ran = 0;
/** Every answer's text this file received, searched for secrets at the end. */
const seen: string[] = [];

beforeAll(async () => {
  w = await startWorld();
});
afterAll(async () => {
  reportFigure(`api3: ${bodyRoutes.length} routes with a body, ${ran} requests with a field too many`);
  await w?.h.close();
});

async function send(route: AnyRoute, path: string, token: string | undefined, body: unknown): Promise<Reply> {
  const headers = route.idempotency && route.idempotency !== 'none' ? idem() : undefined;
  const reply = await call(w.h.base, route.method, path, { token, body, headers });
  seen.push(reply.text);
  return reply;
}

async function rowCounts(): Promise<Record<string, number>> {
  const tables = await w.h.db.raw(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'knex_%' ORDER BY tablename`);
  const counts: Record<string, number> = {};
  for (const { tablename } of tables.rows) counts[tablename] = Number((await w.h.db(tablename).count({ n: '*' }).first())!.n);
  return counts;
}

const tokenFor = (route: AnyRoute, subject: Actor) =>
  route.credential === 'server' ? subject.key : route.credential === 'licence' ? subject.licence : route.credential === 'none' ? undefined : subject.token;

describe('mass assignment', () => {
  test('every route with a JSON body has a good sample', () => {
    expect(bodyRoutes.map(routeName).filter((n) => !(n in SAMPLES))).toEqual([]);
    expect(bodyRoutes.length).toBeGreaterThanOrEqual(22);
  });

  test.each(bodyRoutes.map((r) => [routeName(r), r] as const))('%s: an unknown or read-only field → 400 naming it, nothing changed', async (name, route) => {
    const subject = await w.newActor();
    const sample = await SAMPLES[name](w, subject);
    const asServer = route.credential === 'server';
    const path = sample.path(asServer);
    const token = tokenFor(route, subject);
    const taken = new Set(props(route.body));
    const answered = props(route.success.schema).filter((f) => !taken.has(f));
    const extras: Record<string, unknown> = { ...UNKNOWN };
    for (const [field, value] of Object.entries(READ_ONLY)) if (!taken.has(field)) extras[field] = value;
    for (const field of answered) extras[field] ??= 'from-the-answer';

    const before = { state: await w.snapshotOf(subject), rows: await rowCounts() };
    for (const [field, value] of Object.entries(extras)) {
      const reply = await send(route, path, token, { ...(sample.body as Json), [field]: value });
      ran++;
      try {
        expectError(reply, 400, 'invalid-request', `body.${field}`);
      } catch (err) {
        throw new Error(`${name} with ${field}: ${(err as Error).message}\nanswer: ${reply.status} ${reply.text}`);
      }
    }
    expect(await w.snapshotOf(subject)).toEqual(before.state);
    expect(await rowCounts()).toEqual(before.rows);

    // The same request without the extra field is good: the refusals were the field's.
    const good = await send(route, path, token, sample.body);
    expect({ status: good.status, text: good.status === sample.ok ? '' : good.text }).toEqual({ status: sample.ok, text: '' });
  });
});

/** Paths of the object nodes of a schema that are not closed. */
function openObjects(schema: unknown, at = ''): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const node = schema as Json;
  const found: string[] = [];
  if ((node.type === 'object' || node.properties) && node.additionalProperties !== false) found.push(at || '(root)');
  for (const [k, v] of Object.entries(node.properties ?? {})) found.push(...openObjects(v, `${at}.${k}`));
  if (node.items) found.push(...openObjects(node.items, `${at}[]`));
  for (const key of ['anyOf', 'oneOf', 'allOf']) for (const [i, v] of ((node[key] as unknown[]) ?? []).entries()) found.push(...openObjects(v, `${at}|${i}`));
  if (node.patternProperties) for (const v of Object.values(node.patternProperties)) found.push(...openObjects(v, `${at}{}`));
  return found;
}

/**
 * Open by design, each with its reason: a game's own data the API keeps and hands back as given
 * (saves, items: any path ending in `.data`), and these.
 */
const FREE_FORM = new Set([
  // The OpenAPI document itself: held to the OpenAPI 3.1 meta-schema by test/api/openapi.test.ts.
  'GET /openapi.json answer .info',
  'GET /openapi.json answer .servers[]',
  'GET /openapi.json answer .paths{}',
  'GET /openapi.json answer .components',
  // Spec §2 "object or null": the console's, the API does not shape it.
  'GET /config/values answer .items[].LevelRateConfig|0',
]);

describe('excessive data exposure', () => {
  test('every body and answer schema is closed, but for the game data the API keeps as given', () => {
    const open: string[] = [];
    for (const r of ROUTES) {
      for (const p of openObjects(r.body)) open.push(`${routeName(r)} body ${p}`);
      for (const p of openObjects(r.success.schema)) open.push(`${routeName(r)} answer ${p}`);
    }
    const unexpected = open.filter((p) => !FREE_FORM.has(p) && !/\.data$|\.data\[\]|\.data\|/.test(p.split(' ').pop()!));
    expect(unexpected).toEqual([]);
  });

  test('a map keyed by game keys takes only game keys (purchase allowances)', async () => {
    const p = await w.newActor();
    for (const key of ['bad key!', '../x', '']) {
      const reply = await call(w.h.base, 'POST', `/players/${p.id}/purchases/items`, {
        token: p.key,
        body: { itemTypeKey: 'sec-potion', allowances: { [key]: 1 } },
      });
      ran++;
      expectError(reply, 400, 'invalid-request');
      expect(reply.body.details?.field).toMatch(/^body\.allowances/);
    }
  });

  test('no answer schema has a field named like a secret, but the sign-in answers’ tokens and the licence token', () => {
    const SECRET = /secret|password|passwd|hash|salt|private|master|credential|apikey|serverkey|licencekey|token/i;
    // The licence token (LicenceStanding.token) is the machine's, signed for it to check offline.
    const ALLOWED = new Set(['accessToken', 'refreshToken', 'token']);
    const named: string[] = [];
    const walk = (node: unknown, where: string) => {
      if (!node || typeof node !== 'object') return;
      const n = node as Json;
      for (const [k, v] of Object.entries(n.properties ?? {})) {
        if (SECRET.test(k) && !ALLOWED.has(k)) named.push(`${where}.${k}`);
        walk(v, `${where}.${k}`);
      }
      if (n.items) walk(n.items, `${where}[]`);
      for (const key of ['anyOf', 'oneOf', 'allOf']) for (const v of (n[key] as unknown[]) ?? []) walk(v, where);
    };
    for (const r of ROUTES) walk(r.success.schema, routeName(r));
    // The symbol upload's answer names the storage's checksum header: a digest of a public file, no secret.
    expect(named.filter((n) => !n.endsWith('.x-amz-checksum-sha256'))).toEqual([]);
    const tokenAnswers = ROUTES.filter((r) => props(r.success.schema).some((f) => ALLOWED.has(f))).map(routeName);
    expect(tokenAnswers.sort()).toEqual([
      'POST /auth/dashboard',
      'POST /auth/idp',
      'POST /auth/refresh',
      'POST /auth/server',
      'POST /licence/activate',
      'POST /licence/check',
    ]);
  });

  test('no answer carries a secret: server keys, their stored hashes, the master key, the signing key', async () => {
    // More answers: the player and key-facing reads, with each credential.
    for (const token of [w.victim.key, w.victim.token]) {
      for (const path of [
        '/players/me',
        `/players/${w.victim.id}`,
        '/.well-known/jwks.json',
        '/definitions/currencies',
        '/crash-symbols/files',
        '/openapi.json',
      ]) {
        seen.push((await call(w.h.base, 'GET', path, { token })).text);
      }
    }
    seen.push((await call(w.h.base, 'POST', '/auth/server', { token: w.victim.key, body: { subject: 'victim' } })).text);
    expect(seen.length).toBeGreaterThan(100);

    // The licence routes' answers too, with the licence key.
    for (const machineId of ['sec-seen-1', 'sec-seen-2']) {
      seen.push((await call(w.h.base, 'POST', '/licence/activate', { token: w.victim.licence, body: { machineId, product: 'p', version: '1' } })).text);
      seen.push((await call(w.h.base, 'POST', '/licence/check', { token: w.victim.licence, body: { machineId } })).text);
    }
    seen.push((await call(w.h.base, 'GET', '/licence/jwks.json')).text);

    const wholeKeys = { ...w.h.serverKeys, ...Object.fromEntries(Object.entries(w.licenceKeys).map(([project, key]) => [`licence key of ${project}`, key])) };
    const secrets: Array<[string, string]> = Object.entries(wholeKeys).map(([name, key]) => [`key ${name}`, key]);
    for (const [name, key] of Object.entries(wholeKeys)) secrets.push([`secret part of ${name}`, key.split('_').pop()!]);
    for (const table of ['server_keys', 'licence_keys']) {
      for (const row of await w.h.db(table).select('*')) {
        for (const [column, value] of Object.entries(row)) {
          if (/hash|secret/i.test(column) && value) secrets.push([`${table}.${column}`, Buffer.isBuffer(value) ? value.toString('hex') : String(value)]);
          if (/hash|secret/i.test(column) && Buffer.isBuffer(value)) secrets.push([`${table}.${column} (base64)`, value.toString('base64')]);
        }
      }
      expect(secrets.some(([what]) => what.startsWith(`${table}.`))).toBe(true);
    }
    secrets.push(['master key (hex)', w.h.masterKey.toString('hex')], ['master key (base64)', w.h.masterKey.toString('base64')]);
    for (const key of [
      ...(await loadSigningKeys(w.h.db, w.h.masterKey)),
      ...(await loadSigningKeys(w.h.db, w.h.masterKey, Date.now(), LICENCE_SIGNING_KEYS)),
    ]) {
      const d = (key.privateKey.export({ format: 'jwk' }) as Json).d as string;
      secrets.push([`signing key ${key.kid} private part`, d]);
    }
    const leaks = secrets.filter(([, secret]) => seen.some((text) => text.includes(secret))).map(([what]) => what);
    expect(leaks).toEqual([]);
  });
});
