/**
 * GET /openapi.json (spec §4, §9; docs/api-conventions.md): an OpenAPI 3.1 document derived from the route table.
 *
 * Every refusal of the pipeline the document lists for an operation is provoked here, on every
 * operation, with a real request: no or a bad credential, the wrong kind, a project awaiting review,
 * the route's service switched off, a body past the route's limit, each bad input, a plan with a
 * tiny limit, a reused Idempotency-Key. Each answer must have the status and code the document
 * lists, and match the documented schema. The routes' own refusals (a full session, an unknown
 * player...) are provoked by their area tests; every answer any test receives is held to the
 * document by the test client (test/support/contract.ts).
 *
 * The API here also serves one test route that takes an Idempotency-Key (documented like any other);
 * the currency moves take one too, and act for the reused-key provocation with ACTING_REQUESTS.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import Ajv2020 from 'ajv/dist/2020';
import { ERROR_STATUS, type ErrorCode } from '@hearth/core';
import { ERROR_DETAILS } from '@hearth/core/shapes';
import { mintLicenceKey } from '@hearth/core/licence';
import { organisationNamed } from '@hearth/core/tenancy';
import { parseTrustedProxies } from '@hearth/core/net';
import type { ProjectSpecT } from '@hearth/core/contract';
import { type AnyRoute, CHECKS, type CheckName, checksOf, dashboardPermissionOf, defineRoute, routeTable } from '@hearth/api';
import { type Harness, startHarness } from '../support/harness';
import { StoreStandIn } from '../support/store-standin';
import { APP_ID, IDENTITY, STORE_KEY, STORE_KEY_VARIABLE, product, storeSettings } from '../commerce/helpers';
import { call, signIn } from '../support/http';
import { Contract, ContractViolation, checkAnswer, contractDocument, type ContractCheck } from '../support/contract';
import { sampleOf } from '../support/schema-sample';
import {
  NAMESPACE,
  allServices,
  cardType,
  currency,
  environment,
  itemType,
  plan,
  project,
  serverKey,
  skillTree,
  standardManifests,
} from '../support/manifests';
import { dashboardMember, dashboardSettings, mintDashboardToken } from '../support/dashboards';
import { WindowClock } from '../support/clock';
import { eventually } from '../support/wait';

jest.setTimeout(60_000);

const REPO = path.resolve(__dirname, '../..');

/**
 * The validator is ESM only and jest runs these tests as CommonJS without the VM-modules flag, so it
 * runs in a node process of its own, reading the document on stdin.
 */
function validateOpenApi(doc: unknown): { valid: boolean; version?: string; errors?: unknown } {
  const script = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(input));
    process.stdout.write(JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors }));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, input: JSON.stringify(doc), encoding: 'utf8' });
  return JSON.parse(out);
}

/** A route that takes an Idempotency-Key, standing in for the idempotent routes of later areas. */
const keyedRoute = defineRoute({
  operationId: 'testKeyed',
  method: 'POST',
  path: '/test/keyed',
  summary: 'Takes an Idempotency-Key, for tests',
  tag: 'reference',
  credential: 'either',
  body: Type.Object({ label: Type.String({ minLength: 1, maxLength: 60 }) }, { additionalProperties: false }),
  idempotency: 'required',
  success: { status: 201, description: 'Done', schema: Type.Object({ label: Type.String() }, { additionalProperties: false }) },
  refusals: [],
  handler: async (ctx) => ({ status: 201, body: { label: ctx.body.label } }),
});

const routes: AnyRoute[] = routeTable([keyedRoute]);
type Json = Record<string, any>;

/** The credentials of one environment: a server key, a player's tokens, a dashboard member's token and its app key. */
interface Caller {
  appKey: string;
  server: string;
  player: string;
  refresh: string;
  /** A licence key of the environment's project (the organisation). */
  licence: string;
  /** A dashboard token of a member of the environment's project holding every permission. */
  dashboard: string;
}

/** The API's clock: the rate limits count per clock minute (see the rate limits below). */
const clock = new WindowClock();
let h: Harness;
let store: StoreStandIn;
let doc: Json;
let served: Contract;
/** An approved environment with every service on; one whose project awaits review; one with every service off; one past its plan's daily requests. */
const callers = {} as Record<'good' | 'pending' | 'dark' | 'exhausted', Caller>;
/** A client address past the per-address limit of this minute (the API trusts X-Forwarded-For from loopback here). */
const EXHAUSTED_ADDRESS = '203.0.113.77';

/** Dashboard settings every project here has (its provider is never asked: the tokens are minted). */
const dashboard = dashboardSettings('https://idp.example');
/** A dashboard member of each caller's environment holding every permission, and two of alpha-live each lacking one. */
const members = (name: string) => [
  dashboardMember(`${name}-member`, {
    project: name,
    subject: name,
    environments: [{ environment: `${name}-live`, permissions: ['open_dashboard', 'view_players'] }],
  }),
];
/** Tokens of alpha-live members each lacking one permission, by the permission they lack. */
const lacking: Record<string, string> = {};

