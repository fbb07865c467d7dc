/**
 * The route table registers each area by one line, in any order (docs/architecture.md "How an area
 * plugs in"): the OpenAPI document's paths come in the spec's order, SPEC_ROUTE_ORDER, and routing
 * (find-my-way) finds the same route whatever order the table registers them in.
 */
import fs from 'node:fs';
import path from 'node:path';
import FindMyWay, { type HTTPVersion } from 'find-my-way';
import { type AnyRoute, SPEC_ROUTE_ORDER, areaRoutes, buildOpenApi, routeOrderKey, routeTable } from '@hearth/api';

const table = routeTable();

const ROUTES = path.resolve(__dirname, '..', '..', 'apps', 'api', 'src', 'routes');

test('routeTable registers every folder of routes/ by one line, its list', () => {
  const folders = fs
    .readdirSync(ROUTES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const source = fs.readFileSync(path.join(ROUTES, 'index.ts'), 'utf8');
  const imported = [...source.matchAll(/^import \{ (\w+) \} from '\.\/([\w-]+)';$/gm)].map(([, name, folder]) => ({ name, folder }));
  expect(imported.map(({ folder }) => folder).sort()).toEqual(folders);
  const body = /const routes: AnyRoute\[\] = \[\n([\s\S]*?)\n {2}\];/.exec(source)?.[1];
  expect(body).toBeDefined();
  // Each line spreads one area's list (the reference routes' is made with the document), then the extras.
  const lines = body!.split('\n').map((line) => /^ {4}\.\.\.(\w+)(\(.*\))?,$/.exec(line)?.[1] ?? line);
  expect([...lines].sort()).toEqual([...imported.map(({ name }) => name), 'extra'].sort());
});

test("an area's routes take its tag and service unless they name their own", () => {
  const savesRoute = areaRoutes({ tag: 'saves', service: 'persistence' });
  const declared = {
    operationId: 'x',
    method: 'GET' as const,
    path: '/x',
    summary: 'x',
    credential: 'server' as const,
    success: { status: 204, description: 'x' },
    refusals: [],
    handler: async () => ({}),
  };
  expect(savesRoute(declared)).toMatchObject({ tag: 'saves', service: 'persistence', credential: 'server' });
  // A spread helper (playerPage, engineMove...) or the route itself names another: theirs win.
  expect(savesRoute({ ...declared, tag: 'players', service: 'stats' })).toMatchObject({ tag: 'players', service: 'stats' });
  // An area with no service switch (players, auth) gives its routes none.
  expect(areaRoutes({ tag: 'players' })(declared)).not.toHaveProperty('service');
});

/** The lines of a list that occur more than once. */
const repeated = (keys: readonly string[]) => keys.filter((key, i) => keys.indexOf(key) !== i);

test('every route of the table is in the declared order exactly once, and the order names no other', () => {
  const keys = table.map(routeOrderKey);
  expect(repeated(keys)).toEqual([]);
  expect(repeated(SPEC_ROUTE_ORDER)).toEqual([]);
  expect(keys.filter((key) => !SPEC_ROUTE_ORDER.includes(key))).toEqual([]);
  expect(SPEC_ROUTE_ORDER.filter((key) => !keys.includes(key))).toEqual([]);
});

test("the document's paths follow the declared order, not the table's", () => {
  const document = buildOpenApi(table);
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
  );
  expect(operations).toEqual(SPEC_ROUTE_ORDER);
  // The whole document, not only its paths: its tags and named schemas come in the same order.
  const reversed = buildOpenApi([...table].reverse());
  expect(JSON.stringify(reversed)).toBe(JSON.stringify(document));
});

/** A router as the API builds one (http/app.ts), over the routes in the order given. */
function routerOf(routes: AnyRoute[]) {
  const router = FindMyWay<HTTPVersion.V1>({ maxParamLength: 16 * 1024 });
  const noHandler = () => undefined;
  for (const route of routes) {
    router.on(route.method, route.path, noHandler, { route });
    if (route.method === 'GET') router.on('HEAD', route.path, noHandler, { route });
  }
  return router;
}

/**
 * Paths a request may send to a route: each parameter as an ordinary value, and as every fixed segment
 * another route has at that place (where a parameter and a fixed segment could both match).
 */
function requestPathsOf(route: AnyRoute): string[] {
  const fixedAt = (position: number) =>
    table.map((other) => other.path.split('/')[position]).filter((segment): segment is string => segment !== undefined && !segment.startsWith(':'));
  let paths = [''];
  route.path
    .split('/')
    .slice(1)
    .forEach((segment, i) => {
      const choices = segment.startsWith(':') ? ['some-value', ...new Set(fixedAt(i + 1))] : [segment];
      paths = paths.flatMap((prefix) => choices.map((choice) => `${prefix}/${choice}`));
    });
  return paths;
}

test('routing finds the same route whatever order the table registers them in', () => {
  const forward = routerOf(table);
  const backward = routerOf([...table].reverse());
  const found = (router: ReturnType<typeof routerOf>, method: string, path: string) =>
    (router.find(method as 'GET', path)?.store as { route: AnyRoute } | undefined)?.route.operationId ?? null;
  const differences: string[] = [];
  for (const route of table) {
    for (const path of requestPathsOf(route)) {
      for (const method of route.method === 'GET' ? ['GET', 'HEAD'] : [route.method]) {
        const ahead = found(forward, method, path);
        const behind = found(backward, method, path);
        if (ahead !== behind) differences.push(`${method} ${path}: ${ahead} / ${behind}`);
      }
    }
    // A route's own path with ordinary values finds the route itself.
    expect(found(backward, route.method, requestPathsOf(route)[0])).toBe(route.operationId);
  }
  expect(differences).toEqual([]);
});
