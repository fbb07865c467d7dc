/**
 * OWASP API Security Top 10 (2023), API9 "Improper inventory management": the API serves exactly
 * what its OpenAPI document lists. Every operation in GET /openapi.json is a route of the table and
 * every route of the table is in the document (both derive from the table: this holds that nothing
 * is added beside it); every route answers something other than the router's 404; and nothing
 * undocumented is served under /v1 (other versions, admin or debug paths, other methods on
 * documented paths). Beside the table the API serves only the cluster's probes (/healthz, /readyz) and the
 * embedded store's presigned uploads (PUT /v1/object-uploads/, docs/storage); metrics are on their own port.
 */
import http from 'node:http';
import { routeTable } from '@hearth/api';
import { parseTrustedProxies } from '@hearth/core/net';
import { type Harness, startHarness } from '../support/harness';
import { call } from '../support/http';
import { reportFigure } from '../support/figures';

let h: Harness;
let doc: { paths: Record<string, Record<string, { operationId: string }>> };
const root = () => h.base.replace(/\/v1$/, '');

beforeAll(async () => {
  // X-Forwarded-For from loopback is trusted, so each probe comes from an address of its own: the
  // probes (every path with every method) are counted by address and would pass one address's 600 a
  // minute (spec §8), answering 429 instead of what the probe is about.
  h = await startHarness({ trustedProxies: parseTrustedProxies('loopback') });
  const reply = await call(h.base, 'GET', '/openapi.json');
  expect(reply.status).toBe(200);
  doc = reply.body;
});
afterAll(async () => {
  await h.close();
});

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];
const documented = () =>
  Object.entries(doc.paths)
    .flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => METHODS.includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    )
    .sort();
const table = () =>
  routeTable()
    .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`)
    .sort();

/** The router's own 404: what a request no route takes is answered (app.ts). */
const isRouterNotFound = (reply: { status: number; body: any }) => reply.status === 404 && /^No route /.test(reply.body?.message ?? '');

let probes = 0;
async function raw(method: string, url: string): Promise<{ status: number; body: any; headers: Headers }> {
  const n = probes++;
  const res = await fetch(url, { method, headers: { 'X-Forwarded-For': `10.9.${Math.floor(n / 250) % 250}.${(n % 250) + 1}` } });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body, headers: res.headers };
}

test('the document lists exactly the route table: same operations, none more, none fewer', () => {
  expect(documented()).toEqual(table());
  reportFigure(`api9: ${table().length} operations served and documented`);
});

test("every documented operation is served: none answers the router's 404", async () => {
  const unserved: string[] = [];
  for (const op of documented()) {
    const [method, path] = op.split(' ');
    const reply = await raw(method, h.base + path.replace(/\{[^}]+\}/g, 'probe'));
    if (isRouterNotFound(reply)) unserved.push(op);
  }
  expect(unserved).toEqual([]);
});

test("undocumented paths under /v1 and other versions are the router's 404, with nothing of the inside", async () => {
  const probes = [
    '/v1',
    '/v1/',
    '/v1/admin',
    '/v1/debug',
    '/v1/internal',
    '/v1/metrics',
    '/v1/users',
    '/v1/sessions',
    '/v1/graphql',
    '/v1/openapi.yaml',
    '/v1/swagger.json',
    '/v1/docs',
    '/v1/.env',
    '/v0/players/me',
    '/v2/players/me',
    '/api/v1/players/me',
    '/metrics',
    '/admin',
    '/.git/config',
    '/server-status',
    '/',
  ];
  for (const path of probes) {
    const reply = await raw('GET', root() + path);
    expect({ path, notFound: isRouterNotFound(reply) }).toEqual({ path, notFound: true });
  }
});

test("a documented path asked with a method it does not take (OPTIONS, TRACE and the rest) is the router's 404", async () => {
  const served = new Set(documented());
  let probed = 0;
  for (const path of Object.keys(doc.paths)) {
    for (const method of ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS']) {
      if (served.has(`${method} ${path}`) || (method === 'HEAD' && served.has(`GET ${path}`))) continue;
      const reply = await raw(method, h.base + path.replace(/\{[^}]+\}/g, 'probe'));
      expect({ method, path, notFound: isRouterNotFound(reply) }).toEqual({ method, path, notFound: true });
      probed++;
    }
  }
  // TRACE (which fetch will not send) is refused by the router too, never echoed.
  const trace = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(`${h.base}/flags`, { method: 'TRACE', headers: { 'X-Echo-Me': 'secret' } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
  expect(trace.status).toBe(404);
  expect(trace.body).not.toContain('secret');
  reportFigure(`api9: ${probed} method/path pairs not documented, each the router's 404`);
});

test('outside /v1: only the probes, which tell nothing but readiness', async () => {
  const health = await raw('GET', `${root()}/healthz`);
  expect(health).toMatchObject({ status: 200, body: { status: 'ok' } });
  const ready = await raw('GET', `${root()}/readyz`);
  expect(ready.status).toBe(200);
  expect(Object.keys(ready.body).sort()).toEqual(['postgres', 'redis', 'status']);
  // The embedded store's presigned uploads (/v1/object-uploads/) take PUT only: nothing is read back there.
  expect(isRouterNotFound(await raw('GET', `${h.base}/object-uploads/anything`))).toBe(true);
});