beforeAll(async () => {
  h = await startHarness({
    clock,
    extraRoutes: [keyedRoute],
    trustedProxies: parseTrustedProxies('loopback'),
    manifests: [
      ...standardManifests(),
      project('alpha', { dashboard }),
      plan('tiny', { requestsPerDayPerEnvironment: 3 }),
      project('late', { dashboard }),
      environment('late-live', 'late'),
      serverKey('late-live-key', 'late-live'),
      project('dark', { services: Object.fromEntries(Object.keys(allServices).map((service) => [service, false])) as ProjectSpecT['services'], dashboard }),
      environment('dark-live', 'dark'),
      serverKey('dark-live-key', 'dark-live'),
      project('exhausted', { plan: 'tiny', dashboard }),
      environment('exhausted-live', 'exhausted'),
      serverKey('exhausted-live-key', 'exhausted-live'),
      ...['alpha', 'late', 'dark', 'exhausted'].flatMap(members),
      dashboardMember('alpha-opener', { project: 'alpha', subject: 'opener', environments: [{ environment: 'alpha-live', permissions: ['open_dashboard'] }] }),
      dashboardMember('alpha-viewer', { project: 'alpha', subject: 'viewer', environments: [{ environment: 'alpha-live', permissions: ['view_players'] }] }),
      currency('openapi-gems', { environment: 'alpha-live', name: 'Gems', scope: 'account', kind: 'balance' }),
      currency('openapi-energy', { environment: 'alpha-live', name: 'Energy', scope: 'account', kind: 'consumed' }),
      itemType('openapi-relic', { environment: 'alpha-live', name: 'Relic', category: 'misc', ownership: 'one-by-one', usable: true }),
      itemType('openapi-stack', { environment: 'alpha-live', name: 'Stack', category: 'misc', ownership: 'counted', usable: true }),
      itemType('openapi-potion', {
        environment: 'alpha-live',
        name: 'Potion',
        category: 'misc',
        ownership: 'counted',
        purchasable: true,
        prices: [{ currencyKey: 'openapi-gems', amount: 1 }],
      }),
      itemType('openapi-chest', {
        environment: 'alpha-live',
        name: 'Chest',
        category: 'container',
        ownership: 'one-by-one',
        contents: { grants: [{ itemTypeKey: 'openapi-stack', quantity: 1 }] },
      }),
      cardType('openapi-card', { environment: 'alpha-live', name: 'Card', purchasable: true, prices: [{ currencyKey: 'openapi-gems', amount: 1 }] }),
      skillTree('openapi-tree', {
        environment: 'alpha-live',
        name: 'Tree',
        nodes: [
          { key: 'openapi-node', name: 'Node' },
          { key: 'openapi-node-2', name: 'Node 2' },
        ],
      }),
    ],
  });
  const reply = await call(h.base, 'GET', '/openapi.json');
  expect(reply.status).toBe(200);
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  doc = reply.body;
  served = new Contract(doc);

  const callerOf = async (name: string): Promise<Caller> => {
    const server = h.serverKeys[`${name}-live-key`];
    const tokens = await signIn(h.base, server, `openapi-${name}`);
    const organisation = await organisationNamed(h.db, NAMESPACE, name);
    // Covering the product name the samples of the document send (schema-sample.ts).
    const licence = (await mintLicenceKey(h.db, organisation!.id, `openapi-${name}`, ['sample'])).key;
    const dashboardToken = await mintDashboardToken(h.core, h.db, `${name}-member`, `${name}-live`);
    return { appKey: `${name}-live`, server, player: tokens.accessToken, refresh: tokens.refreshToken, licence, dashboard: dashboardToken };
  };
  lacking.view_players = await mintDashboardToken(h.core, h.db, 'alpha-opener', 'alpha-live');
  lacking.open_dashboard = await mintDashboardToken(h.core, h.db, 'alpha-viewer', 'alpha-live');
  callers.good = await callerOf('alpha');
  // Commerce: alpha sells through a stand-in store, and its player has proved a store account, so an order can be made.
  process.env[STORE_KEY_VARIABLE] = STORE_KEY;
  store = await new StoreStandIn([STORE_KEY]).start();
  await h.apply([
    project('alpha', { dashboard, store: storeSettings(store) }), // its dashboard kept beside the store
    product('openapi-product', {
      environment: 'alpha-live',
      sku: 'openapi-product',
      name: 'P',
      storeItemId: 1,
      entitlement: 'p',
      repeatable: true,
      prices: [{ currency: 'USD', amount: 1 }],
    }),
    product('openapi-product-2', {
      environment: 'alpha-live',
      sku: 'openapi-product-2',
      name: 'P2',
      storeItemId: 2,
      entitlement: 'p2',
      repeatable: true,
      prices: [{ currency: 'USD', amount: 1 }],
    }),
  ]);
  const playerId = (await call(h.base, 'GET', '/players/me', { token: callers.good.player })).body.id as string;
  const ticket = store.issueTicket(`7656119796${playerId.length}000001`, { identity: IDENTITY, appid: APP_ID });
  await eventually(
    async () => (await call(h.base, 'POST', '/commerce/store/identify', { token: callers.good.player, body: { ticket, identity: IDENTITY } })).status === 200,
    5000,
  );
  callers.dark = await callerOf('dark');
  // Its player signs in while the project is approved; then the project goes back to review.
  callers.pending = await callerOf('late');
  await h.apply([project('late', { review: 'pending', dashboard })]);
  await eventually(async () => (await call(h.base, 'GET', '/players/me', { token: callers.pending.player })).status === 403, 5000);
  // The sign-in counted one of the plan's 3 requests of the day; spend the other two.
  callers.exhausted = await callerOf('exhausted');
  const spent: number[] = [];
  for (let i = 0; i < 2; i++) spent.push((await call(h.base, 'GET', '/players/me', { token: callers.exhausted.player })).status);
  expect(spent).toEqual([200, 200]);
});
afterAll(async () => {
  await h.close();
  await store?.stop();
});

// ---------------------------------------------------------------------------------------------
// The document itself.

test('the document validates as OpenAPI 3.1 and reports version 1.0.0', () => {
  const result = validateOpenApi(doc);
  expect(result.errors).toBeUndefined();
  expect(result).toEqual(expect.objectContaining({ valid: true, version: '3.1' }));
  expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
  expect(doc.info.version).toBe('1.0.0');
  expect(typeof doc.info.title).toBe('string');

  // The validator is not a yes-machine: a broken document fails it.
  const broken = JSON.parse(JSON.stringify(doc));
  delete broken.info;
  broken.paths['/flags'].get.responses = 'none';
  expect(validateOpenApi(broken).valid).toBe(false);
});

test('paths are relative to a server URL that carries /v1, as the spec writes them; its origin a variable with a default', () => {
  expect(doc.servers).toEqual([
    expect.objectContaining({ url: '{origin}/v1', variables: { origin: expect.objectContaining({ default: 'http://127.0.0.1:8080' }) } }),
  ]);
  expect(Object.keys(doc.paths)).toContain('/config/tables/{key}');
  expect(Object.keys(doc.paths).filter((p) => p.startsWith('/v1/'))).toEqual([]);
});

test('the document holds exactly the routes of the table, and is the one the test client checks answers against', () => {
  const inDoc = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${p}`));
  const inTable = routes.map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
  expect(inDoc.sort()).toEqual(inTable.sort());
  const ids = routes.map((r) => operationOf(r).operationId);
  expect(ids).toEqual(routes.map((r) => r.operationId));
  expect(new Set(ids).size).toBe(ids.length);

  const withoutTestRoute = JSON.parse(JSON.stringify(doc));
  delete withoutTestRoute.paths['/test/keyed'];
  expect(contractDocument()).toEqual(withoutTestRoute);
});

test('security names the four bearer credentials: a server key, a player token, a dashboard token, a licence key', () => {
  expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['dashboardToken', 'licenceKey', 'playerToken', 'serverKey']);
  for (const scheme of Object.values(doc.components.securitySchemes)) expect(scheme).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
  for (const { operation } of operations()) {
    for (const requirement of operation.security as Json[]) {
      expect(Object.keys(requirement)).toHaveLength(1);
      expect(Object.keys(doc.components.securitySchemes)).toContain(Object.keys(requirement)[0]);
    }
  }
  // A dashboard token reaches the four config and flags reads and the dashboards' own routes, nothing else (spec §5 rule 2).
  expect(doc.paths['/flags'].get.security).toEqual([{ serverKey: [] }, { playerToken: [] }, { dashboardToken: [] }]);
  const reached = operations()
    .filter(({ operation }) => (operation.security as Json[]).some((requirement) => 'dashboardToken' in requirement))
    .map((op) => op.name);
  expect(reached.sort()).toEqual(
    ['GET /config/tables', 'GET /config/tables/:key', 'GET /config/values', 'GET /dashboard/session', 'GET /flags', 'GET /players'].sort(),
  );
  // The licence key is taken by the licence routes and by nothing else.
  const takingLicenceKeys = operations().filter(({ operation }) => (operation.security as Json[]).some((requirement) => 'licenceKey' in requirement));
  expect(takingLicenceKeys.map(({ operation }) => operation.operationId).sort()).toEqual(['activateLicence', 'checkLicence', 'releaseLicence']);
});

test.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s: parameters and body as the route validates them', (_name, route) => {
  const op = operationOf(route);
  if (route.service) expect(op['x-hearth-service']).toBe(route.service);
  const params: Json[] = op.parameters ?? [];
  const named = (where: string) => params.filter((p) => p.in === where);

  // Every path parameter of the template, required, with its schema.
  const templateNames = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
  expect(
    named('path')
      .map((p) => p.name)
      .sort(),
  ).toEqual([...templateNames].sort());
  for (const p of named('path')) {
    expect(p.required).toBe(true);
    expect(p.schema).toEqual(expect.objectContaining({ type: 'string' }));
  }

  // Every query parameter the route takes, required as its schema says.
  const query = (route.query ?? { properties: {} }) as Json;
  expect(
    named('query')
      .map((p) => p.name)
      .sort(),
  ).toEqual(Object.keys(query.properties ?? {}).sort());
  for (const p of named('query')) {
    expect(p.required).toBe((query.required ?? []).includes(p.name));
    expect(p.schema.type).toBe(query.properties[p.name].type);
  }

  // Headers the route reads.
  const idem = named('header').find((p) => p.name === 'Idempotency-Key');
  if (route.idempotency === 'required' || route.idempotency === 'optional') {
    expect(idem).toEqual(expect.objectContaining({ required: route.idempotency === 'required' }));
    expect(idem!.schema).toEqual(expect.objectContaining({ type: 'string', minLength: 1, maxLength: 128 }));
  } else {
    expect(idem).toBeUndefined();
  }
  expect(named('header').some((p) => p.name === 'If-None-Match')).toBe(route.etag !== undefined);

  // The body, as the route validates it: same fields, same required ones, no others allowed.
  if (route.body) {
    const body = route.body as Json;
    // An absent body is read as `{}`: it is required where the schema requires a field.
    expect(op.requestBody.required).toBe((body.required ?? []).length > 0);
    const schema = op.requestBody.content['application/json'].schema;
    expect(Object.keys(schema.properties ?? {}).sort()).toEqual(Object.keys(body.properties ?? {}).sort());
    expect([...(schema.required ?? [])].sort()).toEqual([...(body.required ?? [])].sort());
    expect(schema.additionalProperties).toBe(false);
    expect(JSON.stringify(schema)).not.toContain('x-trim');
  } else if (route.bodyMode === 'stream') {
    // A streamed body is bytes: documented as such, no JSON schema.
    expect(op.requestBody.required).toBe(true);
    expect(Object.keys(op.requestBody.content)).toEqual(['application/octet-stream']);
  } else {
    expect(op.requestBody).toBeUndefined();
  }
});

test('every answer documents the rate-limit headers as required; a 429 adds Retry-After; a refusal is in the error shape', () => {
  for (const { name, operation } of operations()) {
    for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
      for (const header of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
        expect({ name, status, header, documented: deref(response.headers?.[header]) }).toEqual({
          name,
          status,
          header,
          documented: expect.objectContaining({ required: true, schema: expect.objectContaining({ type: 'integer' }) }),
        });
      }
      if (status === '429') expect(response.headers['Retry-After']).toEqual(expect.objectContaining({ required: true }));
      if (Number(status) >= 400) expect(codesOf(response).length).toBeGreaterThan(0);
    }
  }
  const error = doc.components.schemas.Error;
  expect(error.required).toEqual(['error', 'message']);
  expect(Object.keys(error.properties).sort()).toEqual(['details', 'error', 'message']);
  expect(error.properties.error).toEqual({ $ref: '#/components/schemas/ErrorCode' });
  expect(doc.components.schemas.ErrorCode).toEqual(expect.objectContaining({ type: 'string', enum: Object.keys(ERROR_STATUS) }));
});

test('answers are open to fields v1 may add, requests are exact; the contract check closes answers again', () => {
  const exact: string[] = [];
  const walk = (node: unknown, where: string) => {
    if (!node || typeof node !== 'object') return;
    const schema = node as Json;
    if (schema.type === 'object' && schema.additionalProperties === false) exact.push(where);
    for (const [key, value] of Object.entries(schema)) walk(value, `${where}/${key}`);
  };
  let answers = 0;
  for (const { name, operation } of operations()) {
    for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
      const schema = response.content?.['application/json']?.schema;
      if (schema) {
        answers++;
        walk(schema, `${name} ${status}`);
      }
    }
    const body = operation.requestBody?.content?.['application/json']?.schema;
    if (body) expect({ name, additionalProperties: body.additionalProperties }).toEqual({ name, additionalProperties: false });
  }
  // The named shapes are answers' (requests are written in their operation).
  for (const [name, schema] of Object.entries(doc.components.schemas as Record<string, Json>)) walk(schema, `components ${name}`);
  expect(answers).toBeGreaterThan(200);
  expect(exact).toEqual([]);

  // The test client still holds Hearth's own answers to exactly the documented fields.
  const contract = new Contract(doc);
  const answer = (body: unknown) => ({
    method: 'GET',
    url: 'http://127.0.0.1/v1/.well-known/jwks.json',
    status: 200,
    header: (name: string) => (name.toLowerCase() === 'content-type' ? 'application/json' : name.toLowerCase().startsWith('x-ratelimit') ? '1' : null),
    text: JSON.stringify(body),
  });
  expect(contract.check(answer({ keys: [] }))).toEqual(expect.objectContaining({ checked: true }));
  expect(() => contract.check(answer({ keys: [], added: 1 }))).toThrow(/must NOT have additional properties/);
});

test('each shared shape is named once under components/schemas: every use is a $ref, no operation writes it again', () => {
  const named = doc.components.schemas as Record<string, Json>;
  for (const shape of [
    'PlatformPlayer',
    'PlatformTokens',
    'PlatformSession',
    'Item',
    'ItemStack',
    'ItemTypeDefinition',
    'Inventory',
    'Balance',
    'LedgerEntry',
    'Movement',
    'ErrorDetails',
  ]) {
    expect({ shape, named: shape in named }).toEqual({ shape, named: true });
  }
  const bodies = new Map(Object.entries(named).map(([name, schema]) => [JSON.stringify(schema), name]));
  const refs = new Map<string, number>();
  const inline: string[] = [];
  const walk = (node: unknown, where: string, top: boolean) => {
    if (!node || typeof node !== 'object') return;
    const schema = node as Json;
    if (typeof schema.$ref === 'string') refs.set(schema.$ref, (refs.get(schema.$ref) ?? 0) + 1);
    const same = bodies.get(JSON.stringify(schema));
    if (same && !top) inline.push(`${where} writes ${same} again`);
    for (const [key, value] of Object.entries(schema)) walk(value, `${where}/${key}`, false);
  };
  walk(doc.paths, 'paths', false);
  for (const [name, schema] of Object.entries(named)) walk(schema, `components/schemas/${name}`, true);
  expect(inline).toEqual([]);
  // Each is used through its name: Item by the item lists, grants, use and opening; the player by tokens and its reads.
  expect(refs.get('#/components/schemas/Item')).toBeGreaterThanOrEqual(3);
  expect(refs.get('#/components/schemas/PlatformPlayer')).toBeGreaterThanOrEqual(2);
  expect(refs.get('#/components/schemas/PlatformSession')).toBeGreaterThanOrEqual(5);
  expect(refs.get('#/components/schemas/Movement')).toBeGreaterThanOrEqual(5);
  // And nothing refers to a name the document lacks.
  for (const ref of refs.keys()) expect(ref.startsWith('#/components/') && deref({ $ref: ref }) !== undefined).toBe(true);
});

test('an integer that may pass 2^31-1 says format int64 (balances, balanceAfter, sizes), so typed clients make it 64-bit', () => {
  const narrow: string[] = [];
  let wide = 0;
  const walk = (node: unknown, where: string) => {
    if (!node || typeof node !== 'object') return;
    const schema = node as Json;
    if (schema.type === 'integer' && (schema.maximum === undefined || schema.maximum > 2 ** 31 - 1)) {
      if (schema.format === 'int64') wide++;
      else narrow.push(where);
    }
    for (const [key, value] of Object.entries(schema)) walk(value, `${where}/${key}`);
  };
  walk(doc.paths, 'paths');
  walk(doc.components, 'components');
  expect(narrow).toEqual([]);
  expect(wide).toBeGreaterThan(17);
  const named = doc.components.schemas;
  expect(named.Balance.properties.amount).toEqual(expect.objectContaining({ format: 'int64', maximum: Number.MAX_SAFE_INTEGER }));
  expect(named.Movement.properties.balanceAfter.format).toBe('int64');
  expect(named.LedgerEntry.properties.balanceAfter.format).toBe('int64');
  expect(named.SaveEntry.properties.sizeBytes.format).toBe('int64');
  // One that fits 32 bits stays as it is.
  expect(named.Price.properties.amount.format).toBeUndefined();
});

test("the error's details are declared field by field, and each answer says which its codes carry", () => {
  const error = doc.components.schemas.Error;
  expect(error.properties.details).toEqual({ $ref: '#/components/schemas/ErrorDetails' });
  const details = doc.components.schemas.ErrorDetails;
  for (const [code, declared] of Object.entries(ERROR_DETAILS)) {
    for (const field of [...declared!.required, ...(declared!.optional ?? [])]) {
      expect({ code, field, declared: details.properties[field]?.type ?? null }).toEqual({ code, field, declared: expect.any(String) });
    }
  }
  expect(details.properties.field.type).toBe('string');
  expect(details.properties.missing).toEqual(expect.objectContaining({ type: 'array', items: { type: 'string' } }));
  // `problems` (spec §7's game-service details) is declared with the deck validation's own items, though no route answers it.
  expect(details.properties.problems).toEqual(expect.objectContaining({ type: 'array', items: { $ref: '#/components/schemas/DeckProblem' } }));
  expect(doc.components.schemas.DeckValidation.properties.problems.items).toEqual({ $ref: '#/components/schemas/DeckProblem' });
  expect(Object.values(ERROR_DETAILS).some((declared) => [...declared!.required, ...(declared!.optional ?? [])].includes('problems'))).toBe(false);
  // Each answer says, in its description, what the details of each of its codes carry.
  let checked = 0;
  for (const { name, operation } of operations()) {
    for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
      if (Number(status) < 400) continue;
      for (const code of codesOf(response)) {
        const declared = ERROR_DETAILS[code];
        if (!declared) continue;
        checked++;
        const fields = [...declared.required, ...(declared.optional ?? []).map((field) => `${field}?`)].join(', ');
        expect({ name, status, description: response.description }).toEqual({
          name,
          status,
          description: expect.stringContaining(`\`${code}\`: details ${fields}`),
        });
      }
    }
  }
  expect(checked).toBeGreaterThan(100);
  // Every 413 names its route's limit, in its description and for programs.
  expect(doc.paths['/auth/server'].post.responses['413']).toEqual(
    expect.objectContaining({ 'x-hearth-body-limit': 16 * 1024, description: expect.stringContaining('limit 16384 bytes') }),
  );
});

test('a body to any game service is at most 16 KB (spec: "Game services"), reads included; the other routes keep theirs', () => {
  // The paths of the spec's "Game services" section: realms, inventories, the ledger, moves, items,
  // purchases, cards and decks, progression, stats and the definitions.
  const gameService =
    /^\/(realms|definitions|stats)(\/|$)|^\/players\/:playerId\/(inventories|ledger|currencies|items|item-stacks|purchases|cards|card-stacks|decks|xp|skill-trees|skill-nodes|unlocks|stats)(\/|$)/;
  const limits = operations().map(({ name, path, operation }) => ({ at: name, path, limit: operation.responses['413']?.['x-hearth-body-limit'] }));
  const games = limits.filter(({ path }) => gameService.test(path));
  expect(games.length).toBeGreaterThan(40);
  expect(games.filter(({ limit }) => limit !== 16 * 1024)).toEqual([]);
  expect(limits.find(({ at }) => at === 'GET /players/:playerId/inventories')?.limit).toBe(16 * 1024);
  expect(limits.find(({ at }) => at === 'PATCH /players/:playerId')?.limit).toBe(64 * 1024);
});

test('every refusal is the one Error type, with its codes listed on the answer; no long compound names', () => {
  for (const { name, operation } of operations()) {
    for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
      if (Number(status) < 400) continue;
      const codes = codesOf(response);
      expect({ name, status, statuses: codes.map((code) => ERROR_STATUS[code]) }).toEqual({ name, status, statuses: codes.map(() => Number(status)) });
    }
  }
  const names = Object.keys(doc.components.schemas);
  expect(names.filter((n) => n.length > 40 || /Refusal/.test(n))).toEqual([]);
  expect(codesOf(doc.paths['/players/{playerId}'].get.responses['401'])).toEqual(['unauthorized']);
});

test('every operation declares its 500 internal-error, in the error shape', () => {
  for (const { name, operation } of operations()) {
    const failed = operation.responses['500'];
    expect({ name, codes: codesOf(failed) }).toEqual({ name, codes: ['internal-error'] });
  }
});

test('every schema in the document is valid JSON Schema 2020-12', () => {
  const ajv = new Ajv2020({ strict: false });
  const schemas: unknown[] = [];
  const walk = (node: unknown, key?: string) => {
    if (!node || typeof node !== 'object') return;
    if (key === 'schema') schemas.push(node);
    for (const [k, v] of Object.entries(node)) walk(v, k);
  };
  walk(doc.paths);
  walk(doc.components);
  expect(schemas.length).toBeGreaterThan(50);
  for (const schema of schemas) {
    const ok = ajv.validateSchema(schema as object);
    expect({ ok, errors: ajv.errors ?? null }).toEqual({ ok: true, errors: null });
  }
});

test('the test client refuses an answer the document does not describe, and says which it did not check', () => {
  const answer = (over: Partial<{ method: string; path: string; status: number; headers: Record<string, string>; text: string }>) => {
    const headers: Record<string, string> = over.headers ?? {
      'x-ratelimit-limit': '600',
      'x-ratelimit-remaining': '599',
      'x-ratelimit-reset': '30',
      'content-type': 'application/json',
    };
    return {
      method: over.method ?? 'GET',
      url: `http://127.0.0.1:1/v1${over.path ?? '/.well-known/jwks.json'}`,
      status: over.status ?? 200,
      header: (name: string) => headers[name.toLowerCase()] ?? null,
      text: over.text ?? '{"keys":[]}',
    };
  };
  expect(served.check(answer({}))).toEqual({ checked: true, operationId: 'getJwks' });
  // A status the operation does not list, a field the schema does not have, a missing header.
  expect(() => served.check(answer({ status: 418 }))).toThrow(ContractViolation);
  expect(() => served.check(answer({ text: '{"keys":[],"extra":1}' }))).toThrow(/extra|additional/);
  expect(() => served.check(answer({ headers: { 'content-type': 'application/json' } }))).toThrow(/X-RateLimit-Limit/);
  expect(() => served.check(answer({ status: 400, text: '{"error":"forbidden","message":"no"}' }))).toThrow(ContractViolation);
  // What it does not check, it says.
  expect(served.check(answer({ path: '/nope' }))).toEqual({ checked: false, reason: expect.stringContaining('no operation') });
  expect(checkAnswer(answer({ method: 'POST', path: '/test/keyed' }))).toEqual({ checked: false, reason: expect.stringContaining('extraRoutes') });
});

// ---------------------------------------------------------------------------------------------
// Every refusal of the pipeline, provoked on every operation.

interface Operation {
  name: string;
  method: string;
  path: string;
  operation: Json;
  route: AnyRoute;
}

function operationOf(route: AnyRoute): Json {
  return doc.paths[route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[route.method.toLowerCase()];
}

function operationFor(route: AnyRoute): Operation {
  return { name: `${route.method} ${route.path}`, method: route.method, path: route.path, operation: operationOf(route), route };
}

function operations(): Operation[] {
  return routes.map(operationFor);
}

function deref(node: Json | undefined): Json | undefined {
  if (!node || typeof node.$ref !== 'string') return node;
  return (node.$ref as string)
    .slice(2)
    .split('/')
    .reduce((at: Json, part) => at?.[part], doc);
}

/** A refusal answer's codes (x-hearth-error-codes); its body is the one Error shape. */
function codesOf(response: Json): ErrorCode[] {
  expect(response.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
  return response['x-hearth-error-codes'] as ErrorCode[];
}

/** The refusal codes the document lists for an operation, each with the status it lists it under. */
function documentedRefusals(operation: Json): Map<string, number> {
  const codes = new Map<string, number>();
  for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
    if (Number(status) >= 400) for (const code of codesOf(response)) codes.set(code, Number(status));
  }
  return codes;
}

/** The codes the pipeline's checks answer (checks.ts): what this test provokes. */
const PIPELINE_CODES = new Set<string>(Object.values(CHECKS).flatMap((check) => [...check.answers]));

interface Sent {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Json | undefined;
  text: string;
  contract: ContractCheck;
}

interface Request {
  path?: string;
  query?: string;
  headers?: Record<string, string | number>;
  /** JSON, or raw text sent as is. */
  body?: unknown;
  raw?: string;
  address?: string;
}

/**
 * Each operation's requests come from an address of their own (10.x.y.1): the requests counted by
 * address (no credential, a bad one, a licence key) of some 130 operations would otherwise pass one
 * address's 600 a minute (spec §8) and be answered 429 instead of what each case provokes.
 */
const addresses = new Map<string, string>();
function addressOf(op: Operation): string {
  let address = addresses.get(op.name);
  if (!address) addresses.set(op.name, (address = `10.${(addresses.size >> 8) & 255}.${addresses.size & 255}.1`));
  return address;
}

/**
 * Sends a request over node:http (which, unlike fetch, sends a body with a GET) and checks the answer
 * against the served document.
 */
function send(op: Operation, request: Request = {}): Promise<Sent> {
  const url = new URL(h.base + (request.path ?? samplePath(op)) + (request.query ? `?${request.query}` : ''));
  const headers: Record<string, string | number> = { ...(request.headers ?? {}) };
  headers['X-Forwarded-For'] = request.address ?? addressOf(op);
  const payload = request.raw ?? (request.body === undefined ? undefined : JSON.stringify(request.body));
  if (payload !== undefined) {
    headers['Content-Type'] ??= 'application/json';
    headers['Content-Length'] = Buffer.byteLength(payload);
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: op.method, headers, agent: false });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          const header = (name: string) => {
            const value = res.headers[name.toLowerCase()];
            return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
          };
          const contract = served.check({ method: op.method, url: url.href, status: res.statusCode!, header, text });
          resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined, text, contract });
        } catch (err) {
          reject(err);
        }
      });
    });
    // A failure before the answer fails the request (rejecting after it changes nothing).
    req.on('error', reject);
    req.end(payload);
  });
}

/** The answer is the refusal the document lists: its status, its code, its schema (send checked that). */
function expectRefusal(op: Operation, sent: Sent, code: ErrorCode, field?: string): void {
  const status = documentedRefusals(op.operation).get(code);
  expect({ op: op.name, documented: status }).toEqual({ op: op.name, documented: ERROR_STATUS[code] });
  expect({ op: op.name, status: sent.status, error: sent.body?.error, field: sent.body?.details?.field }).toEqual({ op: op.name, status, error: code, field });
  expect(sent.contract).toEqual({ checked: true, operationId: op.operation.operationId });
}

const SCHEME_CREDENTIAL: Record<string, (caller: Caller) => string> = {
  serverKey: (caller) => caller.server,
  playerToken: (caller) => caller.player,
  licenceKey: (caller) => caller.licence,
  dashboardToken: (caller) => caller.dashboard,
};

function takesLicenceKey(op: Operation): boolean {
  return (op.operation.security as Json[]).some((requirement) => 'licenceKey' in requirement);
}

/** The credentials of the caller the operation takes, one per scheme it lists. */
function credentialsOf(op: Operation, caller: Caller): string[] {
  return (op.operation.security as Json[]).map((requirement) => {
    const scheme = Object.keys(requirement)[0];
    if (!SCHEME_CREDENTIAL[scheme]) throw new Error(`no credential of scheme ${scheme} to send`);
    return SCHEME_CREDENTIAL[scheme](caller);
  });
}

/**
 * Routes that take no bearer credential but act in an environment name it in their body or path:
 * how each names the caller's. (The document tells them apart only by their refusals.)
 */
const ENVIRONMENT_NAMED: Record<string, (caller: Caller) => Request> = {
  signInIdp: (caller) => ({ body: { appKey: caller.appKey, idToken: 'not.a.token' } }),
  refreshTokens: (caller) => ({ body: { refreshToken: caller.refresh } }),
  uploadCrashReport: (caller) => ({ path: `/crash-reports/${caller.appKey}`, raw: 'not a crash', headers: { 'Content-Type': 'application/octet-stream' } }),
  signInDashboard: (caller) => ({ body: { appKey: caller.appKey, code: 'not-a-code', codeVerifier: 'v'.repeat(43), nonce: 'n'.repeat(16) } }),
};

/**
 * Requests acting for the caller: one per credential the operation takes, or one whose body names
 * the caller's environment. An operation that acts in no environment gets `extra` as it is, where
 * that will do (`needsEnvironment` false).
 */
function actingAs(op: Operation, caller: Caller, extra: Request = {}, needsEnvironment = true): Request[] {
  if ((op.operation.security as Json[]).length > 0) {
    return credentialsOf(op, caller).map((token) => ({ ...extra, headers: { ...extra.headers, Authorization: `Bearer ${token}` } }));
  }
  const named = ENVIRONMENT_NAMED[op.operation.operationId];
  if (named) {
    const request = named(caller);
    return [{ ...extra, ...request, headers: { ...extra.headers, ...request.headers } }];
  }
  if (needsEnvironment) throw new Error(`${op.name} takes no credential: how does it name its environment?`);
  return [extra];
}

/** A value the schema refuses, as a path or query parameter sends it (a string). */
function refusedValueOf(schema: Json): string {
  if (schema.type === 'integer' || schema.type === 'number') return 'not-a-number';
  if (schema.maxLength !== undefined) return 'x'.repeat(schema.maxLength + 1);
  if (typeof schema.const === 'string') return `not-${schema.const}`;
  throw new Error(`no refused value for ${JSON.stringify(schema)}`);
}

function parametersIn(op: Operation, where: string): Json[] {
  return ((op.operation.parameters ?? []) as Json[]).filter((p) => p.in === where);
}

/** The operation's path with a value each parameter takes (`override` replaces one). */
function samplePath(op: Operation, override: Record<string, string> = {}): string {
  return op.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    if (name in override) return encodeURIComponent(override[name]);
    const parameter = parametersIn(op, 'path').find((p) => p.name === name)!;
    return encodeURIComponent(String(sampleOf(parameter.schema)));
  });
}

function sampleBody(op: Operation): Json | undefined {
  const schema = op.operation.requestBody?.content?.['application/json']?.schema;
  return schema ? (sampleOf(schema) as Json) : undefined;
}

/**
 * Idempotent routes whose sample request cannot act as it stands (it names no real player or
 * currency): the request that acts instead, for the reused-key provocation.
 */
const ACTING_REQUESTS: Record<string, () => Promise<{ path: string; body: Json; other?: { path: string; body: Json } }>> = {
  createCommerceOrder: async () => ({
    path: '/commerce/orders',
    body: { sku: 'openapi-product', provider: 'steam', language: 'en' },
    other: { path: '/commerce/orders', body: { sku: 'openapi-product-2', provider: 'steam', language: 'en' } },
  }),
  creditCurrency: async () => ({ path: `/players/${await economyPlayer()}/currencies/openapi-gems/credit`, body: { amount: 1, reason: 's' } }),
  debitCurrency: async () => ({ path: `/players/${await economyPlayer()}/currencies/openapi-gems/debit`, body: { amount: 1, reason: 's' } }),
  refundCurrency: async () => ({ path: `/players/${await economyPlayer()}/currencies/openapi-energy/refund`, body: { amount: 1, reason: 's' } }),
  consumeCurrency: async () => ({
    path: `/players/${await economyPlayer()}/currencies/openapi-energy/consume`,
    body: { amount: 1, allowance: 1000, reason: 's' },
  }),
  grantItems: async () => ({ path: `/players/${await economyPlayer()}/items/grant`, body: { itemTypeKey: 'openapi-relic', grantKey: 's' } }),
  consumeItemStack: () => onStack('consume', { quantity: 2 }),
  useItemStack: () => onStack('use', { realmId: null }),
  // Routes of no body: the other request is the same route on another item.
  consumeItem: () => onItems('openapi-relic', 'consume'),
  useItem: () => onItems('openapi-relic', 'use'),
  openItem: () => onItems('openapi-chest', 'open'),
  purchaseItems: async () => {
    const path = `/players/${await economyPlayer()}/purchases/items`;
    return { path, body: { itemTypeKey: 'openapi-potion' }, other: { path, body: { itemTypeKey: 'openapi-potion', quantity: 2 } } };
  },
  // Cards: no realm is open here, so each names the account (realmId null).
  grantCard: async () => ({ path: `/players/${await economyPlayer()}/cards/grant`, body: { cardTypeKey: 'openapi-card', grantKey: 's', realmId: null } }),
  consumeCard: async () => {
    const id = await economyPlayer();
    const grant = (n: number) =>
      call(h.base, 'POST', `/players/${id}/cards/grant`, {
        token: callers.good.server,
        body: { cardTypeKey: 'openapi-card', realmId: null },
        headers: { 'Idempotency-Key': `setup-card-${n}` },
      });
    const [one, two] = [(await grant(1)).body.card.id as string, (await grant(2)).body.card.id as string];
    return {
      path: `/players/${id}/cards/${one}/consume`,
      body: undefined as unknown as Json,
      other: { path: `/players/${id}/cards/${two}/consume`, body: undefined as unknown as Json },
    };
  },
  grantCardStack: async () => {
    const path = `/players/${await economyPlayer()}/card-stacks/grant`;
    return {
      path,
      body: { cardTypeKey: 'openapi-card', quantity: 1, realmId: null },
      other: { path, body: { cardTypeKey: 'openapi-card', quantity: 2, realmId: null } },
    };
  },
  consumeCardStack: async () => {
    const id = await economyPlayer();
    const made = await call(h.base, 'POST', `/players/${id}/card-stacks/grant`, {
      token: callers.good.server,
      body: { cardTypeKey: 'openapi-card', quantity: 10, realmId: null },
      headers: { 'Idempotency-Key': 'setup-card-stack' },
    });
    expect(made.status).toBe(200);
    const path = `/players/${id}/card-stacks/consume`;
    return {
      path,
      body: { cardTypeKey: 'openapi-card', quantity: 1, realmId: null },
      other: { path, body: { cardTypeKey: 'openapi-card', quantity: 2, realmId: null } },
    };
  },
  purchaseCards: async () => {
    const path = `/players/${await economyPlayer()}/purchases/cards`;
    return { path, body: { cardTypeKey: 'openapi-card', realmId: null }, other: { path, body: { cardTypeKey: 'openapi-card', realmId: null, as: 'stack' } } };
  },
  addXp: async () => ({ path: `/players/${await economyPlayer()}/xp`, body: { amount: 1, track: 's' } }),
  unlockSkillNode: async () => {
    const id = await economyPlayer();
    return { path: `/players/${id}/skill-nodes/openapi-node/unlock`, body: {}, other: { path: `/players/${id}/skill-nodes/openapi-node-2/unlock`, body: {} } };
  },
  incrementPlayerStat: async () => ({
    path: `/players/${await economyPlayer()}/stats/openapi-stat/increment`,
    body: { by: 1 },
    other: { path: `/players/${await economyPlayer()}/stats/openapi-stat/increment`, body: { by: 2 } },
  }),
  incrementStat: async () => ({ path: '/stats/openapi-stat/increment', body: { by: 1 }, other: { path: '/stats/openapi-stat/increment', body: { by: 2 } } }),
};

/** Two new items of a type held by the economy player: the acting request on one, the other request on the other. */
async function onItems(itemTypeKey: string, action: string) {
  const id = await economyPlayer();
  const made = await call(h.base, 'POST', `/players/${id}/items/grant`, {
    token: callers.good.server,
    body: { itemTypeKey, quantity: 2 },
    headers: { 'Idempotency-Key': `setup-items-${action}` },
  });
  expect(made.status).toBe(200);
  const [one, two] = made.body.items as { id: string }[];
  return {
    path: `/players/${id}/items/${one.id}/${action}`,
    body: undefined as unknown as Json,
    other: { path: `/players/${id}/items/${two.id}/${action}`, body: undefined as unknown as Json },
  };
}

/** A stack route acting on the economy player's stack (granted once, enough for both routes); the other request differs by `extra`. */
async function onStack(action: string, extra: Json) {
  const id = await economyPlayer();
  const made = await call(h.base, 'POST', `/players/${id}/items/grant`, {
    token: callers.good.server,
    body: { itemTypeKey: 'openapi-stack', quantity: 10 },
    headers: { 'Idempotency-Key': 'setup-stack' },
  });
  expect(made.status).toBe(200);
  const path = `/players/${id}/item-stacks/${action}`;
  return { path, body: { itemTypeKey: 'openapi-stack' }, other: { path, body: { itemTypeKey: 'openapi-stack', ...extra } } };
}

/** A player of alpha-live holding gems and having spent energy, so every currency move can act. */
let economyPlayerId: Promise<string> | undefined;
function economyPlayer(): Promise<string> {
  return (economyPlayerId ??= (async () => {
    const id = (await signIn(h.base, callers.good.server, 'openapi-economy')).player.id;
    const moved = (kind: string, currencyKey: string, body: Json) =>
      call(h.base, 'POST', `/players/${id}/currencies/${currencyKey}/${kind}`, {
        token: callers.good.server,
        body,
        headers: { 'Idempotency-Key': `setup-${kind}` },
      });
    expect((await moved('credit', 'openapi-gems', { amount: 100, reason: 'setup' })).status).toBe(200);
    expect((await moved('consume', 'openapi-energy', { amount: 100, allowance: 100, reason: 'setup' })).status).toBe(200);
    return id;
  })());
}

/** How to provoke each check of the pipeline on an operation it applies to. */
const PROVOKE: Record<Exclude<CheckName, 'routeMatch'>, (op: Operation) => Promise<void>> = {
  async bodySize(op) {
    // The limit is in the document, with the refusal.
    const limit: number = op.operation.responses['413']['x-hearth-body-limit'];
    expect(limit).toBeGreaterThanOrEqual(16 * 1024);
    const padded = (json: string) => json + ' '.repeat(limit + 1 - Buffer.byteLength(json));
    const sent = await send(op, { raw: padded(JSON.stringify(sampleBody(op) ?? {})) });
    expectRefusal(op, sent, 'payload-too-large');
    expect(sent.body!.details).toEqual({ limit });
  },

  async credential(op) {
    expectRefusal(op, await send(op), 'unauthorized');
    for (const bad of [
      'hsk_0000000000000000_0000000000000000000000000000000000000000',
      'hlk_0000000000000000_0000000000000000000000000000000000000000',
      'not-a-credential',
      'eyJhbGciOiJFZERTQSJ9.e30.AAAA',
    ]) {
      expectRefusal(op, await send(op, { headers: { Authorization: `Bearer ${bad}` } }), 'unauthorized');
    }
  },

  async rateLimits(op) {
    // With a credential: its environment is past its plan's requests of the day; without, or with a
    // licence key (counted by address, in no environment): this address is past its minute.
    const byAddress = { address: EXHAUSTED_ADDRESS, body: sampleBody(op) };
    const security = op.operation.security as Json[];
    const requests = security.length === 0 ? [byAddress] : takesLicenceKey(op) ? actingAs(op, callers.good, byAddress) : actingAs(op, callers.exhausted);
    for (const request of requests) {
      const sent = await send(op, request);
      expectRefusal(op, sent, 'rate-limited');
      expect(Number(sent.headers['retry-after'])).toBe(sent.body!.details.retryAfterSeconds);
    }
  },

  async credentialKind(op) {
    const taken = (op.operation.security as Json[]).map((requirement) => Object.keys(requirement)[0]);
    const others = Object.keys(doc.components.securitySchemes).filter((scheme) => !taken.includes(scheme));
    expect(others.length).toBeGreaterThan(0);
    for (const scheme of others) {
      expectRefusal(op, await send(op, { headers: { Authorization: `Bearer ${SCHEME_CREDENTIAL[scheme](callers.good)}` } }), 'forbidden');
    }
  },

  async dashboardPermission(op) {
    // A member of the environment whose document does not give the route's permission.
    expectRefusal(op, await send(op, { headers: { Authorization: `Bearer ${lacking[dashboardPermissionOf(op.route)]}` } }), 'forbidden');
  },

  async environmentFromBody(op) {
    for (const request of actingAs(op, { ...callers.good, appKey: 'no-such-app-key' })) expectRefusal(op, await send(op, request), 'service-disabled');
  },

  async environmentFromPath(op) {
    for (const request of actingAs(op, { ...callers.good, appKey: 'no-such-app-key' })) expectRefusal(op, await send(op, request), 'service-disabled');
  },

  async review(op) {
    for (const request of actingAs(op, callers.pending)) expectRefusal(op, await send(op, request), 'project-not-approved');
  },

  async serviceSwitch(op) {
    for (const request of actingAs(op, callers.dark)) expectRefusal(op, await send(op, request), 'service-disabled');
  },

  async input(op) {
    const [good] = actingAs(op, callers.good, { body: sampleBody(op) }, false);
    const body = good.body ?? sampleBody(op);
    const refused = async (request: Request, field: string) => expectRefusal(op, await send(op, { ...good, body, ...request }), 'invalid-request', field);

    // Every parameter the document lists, sent with a value its schema refuses.
    for (const parameter of parametersIn(op, 'path')) {
      await refused({ path: samplePath(op, { [parameter.name]: refusedValueOf(parameter.schema) }) }, `path.${parameter.name}`);
    }
    for (const parameter of parametersIn(op, 'query')) {
      await refused({ query: `${parameter.name}=${encodeURIComponent(refusedValueOf(parameter.schema))}` }, `query.${parameter.name}`);
    }
    // A query parameter it does not list.
    await refused({ query: 'unlisted=1' }, 'query.unlisted');
    // A body field it does not list, and a body that is not JSON (a streamed body is bytes: neither applies).
    if (op.operation.requestBody?.content['application/json']) {
      await refused({ body: { ...(body as Json), unlisted: 1 } }, 'body.unlisted');
      await refused({ raw: '{"not json' }, 'body');
    }
  },

  async idempotencyKey(op) {
    const header = parametersIn(op, 'header').find((p) => p.name === 'Idempotency-Key')!;
    const [first] = actingAs(op, callers.good);
    const withKey = (key: string | undefined, body: unknown): Request => ({
      ...first,
      body,
      headers: { ...first.headers, ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
    });
    const sample = sampleBody(op);

    // A key its schema refuses; none where one is required.
    for (const key of ['k'.repeat(header.schema.maxLength + 1), 'clé']) {
      expectRefusal(op, await send(op, withKey(key, sample)), 'invalid-request', 'header.Idempotency-Key');
    }
    if (header.required) expectRefusal(op, await send(op, withKey(undefined, sample)), 'invalid-request', 'header.Idempotency-Key');

    // A key already used for another request.
    const key = `openapi-${op.operation.operationId}`;
    const acting = await ACTING_REQUESTS[op.operation.operationId]?.();
    const keyed = (k: string, b: unknown): Request => ({ ...withKey(k, b), ...(acting ? { path: acting.path } : {}) });
    const body = acting?.body ?? sample;
    const done = await send(op, keyed(key, body));
    expect(done.status).toBeLessThan(300);
    if (acting?.other) {
      expectRefusal(op, await send(op, { ...withKey(key, acting.other.body), path: acting.other.path }), 'idempotency-conflict');
      return;
    }
    // The same body with its first string value's first letter changed: still valid, another request.
    const other = JSON.parse(JSON.stringify(body).replace(/:"([a-z])/, (_, c: string) => `:"${c === 't' ? 's' : 't'}`));
    expect(other).not.toEqual(body);
    expectRefusal(op, await send(op, keyed(key, other)), 'idempotency-conflict');
  },
};

// Which checks each route goes through, from the declarations the pipeline acts on (the document is read once loaded).
const cases = routes.flatMap((route) => {
  const applied = checksOf(route);
  return (Object.keys(PROVOKE) as (keyof typeof PROVOKE)[])
    .filter((name) => applied[name])
    .map((name) => [`${route.method} ${route.path}`, name, route] as const);
});
// Rate limits last: the address they exhaust is exhausted for the rest of its minute.
const [rateLimited, others] = [cases.filter(([, name]) => name === 'rateLimits'), cases.filter(([, name]) => name !== 'rateLimits')];

describe('every check the pipeline makes answers what the document lists', () => {
  test('each code of the pipeline an operation lists is provoked here, or is its own refusal (provoked by its area tests)', () => {
    for (const op of operations()) {
      const applied = checksOf(op.route);
      const provoked = new Set<string>(Object.entries(CHECKS).flatMap(([name, check]) => (applied[name as CheckName] ? [...check.answers] : [])));
      for (const code of documentedRefusals(op.operation).keys()) {
        if (!PIPELINE_CODES.has(code) || provoked.has(code)) continue;
        expect({ op: op.name, code, own: op.route.refusals.includes(code as ErrorCode) }).toEqual({ op: op.name, code, own: true });
      }
    }
    // Every code the pipeline can answer is provoked on some operation (not-found answers requests no route takes).
    const everywhere = new Set<string>(cases.flatMap(([, name]) => [...CHECKS[name].answers]));
    expect([...PIPELINE_CODES].filter((code) => !everywhere.has(code as ErrorCode))).toEqual(['not-found']);
  });

  test.each(others)('%s: %s', async (_name, check, route) => {
    await PROVOKE[check](operationFor(route));
  });

  describe('rate limits', () => {
    beforeAll(async () => {
      // The address must not cross into the next clock minute while the routes are asked.
      clock.roomInWindow(60, 20);
      // Unknown paths count against the address like any request without a credential.
      for (let sent = 0; sent < 600; sent += 50) {
        await Promise.all(Array.from({ length: 50 }, () => statusFrom(EXHAUSTED_ADDRESS, '/nowhere')));
      }
      expect(await statusFrom(EXHAUSTED_ADDRESS, '/nowhere')).toBe(429);
    });

    test.each(rateLimited)('%s: %s', async (_name, check, route) => {
      await PROVOKE[check](operationFor(route));
    });
  });
});

/** The status of a GET from an address (for spending an address's limit). */
async function statusFrom(address: string, path: string): Promise<number> {
  const res = await fetch(h.base + path, { headers: { 'X-Forwarded-For': address } });
  await res.arrayBuffer();
  return res.status;
}

// ---------------------------------------------------------------------------------------------
// Links (RouteSpec.links): client generators and the fuzzer's stateful phase follow them.

/** A runtime expression of a link, against the answer it comes from and that request's path. */
function resolveExpression(expression: string, answer: unknown, requestPath: Record<string, string>): unknown {
  const fromPath = /^\$request\.path\.(\w+)$/.exec(expression);
  if (fromPath) return requestPath[fromPath[1]];
  const pointer = /^\$response\.body#(\/.*)$/.exec(expression);
  if (!pointer) throw new Error(`not a runtime expression this API uses: ${expression}`);
  return pointer[1]
    .split('/')
    .slice(1)
    .reduce<unknown>((at, step) => (at === null || typeof at !== 'object' ? undefined : (at as Json)[step.replace(/~1/g, '/').replace(/~0/g, '~')]), answer);
}

function linksFrom(operationId: string): Array<[string, Json]> {
  const route = routes.find((r) => r.operationId === operationId)!;
  return Object.entries(operationOf(route).responses[String(route.success.status)].links ?? {});
}

test('every link names an operation of the document and only parameters its target takes', () => {
  const byId = new Map(operations().map(({ operation }) => [operation.operationId, operation]));
  let count = 0;
  for (const { name, operation } of operations()) {
    for (const response of Object.values(operation.responses as Record<string, Json>)) {
      for (const [linkName, link] of Object.entries((response.links ?? {}) as Record<string, Json>)) {
        count++;
        const target = byId.get(link.operationId);
        expect({ name, linkName, target: target?.operationId }).toEqual({ name, linkName, target: linkName });
        const takes = ((target!.parameters ?? []) as Json[]).map((p) => p.name);
        for (const [parameter, expression] of Object.entries(link.parameters as Record<string, string>)) {
          expect({ name, linkName, parameter, taken: takes.includes(parameter) }).toEqual({ name, linkName, parameter, taken: true });
          expect(expression).toMatch(/^\$(response\.body#\/[\w/]+|request\.path\.\w+)$/);
        }
      }
    }
  }
  // The sources the issue names: sign-in → players, POST /sessions → the session routes, save PUT → GET,
  // grants → the item routes.
  expect(count).toBeGreaterThan(40);
  expect(linksFrom('signInServer').map(([n]) => n)).toEqual(expect.arrayContaining(['getPlayer', 'putSave', 'creditCurrency', 'grantItems']));
  expect(linksFrom('createSession').map(([n]) => n)).toEqual(expect.arrayContaining(['getSession', 'joinSession', 'readySession', 'kickSessionPlayer']));
  expect(
    linksFrom('putSave')
      .map(([n]) => n)
      .sort(),
  ).toEqual(['deleteSave', 'getSave']);
  expect(linksFrom('grantItems').map(([n]) => n)).toEqual(expect.arrayContaining(['useItem', 'openItem', 'consumeItem', 'listItems']));
});

test('following each link of a real answer to a read, with nothing but what the link gives, finds what the answer made', async () => {
  const good = callers.good;
  const signedIn = await call(h.base, 'POST', '/auth/server', { token: good.server, body: { subject: 'openapi-links' } });
  const playerId: string = signedIn.body.player.id;
  const player = (await call(h.base, 'POST', '/auth/refresh', { body: { refreshToken: signedIn.body.refreshToken } })).body.accessToken as string;
  const sources: Array<{ operationId: string; path: Record<string, string>; reply: { status: number; body: unknown } }> = [
    { operationId: 'signInServer', path: {}, reply: signedIn },
    { operationId: 'createSession', path: {}, reply: await call(h.base, 'POST', '/sessions', { token: player, body: { gameMode: 'duel', map: 'dock' } }) },
    {
      operationId: 'putSave',
      path: { playerId, key: 'links-slot' },
      reply: await call(h.base, 'PUT', `/players/${playerId}/data/links-slot`, { token: good.server, body: { data: { level: 3 } } }),
    },
    {
      operationId: 'grantItems',
      path: { playerId },
      reply: await call(h.base, 'POST', `/players/${playerId}/items/grant`, {
        token: good.server,
        headers: { 'Idempotency-Key': 'links-grant' },
        body: { itemTypeKey: 'openapi-relic' },
      }),
    },
    { operationId: 'listInventories', path: { playerId }, reply: await call(h.base, 'GET', `/players/${playerId}/inventories`, { token: good.server }) },
  ];

  const followed: string[] = [];
  for (const source of sources) {
    expect({ source: source.operationId, ok: source.reply.status < 300, body: source.reply.body }).toEqual(
      expect.objectContaining({ source: source.operationId, ok: true }),
    );
    for (const [, link] of linksFrom(source.operationId)) {
      const target = routes.find((r) => r.operationId === link.operationId)!;
      const templateNames = [...target.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
      const given = Object.fromEntries(
        Object.entries(link.parameters as Record<string, string>).map(([name, e]) => [name, resolveExpression(e, source.reply.body, source.path)]),
      );
      // A read the link alone addresses: every path parameter comes from the link.
      if (target.method !== 'GET' || !templateNames.every((name) => typeof given[name] === 'string')) continue;
      const path = target.path.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => encodeURIComponent(given[name] as string));
      const token = target.credential === 'player' ? player : good.server;
      const reply = await call(h.base, 'GET', path, { token });
      expect({ link: `${source.operationId} → ${target.operationId}`, status: reply.status, error: reply.body?.error }).toEqual({
        link: `${source.operationId} → ${target.operationId}`,
        status: 200,
        error: undefined,
      });
      followed.push(target.operationId);
    }
  }
  expect(followed).toEqual(
    expect.arrayContaining(['getPlayer', 'listSaves', 'listLedger', 'getSession', 'getSave', 'getInventory', 'listItems', 'listBalances']),
  );
});
